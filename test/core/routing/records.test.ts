import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, startTestServer, type TestServer } from '../../support/server.ts';

forEachDialect('connector records', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  test('those settled past any validity are pruned; those still due, leased or young stay', async () => {
    const now = Date.now();
    const old = now - 32 * 86_400_000;
    const row = (key: string, created_at: number, due_at: number | null = null, lease_until: number | null = null) => ({
      connector: 'prune-test',
      key,
      data: '{}',
      due_at,
      lease_until,
      created_at,
      lane: 0,
    });
    await server.app.store.db
      .insertInto('connector_records')
      .values([row('old-settled', old), row('old-due', old, now + 60_000), row('old-leased', old, null, now + 60_000), row('young', now - 86_400_000)])
      .execute();
    assert.equal(await server.app.services.connectors.pruneRecords(now), 1);
    const left = await server.app.store.db.selectFrom('connector_records').select('key').where('connector', '=', 'prune-test').orderBy('key').execute();
    assert.deepEqual(
      left.map((r) => r.key),
      ['old-due', 'old-leased', 'young'],
    );
  });
});
