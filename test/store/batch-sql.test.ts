import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import {
  arrayLiteral,
  batchParts,
  declaredColumns,
  inList,
  listParts,
  listValues,
  placeholders,
  rowValues,
  tuples,
  valuesTable,
} from '../../src/store/batch-sql.ts';
import { findRecords, settleRecords, upsertRecords, type ConnectorRecordRow } from '../../src/store/connectors.ts';
import { openStore, type Store } from '../../src/store/db.ts';
// Loaded for the columns they declare.
import '../../src/store/dispatch.ts';
import '../../src/store/ledger.ts';
import '../../src/store/messages.ts';
import '../../src/store/rollups.ts';
import '../../src/store/smpp.ts';
import '../../src/store/webhooks.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

test('placeholders: bare on SQLite, numbered from where the statement is on PostgreSQL', () => {
  assert.equal(placeholders(false, 0), '');
  assert.equal(placeholders(false, 3), '?, ?, ?');
  assert.equal(placeholders(true, 3), '$1, $2, $3');
  assert.equal(placeholders(true, 2, 5), '$5, $6');
  assert.equal(tuples(false, 2, 3), '(?, ?, ?), (?, ?, ?)');
  assert.equal(tuples(true, 2, 3), '($1, $2, $3), ($4, $5, $6)');
  assert.equal(tuples(true, 2, 2, 4), '($4, $5), ($6, $7)');
});

test('lists and tables of values: a placeholder each on SQLite, an array each on PostgreSQL', () => {
  assert.equal(inList(false, '"id"', 3), '"id" in (?, ?, ?)');
  assert.equal(inList(true, '"id"', 3, 2), '"id" = any($2::text[])');
  assert.deepEqual(listValues(false, ['a', 'b']), ['a', 'b']);
  assert.deepEqual(listValues(true, ['a', 'b']), ['{"a","b"}']);
  assert.equal(valuesTable(false, 2, 2), '(values (?, ?), (?, ?)) as v');
  assert.equal(valuesTable(true, 2, 2), 'unnest($1::text[], $2::text[]) as v(column1, column2)');
  assert.deepEqual(rowValues(false, 2, ['a', 1, 'b', null]), ['a', 1, 'b', null]);
  assert.deepEqual(rowValues(true, 2, ['a', 1, 'b', undefined]), ['{"a","b"}', '{1,NULL}']);
  assert.equal(arrayLiteral([]), '{}');
  assert.equal(arrayLiteral(['', 'NULL', null, 'a"b\\c', ' x ', '{,}', -12, 1.5]), '{"","NULL",NULL,"a\\"b\\\\c"," x ","{,}",-12,1.5}');
  assert.throws(() => arrayLiteral([true]), TypeError);
});

test('batches in parts of powers of two on SQLite, a few texts a statement; a chunk a part on PostgreSQL', () => {
  assert.deepEqual(
    batchParts(false, [...'abcdefg'], 4).map((p) => p.join('')),
    ['abcd', 'ef', 'g'],
  );
  assert.deepEqual(
    batchParts(true, [...'abcdefg'], 4).map((p) => p.join('')),
    ['abcd', 'efg'],
  );
  assert.deepEqual(listParts(false, [...'abcde'], 8), [[...'abcdeeee']]);
  assert.deepEqual(listParts(false, [...'abcdefghij'], 6), [[...'abcdef'], [...'ghij']]);
  assert.deepEqual(listParts(true, [...'abcde'], 8), [[...'abcde']]);
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 700 }), fc.integer({ min: 1, max: 500 }), fc.boolean(), (items, chunk, pg) => {
      const parts = batchParts(pg, items, chunk);
      assert.deepEqual(parts.flat(), items, 'every row once, in order');
      for (const p of parts) {
        assert.ok(p.length >= 1 && p.length <= chunk);
        if (!pg) assert.equal(p.length & (p.length - 1), 0, `${p.length} rows: a power of two`);
      }
      const lists = listParts(pg, items, chunk);
      assert.equal(lists.length, Math.ceil(items.length / chunk));
      lists.forEach((p, i) => {
        const given = items.slice(i * chunk, (i + 1) * chunk);
        assert.deepEqual(new Set(p), new Set(given), 'the same values, some twice');
        assert.deepEqual(p.slice(0, given.length), given);
        if (!pg) assert.ok(p.length === chunk || (p.length & (p.length - 1)) === 0, `${p.length} values: a power of two or the chunk`);
      });
    }),
    { seed: 17, numRuns: 300 },
  );
});

