import { isStorageFailure } from '../store/failures.ts';

/**
 * What can go wrong in a use case, in the core's own words. A core error says what kind of failure it is, why, and
 * which field of the input it is about; it carries no HTTP status, legacy code or SMPP command_status: each door maps
 * the kind to its own answer from one table (doors/rest/errors.ts, doors/legacy/errors.ts, doors/smpp/errors.ts).
 */
export const ERROR_KINDS = {
  INVALID_REQUEST: 'Invalid request',
  INVALID_PHONE_NUMBER: 'Invalid phone number',
  TOO_MANY_PARTS: 'Message too long',
  INVALID_SENDER: 'Sender not allowed',
  INVALID_AMOUNT: 'Invalid amount',
  INVALID_DATE: 'Invalid date',
  MISSING_API_KEY: 'Missing API key',
  INVALID_API_KEY: 'Invalid API key',
  INVALID_LOGIN: 'Invalid sign-in',
  FORBIDDEN_ROLE: 'Operation not allowed for this key',
  FORBIDDEN_ORGANISATION: 'Organisation not accessible',
  FORBIDDEN_TRANSFER: 'Transfer not allowed',
  FORBIDDEN_ADMIN: 'Operator key required',
  FORBIDDEN_CHANNEL: 'Channel not accessible with this key',
  FORBIDDEN_CSRF: 'Cross-site request refused',
  CHANNEL_TYPE_MISMATCH: 'Channel type mismatch',
  NOT_FOUND: 'Resource not found',
  CONFLICT: 'Conflict with the current state',
  INSUFFICIENT_FUNDS: 'Insufficient funds',
  IDEMPOTENCY_IN_PROGRESS: 'Request with this Idempotency-Key in progress',
  IDEMPOTENCY_MISMATCH: 'Idempotency-Key reused with another request',
  RATE_LIMITED: 'Too many requests',
  UNAVAILABLE: 'Service unavailable',
  STORAGE_UNAVAILABLE: 'Storage unavailable',
  STORAGE_FULL: 'Insufficient storage',
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

export class CoreError extends Error {
  /**
   * @param reason why, in words (`is required`, `at most 11 characters`)
   * @param field the input field it is about, as a path in the message object's vocabulary (`recipient.to`,
   *   `body.text`, `recipients[3].to`); a door names it in its own terms (REST under `body.`, legacy parameters)
   */
  constructor(
    readonly kind: ErrorKind,
    readonly reason: string = ERROR_KINDS[kind],
    readonly field?: string,
  ) {
    super(field ? `${ERROR_KINDS[kind]}: ${field}: ${reason}` : `${ERROR_KINDS[kind]}: ${reason}`);
    this.name = 'CoreError';
  }

  /** `field: reason`, or the reason alone. */
  get detail(): string {
    return this.field ? `${this.field}: ${this.reason}` : this.reason;
  }

  /** The same error about a field of a nested input (`fallback.` + `body.text`). */
  under(prefix: string): CoreError {
    return this.field ? new CoreError(this.kind, this.reason, `${prefix}${this.field}`) : this;
  }
}

export function fail(kind: ErrorKind, reason?: string, field?: string): never {
  throw new CoreError(kind, reason, field);
}

/** Runs `work`; a core error about a field comes out about `prefix` + that field. */
export async function underField<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw err instanceof CoreError ? err.under(prefix) : err;
  }
}

/** What is left of a rate limit: the limit, what remains of it, and when its window ends (epoch ms). */
export interface Quota {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** Too many requests: refused until `retryAt`; `quota` is the limit that was reached, when one was. */
export class RateLimitedError extends CoreError {
  constructor(
    reason: string,
    readonly retryAt: number,
    readonly quota?: Quota,
  ) {
    super('RATE_LIMITED', reason);
    this.name = 'RateLimitedError';
  }
}

/** How long a client is asked to wait before trying again after a failure of the database, in seconds. */
export const STORAGE_RETRY_AFTER_SECONDS = { STORAGE_UNAVAILABLE: 5, STORAGE_FULL: 30 } as const;

/**
 * The database failed under the request (out of reach, too slow, its disk full): nothing the request asked was done
 * (or, for a send whose commit was lost with its connection, it was checked and found not done) — unless its reason
 * says the change was being committed when the database went: then it may have been made. It may be tried again
 * after `retryAfterSeconds`.
 */
export class StorageError extends CoreError {
  readonly retryAfterSeconds: number;

  constructor(kind: 'STORAGE_UNAVAILABLE' | 'STORAGE_FULL', reason: string, cause?: unknown) {
    super(kind, reason);
    this.name = 'StorageError';
    this.retryAfterSeconds = STORAGE_RETRY_AFTER_SECONDS[kind];
    if (cause !== undefined) this.cause = cause;
  }
}

/**
 * The core error a door answers for `err`: a core error as it is; a failure of the database (the store's
 * StorageFailure) as STORAGE_UNAVAILABLE or STORAGE_FULL; null for anything else (an internal error).
 */
export function asCoreError(err: unknown): CoreError | null {
  if (err instanceof CoreError) return err;
  if (isStorageFailure(err)) {
    return err.kind === 'full'
      ? new StorageError('STORAGE_FULL', 'the disk holding the database is full: nothing was written; try again once space is freed', err)
      : err.outcomeUnknown
        ? new StorageError(
            'STORAGE_UNAVAILABLE',
            'the database became unavailable while the change was being committed: it may or may not have been made; check before trying again',
            err,
          )
        : new StorageError('STORAGE_UNAVAILABLE', 'the database is unavailable: nothing was done; try again shortly', err);
  }
  return null;
}

/** Whether `err` is a failure of the database (as the store or a door tells it). */
export function isStorageError(err: unknown): boolean {
  return err instanceof StorageError || isStorageFailure(err);
}
