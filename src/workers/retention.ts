import type { Logger } from 'pino';
import { Loop } from './loop.ts';

/** A pruning task: deletes what has outlived its retention, in small batches; returns how many rows went. */
export interface PruneTask {
  name: string;
  prune(now: number): Promise<number>;
}

/** Rounds that found nothing to prune double the wait before the next, up to this many times the interval. */
const MAX_QUIET_FACTOR = 16;

/**
 * Runs the pruning tasks every `intervalMs` (start it with `start(Date.now() + intervalMs)`), so kept data stops
 * growing; while rounds find nothing to prune (an idle node), the wait doubles, up to 16 intervals.
 */
export function retentionLoop(tasks: readonly PruneTask[], logger: Logger, intervalMs: number): Loop {
  let wait = intervalMs;
  return new Loop(async () => {
    let pruned = 0;
    try {
      for (const task of tasks) {
        const n = await task.prune(Date.now());
        if (n > 0) logger.info({ task: task.name, rows: n }, 'pruned');
        pruned += n;
      }
      wait = pruned > 0 ? intervalMs : Math.min(wait * 2, intervalMs * MAX_QUIET_FACTOR);
    } catch (err) {
      logger.error({ err }, 'pruning failed; retrying');
      wait = intervalMs;
    }
    return Date.now() + wait;
  }, null);
}
