import type { Logger } from 'pino';
import type { Expiry } from '../core/messaging/expiry.ts';
import { Loop } from './loop.ts';

/**
 * Ends messages whose validity ran out at the operator, when the next validity ends: the sweep reads when that is
 * after each pass, dispatch tells it when it places a message (`at`), a node that stopped wakes it (its messages are
 * this node's to end), and it looks on its own every `safetyPollMs`.
 */
export function expiryLoop(expiry: Expiry, logger: Logger, safetyPollMs: number): Loop {
  return new Loop(
    () => expiry.pass(Date.now()),
    safetyPollMs,
    (err) => logger.error({ err }, 'expiry sweep failed'),
  );
}
