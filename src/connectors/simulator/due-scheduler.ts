/**
 * Runs `tick` at the earliest time anyone asked for, one tick at a time; each tick returns when it next wants to
 * run (the simulators use it to emit receipts, read reports and call outcomes when they fall due).
 */
export class DueScheduler {
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private ticking: Promise<void> | null = null;
  private halted = true;

  constructor(private readonly tick: () => Promise<number>) {}

  get stopped(): boolean {
    return this.halted;
  }

  start(): void {
    this.halted = false;
    this.at(Date.now());
  }

  async stop(): Promise<void> {
    this.halted = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    await this.ticking;
  }

  /** Asks for a tick at `time` (earlier requests win). */
  at(time: number): void {
    if (this.halted || time >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = time;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.run();
    }, Math.max(0, time - Date.now()));
  }

  private async run(): Promise<void> {
    if (this.ticking || this.halted) return;
    let next = Date.now() + 1_000;
    this.ticking = this.tick().then(
      (n) => {
        next = n;
      },
      () => undefined,
    );
    await this.ticking;
    this.ticking = null;
    this.at(next);
  }
}
