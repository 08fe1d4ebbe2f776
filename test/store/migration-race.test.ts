// Nodes starting at once on one new database: their migrations run one node at a time and every node comes up.
// Also: a node on a schema a newer version migrated further, and the floor a breaking migration sets.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { COMPATIBLE_FROM, raisedFloor, readMigrationState } from '../../src/store/migrator.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, type DialectName, forEachDialect, request } from '../support/server.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;
const NAMES = Object.keys(migrations);

/**
 * A database nothing has touched: a SQLite file that does not exist yet, or a PostgreSQL schema that does not exist
 * yet (the nodes create it).
 */
function newDatabase(dialect: DialectName): { url: string; cleanup(): Promise<void> } {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tern-race-'));
    return { url: `sqlite:${join(dir, 'tern.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `race_${randomBytes(5).toString('hex')}`;
  const u = new URL(PG_URL!);
  u.searchParams.set('schema', schema);
  u.searchParams.set('pool', '2');
  return {
    url: u.toString(),
    async cleanup() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

forEachDialect('migrations started at once', (dialect) => {
  test('six stores opened at once in one process on a new database all open, each migration applied once', async () => {
    for (let round = 0; round < 3; round++) {
      const database = newDatabase(dialect);
      const opened = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => openStore(database.url, `node-${i}`)));
      const stores = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      try {
        assert.deepEqual(
          opened.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : [])),
          [],
          `round ${round}: every store opens`,
        );
        for (const s of stores) assert.deepEqual(s.schemaLevel, { applied: NAMES.length, latest: NAMES.at(-1), pending: 0 });
        const state = await readMigrationState(stores[0]!.db, stores[0]!.schema);
        assert.deepEqual(
          state.applied.map((m) => m.name),
          NAMES,
        );
        assert.deepEqual(state.pending, []);
        for (const m of state.applied) assert.ok(!Number.isNaN(Date.parse(m.appliedAt)), `${m.name} has its time`);
      } finally {
        for (const s of stores) await s.close();
        await database.cleanup();
      }
    }
  });

  test('four nodes started at once as processes on a new database all come up and serve', async () => {
    const database = newDatabase(dialect);
    const ports = await Promise.all([0, 1, 2, 3].map(() => freePort()));
    // Four processes loading at once on a machine of two cores: each needs several seconds of CPU to start.
    const started = await Promise.allSettled(ports.map((port) => startTernProcess(database.url, port, {}, 240_000)));
    const nodes: TernProcess[] = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    try {
      assert.equal(nodes.length, 4, started.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'up')).join('; '));
      const tenant = await createTenant(nodes[0]!, { balance: 10 });
      for (const [i, node] of nodes.entries()) {
        const health = await request(node, 'GET', '/healthz');
        assert.deepEqual(health.body.schema, { applied: NAMES.length, latest: NAMES.at(-1), pending: 0 });
        const sent = await request(node, 'POST', '/sms/v1/messages', {
          key: tenant.key,
          body: { recipient: { to: `3361234560${i}` }, body: { text: `node ${i}` } },
        });
        assert.equal(sent.status, 201, sent.text);
        const other: TernProcess = nodes[(i + 1) % nodes.length]!;
        const read = await request(other, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: tenant.key });
        assert.equal(read.status, 200, read.text);
      }
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await database.cleanup();
    }
  });

  test('a node opens a schema a newer version migrated further, and refuses one a breaking migration moved past it', async () => {
    const database = newDatabase(dialect);
    let store: Store | null = await openStore(database.url);
    try {
      // What a newer minor version would have done: an added table, recorded as its migration.
      await sql`create table future_things (id text primary key)`.execute(store.db);
      await sql`insert into kysely_migration (name, timestamp) values ('999-future-things', ${new Date().toISOString()})`.execute(store.db);
      await store.close();
      store = await openStore(database.url);
      assert.deepEqual(store.schemaLevel, { applied: NAMES.length + 1, latest: '999-future-things', pending: 0 });
      assert.deepEqual((await readMigrationState(store.db, store.schema)).unknown, ['999-future-things']);

      // A floor at this version or below lets it start; above, it refuses and says what to do.
      await sql`insert into settings (key, value) values (${COMPATIBLE_FROM}, '1.0.0')`.execute(store.db);
      await store.close();
      store = await openStore(database.url);
      await sql`update settings set value = '99.0.0' where key = ${COMPATIBLE_FROM}`.execute(store.db);
      await store.close();
      store = null;
      await assert.rejects(
        openStore(database.url),
        /migrated by Tern 99\.0\.0 or later .*999-future-things.*run Tern 99\.0\.0 or later, or restore the backup/,
      );

      // Ahead, but without one of this version's migrations: not a schema this version knows how to run on.
      store = await openStore(database.url, 'fix', { migrate: false });
      await sql`delete from settings where key = ${COMPATIBLE_FROM}`.execute(store.db);
      await sql`delete from kysely_migration where name = ${NAMES.at(-1)!}`.execute(store.db);
      await store.close();
      store = null;
      await assert.rejects(openStore(database.url), new RegExp(`newer Tern \\(999-future-things\\) but not ${NAMES.at(-1)}`));
    } finally {
      await store?.close();
      await database.cleanup();
    }
  });
});

test('a breaking migration raises the oldest compatible version to its major version, never lowers it', () => {
  const breaking = { '040-drop-x': '2.0.0', '050-rename-y': '3.0.0' };
  assert.equal(raisedFloor(null, ['001-a', '036-b'], breaking), null);
  assert.equal(raisedFloor(null, ['001-a', '040-drop-x'], breaking), '2.0.0');
  assert.equal(raisedFloor(null, ['040-drop-x', '050-rename-y'], breaking), '3.0.0');
  assert.equal(raisedFloor('2.0.0', ['040-drop-x'], breaking), null);
  assert.equal(raisedFloor('3.0.0', ['040-drop-x', '050-rename-y'], breaking), null);
  assert.equal(raisedFloor('10.0.0', ['050-rename-y'], breaking), null, 'versions compare as numbers');
});
