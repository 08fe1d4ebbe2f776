import type { Store } from '../store/db.ts';
import { takeFromSlidingSecond } from '../store/rate-windows.ts';
import { slidingRetryAt, SLIDING_SLOT_MS, spanSlots } from '../domain/sliding-second.ts';

export type PaceResult = { ok: true } | { ok: false; retryAt: number };

/** Slots after its own in which a unit the database granted may still be used (it may arrive late). */
const LATE_SLOTS = 1;
/**
 * Units that free up this soon are waited for here rather than refused; a refusal asks to come back this much before
 * its units free up. A message put back to wait takes a while to come back (claimed, routed, handed to its
 * connector); came back after its units freed up, it would leave the rest of their span unused, and the rate would
 * fall short by that much at every turn.
 */
const WAIT_MS = 100;

interface Shared {
  /** Units granted and not used yet, by the slot they were granted in (used oldest first; they lapse after LATE_SLOTS). */
  held: Map<number, number>;
  /** Units the takes waiting for the request about to be made want in all, while it gathers them (`gathering`). */
  wanted: number;
  gathering: boolean;
  /** The one request for more units in flight; concurrent takes wait for it. */
  fetching: Promise<void> | null;
  /** The cluster had no room in the slot `spentIn` until `spentUntil`. */
  spentIn: number;
  spentUntil: number;
}

/**
 * A rate that holds in every sliding second, for the whole cluster: an operator connection's `tps`. A limit counted
 * in clock seconds lets through a second's worth at the end of one and another at the start of the next — twice the
 * rate within one second. Here a second is cut into slots, and a unit is granted in a slot only while the span of
 * slots ending with it (a second and a slot) holds fewer than the rate: any second, wherever it starts, lies within
 * one span, so none holds more. It costs a slot's share of the rate (a twentieth) when the rate is the bottleneck.
 *
 * With one node (SQLite) the slots are counted in memory. With several (PostgreSQL) a node takes units for the
 * current slot from the database, for every take waiting at once, under a lock of the key; a unit it does not use in
 * its slot may still go in the next one (granted late by a slow database), which spans count in as well. Units it
 * holds longer lapse: the cluster then stays below the rate, never above.
 */
export class SlidingSecondLimiter {
  private readonly counts = new Map<string, Map<number, number>>();
  private readonly shared = new Map<string, Shared>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    /** How long a take waits for units about to free up (WAIT_MS; a test's clock does not move by itself: 0). */
    private readonly waitMs = WAIT_MS,
  ) {}

  /**
   * Takes `n` units of `key` at `perSecond` — waiting up to WAIT_MS for them to free up — or says when to try again
   * (a little before they free up).
   */
  async take(key: string, n: number, perSecond: number): Promise<PaceResult> {
    // More than the rate at once never fits (as a message of more parts than the connector's tps).
    if (n > perSecond) return { ok: false, retryAt: this.now() + 1_000 };
    const deadline = this.now() + this.waitMs;
    for (let waits = 0; ; waits++) {
      const r = this.store.dialect === 'postgres' ? await this.takeShared(key, n, perSecond) : this.takeHere(key, n, perSecond);
      if (r.ok) return r;
      const now = this.now();
      if (r.retryAt > deadline || waits >= 3) return { ok: false, retryAt: Math.max(now + 1, r.retryAt - this.waitMs) };
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, r.retryAt - now)));
    }
  }

  private takeHere(key: string, n: number, perSecond: number): PaceResult {
    const slot = Math.floor(this.now() / SLIDING_SLOT_MS);
    let slots = this.counts.get(key);
    if (!slots) {
      slots = new Map();
      this.counts.set(key, slots);
      if (this.counts.size > 10_000) this.forgetOld(slot);
    }
    const span = spanSlots();
    let used = 0;
    for (const [s, count] of slots) {
      if (s <= slot - span) slots.delete(s);
      else used += count;
    }
    if (used + n <= perSecond) {
      slots.set(slot, (slots.get(slot) ?? 0) + n);
      return { ok: true };
    }
    return {
      ok: false,
      retryAt: slidingRetryAt(
        [...slots].map(([s, count]) => ({ slot: s, count })),
        slot,
        n,
        perSecond,
        span,
      ),
    };
  }

  private async takeShared(key: string, n: number, perSecond: number): Promise<PaceResult> {
    let l = this.shared.get(key);
    if (!l) {
      l = { held: new Map(), wanted: 0, gathering: false, fetching: null, spentIn: -1, spentUntil: 0 };
      this.shared.set(key, l);
      if (this.shared.size > 10_000) this.forgetOld(Math.floor(this.now() / SLIDING_SLOT_MS));
    }
    for (;;) {
      const slot = Math.floor(this.now() / SLIDING_SLOT_MS);
      for (const s of l.held.keys()) if (s < slot - LATE_SLOTS) l.held.delete(s);
      if (spend(l.held, n)) return { ok: true };
      if (l.spentIn === slot) return { ok: false, retryAt: l.spentUntil };
      if (l.fetching === null) {
        const local = l;
        local.wanted = 0;
        local.gathering = true;
        const fetching = (async () => {
          // A tick later: takes that arrive together ask together, in one request.
          await Promise.resolve();
          local.gathering = false;
          const held = [...local.held.values()].reduce((sum, c) => sum + c, 0);
          const want = Math.max(1, local.wanted - held);
          const r = await takeFromSlidingSecond(this.store, key, slot * SLIDING_SLOT_MS, spanSlots(LATE_SLOTS), perSecond, {
            need: Math.min(n, want),
            want: Math.max(want, Math.ceil(perSecond / 20)),
          });
          if (r.granted > 0) local.held.set(slot, (local.held.get(slot) ?? 0) + r.granted);
          if (r.retryAt !== null) {
            local.spentIn = slot;
            local.spentUntil = r.retryAt;
          }
        })();
        const done = () => {
          if (local.fetching === fetching) local.fetching = null;
        };
        l.fetching = fetching;
        fetching.then(done, done);
      }
      if (l.gathering) l.wanted += n;
      await l.fetching;
    }
  }

  private forgetOld(current: number): void {
    const span = spanSlots(LATE_SLOTS);
    for (const [k, slots] of this.counts) if (Math.max(...slots.keys()) <= current - span) this.counts.delete(k);
    for (const [k, l] of this.shared) if (l.fetching === null && [...l.held.keys()].every((s) => s < current - LATE_SLOTS)) this.shared.delete(k);
  }
}

/** Takes `n` units from those held, the oldest first; false (nothing taken) when they hold fewer. */
function spend(held: Map<number, number>, n: number): boolean {
  let total = 0;
  for (const c of held.values()) total += c;
  if (total < n) return false;
  let left = n;
  for (const [s, c] of [...held].sort((a, b) => a[0] - b[0])) {
    const used = Math.min(c, left);
    left -= used;
    if (used === c) held.delete(s);
    else held.set(s, c - used);
    if (left === 0) break;
  }
  return true;
}
