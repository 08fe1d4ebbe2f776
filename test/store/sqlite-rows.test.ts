// Rows read through the store on SQLite are made from arrays by a function written for the statement's columns:
// they must be the objects better-sqlite3 itself would give, in every way a query reads them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/db.ts';

describe('rows read on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tern-rows-'));
  let store: Store;
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const read = async (text: string) => (await sql.raw(text).execute(store.db)).rows;
  const direct = (text: string) => store.sqlite!.prepare(text).all();

  test('the same objects as better-sqlite3 gives: values, types, key order, a name given twice, no row', async () => {
    store = await openStore(`sqlite:${join(dir, 'tern.db')}`, 'rows');
    await read(`create table t (id text primary key, n integer, x real, b blob, note text)`);
    await read(`insert into t values ('a', 1, 1.5, x'0102', null), ('b', 9007199254740991, -0.25, null, 'é "quoted" \\ {}')`);
    for (const text of [
      `select * from t order by id`,
      `select note, id, n as "weird name", x as "__proto__x" from t order by id desc`,
      `select 1 as a, 2 as a`,
      `select id as "__proto__", n from t order by id`,
      `select * from t where id = 'nobody'`,
      `update t set n = n + 1 returning id, n`,
    ]) {
      const expected = text.startsWith('update') ? null : direct(text);
      const got = await read(text);
      if (expected === null) {
        assert.deepEqual(got, [
          { id: 'a', n: 2 },
          { id: 'b', n: 9007199254740992 },
        ]);
        continue;
      }
      assert.deepEqual(got, expected, text);
      assert.deepEqual(
        got.map((r) => Object.keys(r as object)),
        expected.map((r) => Object.keys(r as object)),
        `${text}: key order`,
      );
      for (const r of got) assert.equal(Object.getPrototypeOf(r), Object.prototype);
    }
    // Twice: the second run reuses the kept statement and its builder.
    assert.deepEqual(await read(`select * from t order by id`), direct(`select * from t order by id`));
  });

  test('a streamed query gives the same rows', async () => {
    const streamed: unknown[] = [];
    for await (const r of store.db
      .selectFrom('t' as never)
      .selectAll()
      .orderBy('id' as never)
      .stream())
      streamed.push(r);
    assert.deepEqual(streamed, direct(`select * from t order by id`));
  });

  test('a change of schema is seen by a statement read before it', async () => {
    assert.deepEqual(Object.keys((await read(`select * from t order by id`))[0] as object), ['id', 'n', 'x', 'b', 'note']);
    await read(`alter table t add column extra text default 'e'`);
    await read(`alter table t rename column note to remark`);
    const rows = await read(`select * from t order by id`);
    assert.deepEqual(rows, direct(`select * from t order by id`));
    assert.deepEqual(Object.keys(rows[0] as object), ['id', 'n', 'x', 'b', 'remark', 'extra']);
  });
});
