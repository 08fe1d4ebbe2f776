import type { Logger } from 'pino';
import { Loop } from './loop.ts';

/** A pruning task: deletes what has outlived its retention, in small batches; returns how many rows went. */
export interface PruneTask {
  name: string;
  prune(now: number): Promise<number>;
}

/** Runs the pruning tasks every `intervalMs` (start it with `start(Date.now() + intervalMs)`), so kept data stops growing. */
export function retentionLoop(tasks: readonly PruneTask[], logger: Logger, intervalMs: number): Loop {
  return new Loop(
    async () => {
      for (const task of tasks) {
        const n = await task.prune(Date.now());
        if (n > 0) logger.info({ task: task.name, rows: n }, 'pruned');
      }
      return null;
    },
    intervalMs,
    (err) => logger.error({ err }, 'pruning failed; retrying'),
  );
}
