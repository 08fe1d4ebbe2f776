import type { Logger } from 'pino';
import type { Dispatch } from '../core/messaging/dispatch.ts';
import { Loop } from './loop.ts';

/**
 * The dispatcher: runs dispatch passes whenever messages may be due — when accepts or retries are committed (here
 * or, on PostgreSQL, on another node), when the earliest queued message falls due, and on a slow safety poll.
 */
export function dispatcherLoop(dispatch: Dispatch, logger: Logger, safetyPollMs = 5_000): Loop {
  const loop: Loop = new Loop(
    async () => {
      for (;;) {
        const n = await dispatch.pass(Date.now());
        if (n < dispatch.batchSize || loop.isStopped) break;
      }
      return dispatch.nextDue(Date.now());
    },
    safetyPollMs,
    (err) => logger.error({ err }, 'dispatcher pass failed; retrying'),
  );
  return loop;
}
