/**
 * Room in one bind's window, taken by a submit before it goes to the session. Waiting here rather than in the
 * session's own queue keeps every waiting submit in the connector's hands: when the SMSC says ESME_RTHROTTLED, the
 * ones still waiting are held back instead of going out behind the answer that asked to slow down.
 */
export class WindowGate {
  private used = 0;
  private readonly waiting: Array<{ n: number; go(): void }> = [];

  constructor(private readonly size: number) {}

  /** Submits holding room, plus those waiting for it: how busy the bind is. */
  get load(): number {
    return this.used + this.waiting.reduce((sum, w) => sum + w.n, 0);
  }

  /** Waits for room for `parts` submits (at most the whole window) and answers the function that gives it back. */
  async acquire(parts: number): Promise<() => void> {
    const n = Math.max(1, Math.min(parts, this.size));
    if (this.waiting.length > 0 || this.used + n > this.size) {
      await new Promise<void>((go) => this.waiting.push({ n, go }));
    } else {
      this.used += n;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      this.admit();
    };
  }

  private admit(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0]!.n <= this.size) {
      const next = this.waiting.shift()!;
      this.used += next.n;
      next.go();
    }
  }
}
