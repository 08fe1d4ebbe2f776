// Statements whose result nobody reads are sent without waiting in a transaction on PostgreSQL (pipeline mode): an
// error of one must still fail its transaction, with its own error, and leave nothing written; on SQLite they run as
// any statement.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { runCached } from '../../src/store/batch-sql.ts';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

forEachDialect('statements nobody reads', (dialect) => {
  let store: Store;
  let other: Store;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ a: store, b: other, cleanup } = await twoNodes(dialect));
    await sql`create table unread_t (id text primary key, n integer not null)`.execute(store.db);
  });
  after(async () => {
    await store.close();
    await other.close();
    await cleanup();
  });

  const insert = (db: Parameters<typeof runCached>[0], id: string, n: number) =>
    runCached(db, 'unread test insert', 1, (pg) => `insert into unread_t (id, n) values (${pg ? '$1, $2' : '?, ?'})`, [id, n], true);
  const ids = async () => (await sql<{ id: string }>`select id from unread_t order by id`.execute(store.db)).rows.map((r) => r.id);

  test('written with their transaction, and read back by the statements after them in it', async () => {
    const seen = await inTransaction(store, async (trx) => {
      await insert(trx, 'a1', 1);
      await insert(trx, 'a2', 2);
      return (await sql<{ n: number }>`select sum(n) as n from unread_t where id like 'a%'`.execute(trx)).rows[0]!.n;
    });
    assert.equal(Number(seen), 3);
    assert.deepEqual(await ids(), ['a1', 'a2']);
  });

  test('a failed one fails the statement read after it with its own error, and nothing of the transaction stays', async () => {
    await assert.rejects(
      inTransaction(store, async (trx) => {
        await insert(trx, 'b1', 1);
        await insert(trx, 'a1', 9); // a1 exists: a unique violation
        await insert(trx, 'b2', 2);
        await sql`select 1`.execute(trx);
      }),
      (err: Error & { code?: string }) => (dialect === 'postgres' ? err.code === '23505' : /UNIQUE/.test(err.message)),
    );
    assert.deepEqual(await ids(), ['a1', 'a2']);
  });

  test('a failed one as the last statement fails the commit, and nothing of the transaction stays', async () => {
    await assert.rejects(
      inTransaction(store, async (trx) => {
        await insert(trx, 'c1', 1);
        await insert(trx, 'a2', 9);
      }),
      (err: Error & { code?: string }) => (dialect === 'postgres' ? err.code === '23505' : /UNIQUE/.test(err.message)),
    );
    assert.deepEqual(await ids(), ['a1', 'a2']);
    // The connection serves the next transaction as usual.
    await inTransaction(store, (trx) => insert(trx, 'c2', 1));
    assert.deepEqual(await ids(), ['a1', 'a2', 'c2']);
  });

  test(
    'PostgreSQL: sent without waiting for the answer (a write held on a lock does not hold up its caller)',
    { skip: dialect !== 'postgres' ? 'about PostgreSQL only' : false },
    async () => {
      const url = new URL(process.env.TERN_TEST_DATABASE_URL!);
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0]!.s;
      const locker = new pg.Client({ connectionString: url.toString() });
      await locker.connect();
      try {
        await locker.query(`begin; lock table ${schema}.unread_t in access exclusive mode`);
        let committed = false;
        const done = inTransaction(store, async (trx) => {
          // Waits on the lock in PostgreSQL; the caller goes on.
          await insert(trx, 'd1', 1);
          const lockHeld = (
            await locker.query(
              `select count(*)::int as n from pg_locks where relation = '${schema}.unread_t'::regclass and mode = 'AccessExclusiveLock' and granted`,
            )
          ).rows[0].n;
          assert.equal(lockHeld, 1, 'the insert was sent while the table was still locked');
        }).then(() => (committed = true));
        // The transaction's commit waits for the insert, which waits for the lock.
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(committed, false);
        await locker.query('commit');
        await done;
        assert.deepEqual(await ids(), ['a1', 'a2', 'c2', 'd1']);
      } finally {
        await locker.query('rollback').catch(() => undefined);
        await locker.end();
      }
    },
  );

  test('outside a transaction it is waited for as any statement', async () => {
    const before = await ids();
    await assert.rejects(store.db.executeQuery(CompiledQuery.raw(`insert into unread_t (id, n) values ('a1', 0)`)));
    await assert.rejects(insert(store.db, 'a1', 0));
    await insert(store.db, 'e1', 0);
    assert.deepEqual(await ids(), [...before, 'e1']);
  });
});
