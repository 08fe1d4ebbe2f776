import { isStorageError } from '../core/errors.ts';

/** The longest a timer can wait (setTimeout fires at once past it); a pass asked for later runs then, early. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A pass that failed (the database was out of reach) is tried again this long after, unless woken sooner. */
const RETRY_FAILED_MS = 5_000;

/** Retries are looked for on this grid of the wall clock (see `onRetryGrid`). */
export const RETRY_GRID_MS = 1_000;

/**
 * The time a pass looking for retries runs: `time` rounded up to the next second of the wall clock. Deliveries
 * retried with backoff and jitter fall due at scattered milliseconds; a pass at each would run one claim per retry
 * on every node (thousands a minute for a customer endpoint that is down). On the grid, each node looks at most
 * once a second and claims all that fell due together, and the nodes look at the same instants.
 */
export function onRetryGrid(time: number): number;
export function onRetryGrid(time: number | null): number | null;
export function onRetryGrid(time: number | null): number | null {
  return time === null ? null : Math.ceil(time / RETRY_GRID_MS) * RETRY_GRID_MS;
}

/**
 * Runs `pass` whenever there may be work, one pass at a time: at once when woken (new work was committed, here or
 * on another node), again right after a pass if woken while it ran, at the time the pass asks for (its next due
 * work), a little later when a pass failed, and otherwise every `safetyMs` — a slow poll that only matters if a
 * wake-up was lost (null: none of its own, something else wakes it then).
 */
export class Loop {
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private rerun = false;
  private stopped = true;
  private current: Promise<void> = Promise.resolve();

  constructor(
    /** Does the work that is due; resolves with when it next wants to run (null: nothing scheduled). */
    private readonly pass: () => Promise<number | null | void>,
    private readonly safetyMs: number | null,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts with a pass now, or at `firstAt`. */
  start(firstAt?: number): void {
    this.stopped = false;
    if (firstAt === undefined) this.wake();
    else this.at(firstAt);
  }

  /** Stops scheduling and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.current;
  }

  /** Run a pass now (or right after the one running). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.clearTimer();
    this.running = true;
    this.rerun = false;
    let next: number | null = null;
    this.current = this.pass()
      .then(
        (n) => {
          next = typeof n === 'number' ? n : null;
        },
        (err: unknown) => {
          next = Date.now() + RETRY_FAILED_MS;
          // The database's failures are told by the store, once for a flood of them (see store/health.ts); the
          // store wakes the workers when it answers again.
          if (!isStorageError(err)) this.onError(err);
        },
      )
      .finally(() => {
        this.running = false;
        if (this.stopped) return;
        if (this.rerun) this.wake();
        else this.at(Math.min(next ?? Number.POSITIVE_INFINITY, this.safetyMs === null ? Number.POSITIVE_INFINITY : Date.now() + this.safetyMs));
      });
  }

  /** Asks for a pass at `time` (the earliest request wins). */
  at(time: number): void {
    if (this.stopped || Number.isNaN(time) || time === Number.POSITIVE_INFINITY || time >= this.timerAt) return;
    if (this.running) {
      if (time <= Date.now()) this.rerun = true;
      else this.schedule(time);
      return;
    }
    this.schedule(time);
  }

  private schedule(time: number): void {
    this.clearTimer();
    this.timerAt = time;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.wake();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, time - Date.now())),
    );
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}
