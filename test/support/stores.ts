// Stores opened directly on a fresh database, as nodes of a cluster open it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;

/** Two stores on one fresh database, as two nodes would open it; `pgOptions`: settings of their PostgreSQL sessions. */
export async function twoNodes(dialect: 'sqlite' | 'postgres', pgOptions?: string): Promise<{ a: Store; b: Store; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tern-queue-'));
    const url = `sqlite:${join(dir, 'tern.db')}`;
    const a = await openStore(url, 'node-a');
    const b = await openStore(url, 'node-b');
    return { a, b, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `q_${randomBytes(5).toString('hex')}`;
  const u = new URL(PG_URL!);
  u.searchParams.set('schema', schema);
  u.searchParams.set('pool', '3');
  if (pgOptions) u.searchParams.set('options', pgOptions);
  const a = await openStore(u.toString(), 'node-a');
  const b = await openStore(u.toString(), 'node-b');
  return {
    a,
    b,
    async cleanup() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** Two nodes' stores for the tests of the calling suite: opened before them, closed (and the database dropped) after. */
export function twoNodesForSuite(dialect: 'sqlite' | 'postgres', pgOptions?: string): { readonly a: Store; readonly b: Store } {
  let opened: Awaited<ReturnType<typeof twoNodes>> | null = null;
  before(async () => {
    opened = await twoNodes(dialect, pgOptions);
  });
  after(async () => {
    await opened?.a.close();
    await opened?.b.close();
    await opened?.cleanup();
  });
  const get = () => opened ?? assert.fail('the stores open before the suite’s tests');
  return {
    get a() {
      return get().a;
    },
    get b() {
      return get().b;
    },
  };
}
