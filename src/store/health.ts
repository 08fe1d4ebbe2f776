import { StorageFailure } from './failures.ts';

/** How the database is, as this node last saw it. */
export type StoreState =
  /** It answers (or nothing says otherwise). */
  | 'up'
  /** Out of reach: a statement failed for it and a probe since did not answer in time. */
  | 'down'
  /** It answers but cannot write (SQLite's disk is full), until a write succeeds again. */
  | 'full';

export interface StoreHealthOptions {
  /**
   * Checks the database within `timeoutMs`: on PostgreSQL a statement on a connection of the pool, on SQLite a small
   * write when the disk was full (a read otherwise). Rejects when it cannot.
   */
  probe: (timeoutMs: number, write: boolean) => Promise<void>;
  /** How long a probe may take before the database is taken as out of reach. */
  probeTimeoutMs: number;
  /** While down (or full), how often it is probed again (until it answers, or can be written). */
  reprobeMs?: number;
  /** Told of failures, at most once per `logEveryMs` (with how many were not told in between). */
  warn?: (failure: StorageFailure, unreported: number) => void;
  logEveryMs?: number;
  /** false: a failure never makes the store refuse work at once (SQLite: one file, no connection to wait for). */
  failFast?: boolean;
}

/**
 * The database's health as this node sees it. A statement that fails because its connection was lost or refused
 * starts a probe (one at a time, bounded by a short timeout); if the probe fails too, the store is down. A database
 * that did not answer at all in time (a statement past its timeout, no connection within the connect timeout) makes
 * it down at once. While down, work that needs a connection is refused at once (a fast 503 instead of a wait for
 * the timeouts), and the probe runs every half-second; the store is up again after two probes in a row succeeded (a
 * connection that answers once and then freezes, or a database that comes and goes, does not make it flap), when
 * its listeners are told (the workers look at their queues). A full disk makes the store `full` until a write
 * succeeds (a probe writes then).
 */
export class StoreHealth {
  private current: StoreState = 'up';
  private failure: StorageFailure | null = null;
  private probing: Promise<boolean> | null = null;
  /** Probes that succeeded in a row while down. */
  private successes = 0;
  private reprobe: NodeJS.Timeout | null = null;
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private unreported = 0;
  private closed = false;
  private readonly listeners = new Set<(state: StoreState) => void>();
  private readonly reprobeMs: number;
  private readonly logEveryMs: number;

  constructor(private readonly options: StoreHealthOptions) {
    this.reprobeMs = options.reprobeMs ?? 500;
    this.logEveryMs = options.logEveryMs ?? 10_000;
  }

  get state(): StoreState {
    return this.current;
  }

  /** The failure that made the store down or full. */
  get lastFailure(): StorageFailure | null {
    return this.failure;
  }

  /** Told when the state changes. */
  onChange(listener: (state: StoreState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Throws at once while the database is known to be out of reach. */
  admit(): void {
    if (this.current === 'down' && this.options.failFast !== false) {
      throw new StorageFailure(
        'unavailable',
        `the database is unavailable: ${this.failure?.message.replace(/^the database is unavailable: /, '') ?? 'it does not answer'}`,
        {
          cause: this.failure,
        },
      );
    }
  }

  /** A statement failed for the database. */
  failed(failure: StorageFailure): void {
    this.report(failure);
    if (failure.kind === 'full') {
      this.failure = failure;
      this.set('full');
      this.scheduleReprobe();
      return;
    }
    if (failure.noAnswer && this.current !== 'full') {
      this.failure = failure;
      this.down();
      return;
    }
    if (this.current === 'up') void this.check();
  }

  /**
   * A connection failed outside any statement (an idle one ended by the server, a proxy's reset): the pool drops it
   * and makes another when needed. Logged like the failures of statements.
   */
  connectionLost(err: unknown): void {
    const cause = err instanceof Error ? err : new Error(String(err));
    this.report(new StorageFailure('unavailable', `a database connection was lost: ${cause.message}`, { cause }));
  }

  /**
   * Whether the database answers now, within the probe's timeout: a probe runs, or the one under way is awaited
   * (never more than one at a time).
   */
  async ready(): Promise<{ ready: true } | { ready: false; reason: string }> {
    const ok = await this.check();
    if (ok) return { ready: true };
    const reason = this.current === 'full' ? 'the disk holding the database is full' : 'the database does not answer';
    return { ready: false, reason: this.failure ? `${reason}: ${this.failure.message}` : reason };
  }

  /** Runs a probe, or waits for the one under way; answers whether the store is up after it. */
  check(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.probing ??= this.probe().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  close(): void {
    this.closed = true;
    if (this.reprobe) clearTimeout(this.reprobe);
    this.reprobe = null;
  }

  private async probe(): Promise<boolean> {
    const timeoutMs = this.options.probeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StorageFailure('unavailable', `the database did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const full = this.current === 'full';
      await Promise.race([this.options.probe(timeoutMs, full), timeout]);
      if (this.current === 'full') this.up();
      else if (this.current === 'down' && ++this.successes >= 2) this.up();
      if (this.current === 'down') this.scheduleReprobe();
      return this.current === 'up';
    } catch (err) {
      const failure =
        err instanceof StorageFailure
          ? err
          : new StorageFailure(this.current === 'full' ? 'full' : 'unavailable', `the database check failed: ${(err as Error).message}`, { cause: err });
      this.failure = failure;
      if (this.current !== 'full') this.down();
      else this.scheduleReprobe();
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private scheduleReprobe(): void {
    if (this.reprobe || this.closed) return;
    this.reprobe = setTimeout(() => {
      this.reprobe = null;
      if (this.current !== 'up') void this.check();
    }, this.reprobeMs);
    this.reprobe.unref();
  }

  private down(): void {
    this.successes = 0;
    this.set('down');
    this.scheduleReprobe();
  }

  private up(): void {
    this.failure = null;
    this.successes = 0;
    this.set('up');
  }

  private set(state: StoreState): void {
    if (this.current === state) return;
    this.current = state;
    for (const l of this.listeners) l(state);
  }

  /** Logs a failure, at most once per logEveryMs: a flood of them (every request while the database is away) is one line. */
  private report(failure: StorageFailure): void {
    const now = Date.now();
    if (now - this.lastLogAt < this.logEveryMs) {
      this.unreported++;
      return;
    }
    this.lastLogAt = now;
    const unreported = this.unreported;
    this.unreported = 0;
    this.options.warn?.(failure, unreported);
  }
}
