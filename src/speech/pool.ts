import { Worker } from 'node:worker_threads';

/** What a pool worker answers for each job: its result, or why it failed. */
export type WorkerAnswer<R> = { id: number; ok: true; result: R } | { id: number; ok: false; code: string; message: string };

/** A job that failed in its worker (`code` from the worker), was killed by its time limit, or lost with its worker. */
export class WorkerJobError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'WorkerJobError';
  }
}

export interface WorkerPoolOptions {
  /** The worker's module (TypeScript is fine: it is loaded through `worker-entry.mjs`). */
  entry: URL;
  /** Workers at most; each is started when first needed, then kept (or stopped after `idleMs` without a job). */
  size: number;
  /** A job still running after this long is given up and its worker replaced (a synthesiser that runs wild). */
  timeoutMs: number;
  /**
   * A worker with no job for this long is stopped, and started again when next needed: a loaded synthesiser holds
   * tens of megabytes that a node sending no voice should give back. Unset: workers are kept.
   */
  idleMs?: number;
}

interface Job<T, R> {
  id: number;
  payload: T;
  transfer: ArrayBuffer[];
  resolve(result: R): void;
  reject(err: Error): void;
}

interface Slot<T, R> {
  worker: Worker;
  /** The worker's module is loaded (its jobs' time limit runs from then). */
  ready: boolean;
  job: Job<T, R> | null;
  timer: NodeJS.Timeout | null;
  idle: NodeJS.Timeout | null;
}

const ENTRY = new URL('./worker-entry.mjs', import.meta.url);

/**
 * A fixed number of worker threads running one module, each taking one job at a time; jobs wait in arrival order
 * for a free worker. CPU-heavy work (speech synthesis) runs there so the HTTP thread never waits for it. A worker
 * that dies or overruns its time limit fails only its own job and is replaced for the next one.
 */
export class WorkerPool<T, R> {
  private readonly slots: Array<Slot<T, R>> = [];
  private readonly queue: Array<Job<T, R>> = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError(`size must be a positive integer, got ${options.size}`);
    if (options.idleMs !== undefined && !(options.idleMs > 0)) throw new RangeError(`idleMs must be positive, got ${options.idleMs}`);
  }

  /** Runs one job on the next free worker; `transfer` lists buffers handed over rather than copied. */
  run(payload: T, transfer: ArrayBuffer[] = []): Promise<R> {
    if (this.closed) return Promise.reject(new WorkerJobError('CLOSED', 'the worker pool is closed'));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, payload, transfer, resolve, reject });
      this.pump();
    });
  }

  /** Jobs waiting for a worker, workers busy, and workers started (busy or idle). */
  get load(): { waiting: number; busy: number; workers: number } {
    return { waiting: this.queue.length, busy: this.slots.filter((s) => s.job !== null).length, workers: this.slots.length };
  }

  /** Stops the workers that have no job now (they are started again when needed). */
  stopIdle(): void {
    for (const slot of this.slots.filter((s) => s.job === null)) this.remove(slot);
  }

  /** Stops every worker; jobs still waiting or running fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new WorkerJobError('CLOSED', 'the worker pool is closed'));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        if (slot.idle) clearTimeout(slot.idle);
        this.settle(slot, new WorkerJobError('CLOSED', 'the worker pool is closed'));
        await slot.worker.terminate();
      }),
    );
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === null);
      if (!slot && this.slots.length < this.options.size) slot = this.spawn();
      if (!slot) return;
      const job = this.queue.shift()!;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.job = job;
      slot.worker.ref();
      if (slot.ready) this.startTimer(slot);
      slot.worker.postMessage({ id: job.id, payload: job.payload }, job.transfer);
    }
  }

  private startTimer(slot: Slot<T, R>): void {
    slot.timer = setTimeout(
      () => this.replace(slot, new WorkerJobError('TIMEOUT', `did not finish within ${this.options.timeoutMs} ms`)),
      this.options.timeoutMs,
    );
  }

  private spawn(): Slot<T, R> {
    const worker = new Worker(ENTRY, { workerData: { entry: this.options.entry.href } });
    worker.unref();
    const slot: Slot<T, R> = { worker, ready: false, job: null, timer: null, idle: null };
    worker.on('message', (answer: WorkerAnswer<R> | { ready: true }) => {
      if ('ready' in answer) {
        slot.ready = true;
        if (slot.job && !slot.timer) this.startTimer(slot);
        return;
      }
      const job = slot.job;
      if (!job || job.id !== answer.id) return;
      this.settle(slot, answer.ok ? null : new WorkerJobError(answer.code, answer.message), answer.ok ? answer.result : undefined);
      this.pump();
    });
    worker.on('error', (err) => this.replace(slot, new WorkerJobError('WORKER_FAILED', err.message)));
    worker.on('exit', (code) => this.replace(slot, new WorkerJobError('WORKER_FAILED', `the worker stopped (exit code ${code})`)));
    this.slots.push(slot);
    return slot;
  }

  /** Ends the slot's job (with its result, or failed) and frees the slot. */
  private settle(slot: Slot<T, R>, error: Error | null, result?: R): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    slot.job = null;
    if (!this.closed) {
      slot.worker.unref();
      this.stopWhenIdle(slot);
    }
    if (!job) return;
    if (error) job.reject(error);
    else job.resolve(result as R);
  }

  private stopWhenIdle(slot: Slot<T, R>): void {
    if (this.options.idleMs === undefined) return;
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      slot.idle = null;
      if (slot.job === null) this.remove(slot);
    }, this.options.idleMs);
    slot.idle.unref();
  }

  /** A worker that failed or overran: its job fails, the worker goes, and a new one is started when needed. */
  private replace(slot: Slot<T, R>, error: Error): void {
    if (!this.slots.includes(slot)) return;
    this.settle(slot, error);
    this.remove(slot);
    this.pump();
  }

  private remove(slot: Slot<T, R>): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    slot.worker.removeAllListeners('exit');
    void slot.worker.terminate();
  }
}
