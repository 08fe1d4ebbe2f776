// Row locks held and looked at from outside (PostgreSQL): for tests of the order transactions take their locks in.
import { sql } from 'kysely';
import type { Db, Store } from '../../src/store/db.ts';
import { eventually } from './wait.ts';

/** A transaction on `store` that runs `lock`, then holds what it locked until `release` is called. */
export async function holdLocks(store: Store, lock: (trx: Db) => Promise<unknown>): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const held = new Promise<void>((r) => (holding = r));
  const done = store.db.transaction().execute(async (trx) => {
    await lock(trx);
    holding();
    await released;
  });
  await Promise.race([held, done]);
  return {
    async release() {
      release();
      await done;
    },
  };
}

/** Waits until one session of the database waits for a row lock. */
export function someoneWaitsForALock(store: Store, what: string): Promise<true> {
  return eventually(
    async () => {
      const waiting = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(store.db);
      return waiting.rows[0]!.n === 1 || undefined;
    },
    10_000,
    what,
  );
}

/** Whether the row of `table` with this id is free to lock now (another transaction holds no lock on it). */
export async function rowIsFree(store: Store, table: string, id: string): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    try {
      await sql`select id from ${sql.table(table)} where id = ${id} for no key update nowait`.execute(trx);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === '55P03') return false;
      throw err;
    }
  });
}
