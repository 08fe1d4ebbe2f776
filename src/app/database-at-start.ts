import type { Logger } from 'pino';
import { storageFailureOf } from '../store/failures.ts';

/** The first wait between two tries, doubled at each try up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5_000;

/**
 * Opens the database, trying again while it does not answer (a server restarting, a failover under way) for up to
 * `waitMs`: nodes started with their database, or restarted during its outage, come up once it answers instead of
 * each failing at once and relying on a supervisor to start them again. Any other error (a wrong password, a
 * migration that fails, a full disk) ends the wait at once: trying again would not change it.
 */
export async function whenDatabaseAnswers<T>(open: () => Promise<T>, waitMs: number, log: Pick<Logger, 'warn'>, clock: Clock = realClock): Promise<T> {
  const deadline = clock.now() + waitMs;
  for (let tries = 1, delay = FIRST_DELAY_MS; ; tries++, delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return await open();
    } catch (err) {
      const failure = storageFailureOf(err);
      if (failure === null) throw err;
      // Told as a failure of the database (one line at the start), whatever the driver threw.
      if (failure.kind !== 'unavailable' || clock.now() + delay > deadline) throw failure;
      log.warn(
        { tries, retryInMs: delay, reason: failure.message },
        `the database does not answer yet; trying again for ${Math.ceil((deadline - clock.now()) / 1000)} s more`,
      );
      await clock.sleep(delay);
    }
  }
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
