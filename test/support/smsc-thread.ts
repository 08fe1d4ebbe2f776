// An SMSC that runs in a thread of its own, for tests that measure when submits reach it (rates): an SMSC on the
// test's own thread notes a submit only when that thread is free to read it, so a pause of the Tern in the same
// process (a collection, a batch being written) would move submits into the next second as it counts them.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface ThreadArrival {
  /** When the SMSC's thread read it. */
  at: number;
  /** The earliest it may have come: earlier than `at` when the thread had just run again after the machine stopped it. */
  notBefore: number;
  /** Which connection carried it (numbered from 1 as they were accepted). */
  connection: number;
}

export class ThreadSmsc {
  private constructor(
    private readonly worker: Worker,
    readonly port: number,
  ) {}

  static async start(): Promise<ThreadSmsc> {
    const worker = new Worker(new URL('./smsc-thread.worker.mjs', import.meta.url));
    const [first] = (await once(worker, 'message')) as [{ port: number }];
    return new ThreadSmsc(worker, first.port);
  }

  /** The submits received so far, the binds open now, and how long in all the machine did not run the SMSC's thread. */
  async state(): Promise<{ arrivals: ThreadArrival[]; bound: number; stalledMs: number }> {
    const answer = once(this.worker, 'message') as Promise<[{ arrivals: ThreadArrival[]; bound: number; stalledMs: number }]>;
    this.worker.postMessage('state');
    return (await answer)[0];
  }

  async close(): Promise<void> {
    const exited = once(this.worker, 'exit');
    this.worker.postMessage('close');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
    await this.worker.terminate();
  }
}
