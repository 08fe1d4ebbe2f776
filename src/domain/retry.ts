/** smsmode's callback schedule: retries 30 s, 2 min, 10 min, 1 h, 5 h and 24 h after the failed attempt. */
export const DEFAULT_WEBHOOK_SCHEDULE_MS: readonly number[] = Object.freeze([30_000, 120_000, 600_000, 3_600_000, 18_000_000, 86_400_000]);

/** Each retry waits its scheduled delay ± this fraction, so receivers that failed together do not retry together. */
export const SCHEDULE_JITTER = 0.1;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ENTRY_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * Parses a retry schedule such as `"30s,2m,10m,1h,5h,24h"` (units ms, s, m, h, d) into delays in milliseconds.
 * Throws naming the offending entry; an empty schedule is an error too.
 */
export function parseSchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 1 && entries[0] === '') {
    throw new Error('retry schedule is empty: expected delays such as "30s,2m,10m,1h"');
  }
  return entries.map((entry) => {
    const match = ENTRY_RE.exec(entry);
    if (!match) {
      throw new Error(`invalid retry schedule entry "${entry}" in "${text}": expected a number followed by ms, s, m, h or d`);
    }
    return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  });
}

/**
 * Delay before the next attempt after `attemptsMade` attempts have failed (1 after the first attempt), with
 * ±10 % jitter; `null` when the schedule is exhausted and the delivery should be marked failed.
 */
export function nextRetryDelay(attemptsMade: number, schedule: readonly number[], random: () => number = Math.random): number | null {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) {
    throw new RangeError(`attemptsMade must be an integer >= 1, got ${attemptsMade}`);
  }
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return null;
  const factor = 1 + (random() * 2 - 1) * SCHEDULE_JITTER;
  return Math.round(base * factor);
}

/**
 * Exponential backoff with full jitter for carrier retries: a uniform delay in [0, min(maxMs, baseMs · 2^(attempt-1))),
 * where `attempt` is the number of failures so far (1 after the first).
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  }
  if (!(baseMs >= 0) || !Number.isFinite(baseMs) || !(maxMs >= 0) || !Number.isFinite(maxMs)) {
    throw new RangeError(`baseMs and maxMs must be finite and >= 0, got ${baseMs} and ${maxMs}`);
  }
  const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}
