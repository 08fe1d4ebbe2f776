import { isStorageError } from './errors.ts';

/**
 * Groups concurrent requests into one batch, so a burst of N writes costs one transaction (one fsync) instead of
 * N. The first item of an idle committer is flushed on the next turn of the event loop; items that arrive while a
 * flush runs wait for the next one, so batches grow with the load and latency stays at one transaction when idle.
 * An item that makes its batch fail fails alone: the others are flushed again without it. A failure of the database
 * itself (lost, out of reach, its disk full) fails the whole batch at once: flushing its halves again would only
 * meet it again, each after its own wait.
 */
export class GroupCommitter<T, R> {
  private queue: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private flushing = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 256,
    /**
     * How long an idle committer waits for company before flushing its first item (0: the next turn of the event
     * loop). For writes nobody waits on (outcomes of work already done), a few milliseconds turn a trickle of
     * single-row transactions into batches.
     */
    private readonly lingerMs = 0,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  submitMany(items: T[]): Promise<R[]> {
    return Promise.all(items.map((i) => this.submit(i)));
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Resolves when nothing is queued or being flushed. */
  idle(): Promise<void> {
    if (!this.flushing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      void this.run();
    };
    if (this.lingerMs > 0 && this.queue.length < this.maxBatch) setTimeout(go, this.lingerMs);
    else setImmediate(go);
  }

  /**
   * Flushes a batch; when it fails, its halves are flushed on their own, down to single items, so one bad item
   * (or one that the database refuses) fails alone and the others go through. The flush must be all-or-nothing.
   */
  private async commit(batch: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }>): Promise<void> {
    try {
      const results = await this.flush(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1 || isStorageError(err)) {
        for (const b of batch) b.reject(err);
        return;
      }
      const half = batch.length >> 1;
      await this.commit(batch.slice(0, half));
      await this.commit(batch.slice(half));
    }
  }

  private async run(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    while (this.queue.length > 0) await this.commit(this.queue.splice(0, this.maxBatch));
    this.flushing = false;
    const waiters = this.idleWaiters.splice(0);
    for (const w of waiters) w();
  }
}
