import type { Logger } from 'pino';
import type { Expiry } from '../core/messaging/expiry.ts';
import { Loop } from './loop.ts';

/** Sweeps messages whose validity ran out at the operator, every `intervalMs` (at once again after a full batch). */
export function expiryLoop(expiry: Expiry, logger: Logger, intervalMs = 1_000): Loop {
  return new Loop(
    async () => ((await expiry.sweep(Date.now())) >= expiry.batchSize ? Date.now() : null),
    intervalMs,
    (err) => logger.error({ err }, 'expiry sweep failed'),
  );
}
