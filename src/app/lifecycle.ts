import type { Logger } from 'pino';
import { isStorageError } from '../core/errors.ts';
import type { Store } from '../store/db.ts';

/** One part of a running node, with what it does when the node starts and when it stops (either may be nothing). */
export interface Part {
  name: string;
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/** Starts the parts in their order; the first that fails stops the start, and its error is thrown. */
export async function startParts(parts: readonly Part[]): Promise<void> {
  for (const part of parts) await part.start?.();
}

/**
 * Stops the parts in the reverse order. One that fails to stop is logged and the others are stopped all the same;
 * the first failure is thrown once they all were.
 */
export async function stopParts(parts: readonly Part[], logger: Logger): Promise<void> {
  const failures: unknown[] = [];
  for (const part of [...parts].reverse()) {
    try {
      await part.stop?.();
    } catch (err) {
      logger.error({ err, part: part.name }, 'a part of the node failed to stop');
      failures.push(err);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/** A step of the start that writes: run, or (the disk full) skipped with a warning, answering `otherwise`. */
export type StartStep = <T>(what: string, work: () => Promise<T>, otherwise: T) => Promise<T>;

/** On a disk full at start (SQLite), what start would write is left for later: the node serves what it can read. */
export function unlessDiskFull(store: Store, logger: Logger): StartStep {
  return async (what, work, otherwise) => {
    if (!store.startedFull) return work();
    try {
      return await work();
    } catch (err) {
      if (!isStorageError(err)) throw err;
      logger.warn({ step: what }, `${what} skipped at start: the disk holding the database is full`);
      return otherwise;
    }
  };
}
