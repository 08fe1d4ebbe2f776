/**
 * Runs `pass` whenever there may be work: at once when woken, again right after if woken while running, and
 * every `idleMs` otherwise (work that became due, or was written by another node). One pass at a time.
 */
export class WakeableLoop {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private rerun = false;
  private stopped = true;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly idleMs: number,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Stops scheduling and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = true;
    this.rerun = false;
    this.current = this.pass().finally(() => {
      this.running = false;
      if (this.stopped) return;
      if (this.rerun) this.wake();
      else this.timer = setTimeout(() => this.wake(), this.idleMs);
    });
  }
}
