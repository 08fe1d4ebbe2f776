import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  /** Between two checkpoints while the log grows fast (50). */
  busyMs?: number;
  /** Between two looks while it does not grow (1,000), and at most between two checkpoints while it grows slowly. */
  idleMs?: number;
  /** Frames (pages) the log is let grow by between two checkpoints, at the rate it grows (1,000: about 4 MiB). */
  targetFrames?: number;
  /** An idle log whose file is larger than this is truncated to nothing (bytes; default 1 MiB). */
  truncateBytes?: number;
  /** Told when a checkpoint failed (the writer's own checkpoints still bound the log). */
  onError?: (message: string) => void;
}

/**
 * Copies SQLite's write-ahead log back into the database from a thread of its own, so the thread that serves requests
 * seldom does: a checkpoint run by a commit (SQLite's automatic one) copies every page written since the last one and
 * syncs the file, a stall of tens to hundreds of milliseconds that every request waiting meanwhile shares. Here the
 * log is copied a little at a time beside the writer, until all of it is, and the writer's next transaction starts it
 * over from the beginning; the writer's own checkpoint, left on at a higher threshold, bounds the log if this thread
 * falls behind. How often follows how fast the log grows (see the worker): every 50 ms under load, up to once a second
 * at a trickle of writes.
 */
export class SqliteCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<unknown>;
  private done = 0;
  private truncations = 0;

  constructor(file: string, options: CheckpointerOptions = {}) {
    this.worker = new Worker(new URL('./sqlite-checkpoints.worker.mjs', import.meta.url), {
      workerData: {
        file,
        busyMs: options.busyMs ?? 50,
        idleMs: options.idleMs ?? 1_000,
        targetFrames: options.targetFrames ?? 1_000,
        truncateBytes: options.truncateBytes ?? 1024 * 1024,
      },
    });
    this.worker.unref();
    this.worker.on('message', (m: { error?: string; checkpoints?: number; truncated?: number }) => {
      if (m.error) options.onError?.(m.error);
      if (m.checkpoints !== undefined) this.done += m.checkpoints;
      if (m.truncated !== undefined) this.truncations = m.truncated;
    });
    // A checkpointer that failed to start (the file went away) leaves the writer's own checkpoints to do the work.
    this.worker.on('error', (err) => options.onError?.(err.message));
    this.exited = once(this.worker, 'exit').catch(() => undefined);
  }

  /** Checkpoints run that found frames to copy (a look at a log that grows runs one or a few in a row). */
  get checkpoints(): number {
    return this.done;
  }

  /** Times the idle log's file was truncated. */
  get truncated(): number {
    return this.truncations;
  }

  async stop(): Promise<void> {
    // Kept out of the process's reasons to live while it runs; waited for while it stops.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
