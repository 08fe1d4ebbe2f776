/**
 * Failures of the database itself, as opposed to failures of a statement: the connection was lost or could not be
 * made, the database did not answer in time, or it has no room left to write. The request that met one did nothing
 * wrong; it may succeed later. Every error of the drivers that means one of these comes out of the store as a
 * StorageFailure (see guarded-dialect.ts), its original error as `cause`.
 */
export type StorageFailureKind =
  /** The database is out of reach, refused the connection, or did not answer in time. */
  | 'unavailable'
  /** The disk holding the database is full (SQLite), or the database refused a write for lack of space. */
  | 'full';

export class StorageFailure extends Error {
  /**
   * The database did not answer at all within its bound (no connection in time, a statement unanswered past the
   * statement timeout): not a lost connection that a new one replaces, but a database that is away or frozen.
   */
  readonly noAnswer: boolean;
  /**
   * The failure met a COMMIT sent to a database server: the connection went while the server may have committed, so
   * what the transaction wrote may be there or not. Otherwise nothing the failed transaction wrote was kept.
   */
  readonly outcomeUnknown: boolean;

  constructor(
    readonly kind: StorageFailureKind,
    message: string,
    options?: { cause?: unknown; noAnswer?: boolean; outcomeUnknown?: boolean },
  ) {
    super(message, options);
    this.name = 'StorageFailure';
    this.noAnswer = options?.noAnswer ?? false;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }

  /** The same failure, met by a COMMIT whose outcome cannot be known (see outcomeUnknown). */
  duringCommit(): StorageFailure {
    return new StorageFailure(this.kind, this.message, { cause: this.cause, noAnswer: this.noAnswer, outcomeUnknown: true });
  }
}

export function isStorageFailure(err: unknown): err is StorageFailure {
  return err instanceof StorageFailure;
}

/**
 * PostgreSQL's codes that say the server, not the statement, failed: connection exceptions (class 08), the server
 * shutting down or starting (57P01–57P03), a statement cancelled by `statement_timeout` (57014) or a lock it waited
 * for too long (55P03), too many connections (53300), out of disk or memory (53100, 53200), sessions ended for being
 * idle (25P03, 57P05), a read-only server (25006: a replica answering while a failover is under way).
 */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '57P05', '57014', '55P03', '53300', '53200', '25P03', '25006', '58000', '58030']);
const PG_FULL = new Set(['53100']);

/** Errors of the socket beneath a connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT', // a Unix socket that is not there (the server is down)
]);

/** What node-postgres and its pool say when a connection is lost or cannot be used. */
const PG_CLIENT_MESSAGES = [/^Connection terminated(?! due to connection timeout)/, /not queryable$/, /^Cannot use a pool after calling end on the pool$/];
/** What they say when the database did not answer in time: a statement, a new connection, a connection of the pool. */
const PG_NO_ANSWER_MESSAGES = [
  /^Query read timeout$/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Connection terminated due to connection timeout$/,
];

/** SQLite's codes: no room on the disk (a write that failed to reach the disk is the same for the caller). */
const SQLITE_FULL_CODES = /^SQLITE_(FULL|IOERR(_\w+)?)$/;
/** The database is locked by another connection past busy_timeout, or could not be opened. */
const SQLITE_UNAVAILABLE_CODES = /^SQLITE_(BUSY(_\w+)?|CANTOPEN(_\w+)?|PROTOCOL|NOLFS)$/;

/**
 * The StorageFailure an error of a driver stands for, or null when it is an error of the statement (a constraint,
 * bad SQL, a deadlock) that the caller handles as before.
 */
export function storageFailureOf(err: unknown): StorageFailure | null {
  if (err instanceof StorageFailure) return err;
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) {
      if (SQLITE_FULL_CODES.test(code)) return new StorageFailure('full', `the database cannot write: ${err.message} (${code})`, { cause: err });
      if (SQLITE_UNAVAILABLE_CODES.test(code))
        return new StorageFailure('unavailable', `the database is unavailable: ${err.message} (${code})`, { cause: err });
      return null;
    }
    if (PG_FULL.has(code)) return new StorageFailure('full', `the database cannot write: ${err.message} (${code})`, { cause: err });
    if (code.startsWith('08') || PG_UNAVAILABLE.has(code) || SOCKET_CODES.has(code)) {
      return new StorageFailure('unavailable', `the database is unavailable: ${err.message} (${code})`, { cause: err });
    }
  }
  if (PG_NO_ANSWER_MESSAGES.some((m) => m.test(err.message))) {
    return new StorageFailure('unavailable', `the database did not answer in time: ${err.message}`, { cause: err, noAnswer: true });
  }
  if (PG_CLIENT_MESSAGES.some((m) => m.test(err.message)))
    return new StorageFailure('unavailable', `the database is unavailable: ${err.message}`, { cause: err });
  return null;
}
