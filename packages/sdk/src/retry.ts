/** How a client tries a request again. */
export interface RetryOptions {
  /** Tries after the first (default 4); 0 never retries. */
  retries?: number;
  /** The first backoff, doubled for each further try (default 250 ms). */
  baseDelayMs?: number;
  /** The longest single wait, Retry-After included (default 30 s). */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { retries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const value = header?.trim() ?? '';
  if (value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * The wait before try `attempt` (1 for the first retry): what Retry-After asks for when the server said, else an
 * exponential backoff with full jitter (clients told to retry at once do not all come back in the same instant).
 */
export function retryDelayMs(attempt: number, retryAfter: string | null, options: Required<RetryOptions>, random = Math.random, now = Date.now()): number {
  const asked = retryAfterMs(retryAfter, now);
  if (asked !== undefined) return Math.min(options.maxDelayMs, asked);
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Whether an answer is worth trying again. A 429 was refused before anything was done; a 503 and a 409 for an
 * Idempotency-Key still in progress only when the request is safe to repeat (a read, or a send with its key).
 */
export function retryableStatus(status: number, errorCode: string | undefined, repeatable: boolean): boolean {
  if (status === 429) return true;
  if (!repeatable) return false;
  return status === 502 || status === 503 || status === 504 || (status === 409 && errorCode === '409.003');
}
