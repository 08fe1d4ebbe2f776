/**
 * A rate over every sliding second, counted in slots: a unit is granted in a slot while that slot and the ones
 * before it in its span hold fewer units than the rate. A span covers a second and one slot (SLIDING_SLOTS + 1
 * slots), and any second [t, t + 1 s) lies within one span, so no second, wherever it starts, holds more than the
 * rate. Units granted in a slot and used in the next (granted by a database on another node, and arriving late)
 * need one slot more in every span: `spanSlots(1)`.
 */
export const SLIDING_SLOT_MS = 50;
export const SLIDING_SLOTS = 1_000 / SLIDING_SLOT_MS;

/** Slots in a span when units may be used up to `late` slots after the one they were granted in. */
export function spanSlots(late = 0): number {
  return SLIDING_SLOTS + 1 + late;
}

/**
 * When `n` more units fit in the span (of `span` slots) ending with the current slot, given what its slots hold: the
 * moment enough of the oldest slots have left it. More than `limit` at once never fits; the next slot is answered.
 */
export function slidingRetryAt(slots: ReadonlyArray<{ slot: number; count: number }>, current: number, n: number, limit: number, span = spanSlots()): number {
  const inSpan = slots.filter((s) => s.slot > current - span && s.slot <= current).sort((a, b) => a.slot - b.slot);
  let used = inSpan.reduce((sum, s) => sum + s.count, 0);
  if (n <= limit) {
    for (const s of inSpan) {
      used -= s.count;
      // Slot s leaves the span once the current slot is s + span.
      if (used + n <= limit) return Math.max(current + 1, s.slot + span) * SLIDING_SLOT_MS;
    }
  }
  return (current + 1) * SLIDING_SLOT_MS;
}
