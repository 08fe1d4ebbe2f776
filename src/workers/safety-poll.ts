import type { Logger } from 'pino';
import type { WorkQueues } from '../core/work-queues.ts';
import { Loop } from './loop.ts';

/**
 * The safety net behind the wake-ups: every `intervalMs` one look at all the work queues wakes this node's workers of
 * those holding work due and held by no one, which only a lost wake-up leaves there.
 */
export class SafetyPoll {
  private readonly loop: Loop;

  constructor(
    queues: WorkQueues,
    private readonly intervalMs: number,
    logger: Logger,
  ) {
    this.loop = new Loop(
      async () => {
        const found = await queues.wakeWhereDue(Date.now());
        if (found.length > 0) logger.debug({ queues: found }, 'work found waiting without a wake-up');
      },
      intervalMs,
      (err) => logger.error({ err }, 'looking for work left waiting failed; retrying'),
    );
  }

  /** The first look comes at `firstAt` (default: an interval from now; workers start with a pass of their own). */
  start(firstAt = Date.now() + this.intervalMs): void {
    this.loop.start(firstAt);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