forEachDialect('statements run by batch', (dialect) => {
  let store: Store;
  let other: Store;
  let cleanup: () => Promise<void>;
  before(async () => ({ a: store, b: other, cleanup } = await twoNodes(dialect)));
  after(async () => {
    await store.close();
    await other.close();
    await cleanup();
  });

  test('every column written by batch has the type the database gives it', async () => {
    const tables = declaredColumns();
    assert.ok(tables.length >= 9, `${tables.length} lists of columns declared`);
    for (const t of tables) {
      const actual =
        dialect === 'postgres'
          ? await sql<{ name: string; type: string }>`select column_name as name, data_type as type from information_schema.columns
              where table_schema = current_schema() and table_name = ${t.table}`.execute(store.db)
          : await sql<{ name: string; type: string }>`select name, lower(type) as type from pragma_table_info(${t.table})`.execute(store.db);
      const types = new Map(actual.rows.map((r) => [r.name, r.type]));
      t.names.forEach((name, i) => assert.equal(types.get(name), t.types[i], `${t.table}.${name}`));
    }
  });

  test('texts of any kind go in and come back whole, by list and by table of values', async () => {
    // Keys and data that an array's text form must escape: quotes, backslashes, commas, braces, NULL, spaces, Unicode.
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replaceAll('\0', '')),
      fc.constantFrom('', 'NULL', 'null', '"', '\\', '{}', '{a,b}', ',', ' padded ', 'a"b\\c', '\u00e9\u4e2d\ud83d\ude00'),
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(text, { minLength: 1, maxLength: 40 }), fc.array(text, { minLength: 40, maxLength: 40 }), async (keys, data) => {
        const connector = `batch-${round++}`;
        const rows: ConnectorRecordRow[] = keys.map((key, i) => ({
          connector,
          key,
          data: data[i]!,
          due_at: i % 3 === 0 ? null : 1_700_000_000_000 + i,
          lease_until: i % 2 === 0 ? null : 9_007_199_254_740_991 - i,
          created_at: 1_700_000_000_000,
          lane: i % 2,
        }));
        await upsertRecords(store.db, rows);
        const found = new Map((await findRecords(store.db, connector, keys)).map((r) => [r.key, r]));
        assert.equal(found.size, keys.length);
        for (const r of rows) {
          const f = found.get(r.key)!;
          assert.deepEqual(
            [f.data, f.due_at === null ? null : Number(f.due_at), f.lease_until === null ? null : Number(f.lease_until), Number(f.lane)],
            [r.data, r.due_at, r.lease_until, r.lane],
            JSON.stringify(r.key),
          );
        }
        // Replaced by key, then settled by key.
        await upsertRecords(
          store.db,
          rows.map((r) => ({ ...r, data: `${r.data}!`, due_at: 5 })),
        );
        await settleRecords(store.db, connector, keys.slice(0, Math.ceil(keys.length / 2)));
        const after = new Map((await findRecords(store.db, connector, keys)).map((r) => [r.key, r]));
        keys.forEach((k, i) => {
          const r = after.get(k)!;
          assert.equal(r.data, `${data[i]}!`);
          assert.equal(r.due_at === null ? null : Number(r.due_at), i < Math.ceil(keys.length / 2) ? null : 5, JSON.stringify(k));
        });
      }),
      { seed: 1128, numRuns: 40 },
    );
  });

  test(
    'PostgreSQL: options given in the database URL are kept beside those Tern sets',
    { skip: dialect !== 'postgres' ? 'about PostgreSQL only' : false },
    async () => {
      const u = new URL(process.env.TERN_TEST_DATABASE_URL!);
      u.searchParams.set('options', '-c statement_timeout=12345');
      u.searchParams.set('pool', '1');
      const own = await openStore(u.toString(), 'node-options', { migrate: false });
      try {
        const show = async (name: string) => Object.values((await sql.raw(`show ${name}`).execute(own.db)).rows[0] as Record<string, string>)[0];
        assert.equal(await show('statement_timeout'), '12345ms');
        assert.equal(await show('plan_cache_mode'), 'force_custom_plan');
      } finally {
        await own.close();
      }
    },
  );

  test(
    'PostgreSQL keeps the batch statements parsed, except those answering every column; a column another node adds breaks none',
    { skip: dialect !== 'postgres' ? 'about PostgreSQL only' : false },
    async () => {
      const rows = (connector: string): ConnectorRecordRow[] =>
        ['k1', 'k2'].map((key) => ({ connector, key, data: 'd', due_at: 1, lease_until: null, created_at: 1_700_000_000_000, lane: 0 }));
      await store.db.connection().execute(async (c) => {
        // Planned again at every run: a plan kept from when the table was nearly empty would stay as it grows.
        assert.equal((await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(c)).rows[0]?.plan_cache_mode, 'force_custom_plan');
        await upsertRecords(c, rows('prepared'));
        await upsertRecords(c, rows('prepared'));
        assert.equal((await findRecords(c, 'prepared', ['k1', 'k2'])).length, 2);
        const kept = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(c);
        const upsert = kept.rows.find((r) => r.statement.startsWith('insert into "connector_records"'));
        assert.match(upsert?.name ?? '', /^tern_batch_\d+$/, JSON.stringify(kept.rows));
        assert.ok(!kept.rows.some((r) => r.statement.startsWith('select *')), 'a statement answering every column is not kept');

        await sql`alter table connector_records add column added_later text`.execute(other.db);
        await upsertRecords(c, rows('prepared'));
        await settleRecords(c, 'prepared', ['k1']);
        const found = await findRecords(c, 'prepared', ['k1', 'k2']);
        assert.deepEqual(found.map((r) => [r.key, r.due_at === null ? null : Number(r.due_at)]).sort(), [
          ['k1', null],
          ['k2', 1],
        ]);
      });
    },
  );
});
