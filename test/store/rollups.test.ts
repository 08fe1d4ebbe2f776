import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { periodBreakdown, periodTotals } from '../../src/store/consumption.ts';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { ROLLUP_SHARDS, RollupBatch } from '../../src/store/rollups.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

const key = (status: string, mccMnc: string) => ({
  organisationId: 'org-r',
  channelId: 'ch-r',
  channelType: 'SMS',
  day: '2026-11-25',
  status,
  mccMnc,
  priceKind: 'SMS',
});

forEachDialect('consumption rollups in shards', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  before(async () => ({ a, b, cleanup } = await twoNodes(dialect)));
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('concurrent writers on two nodes spread a key over shards; readers add them up to the exact totals', async () => {
    // 60 transactions at once, each accepting two messages and moving one from ENROUTE to DELIVERED, keys written in
    // different orders: none may fail (no deadlock), and every unit must be counted once. (SQLite: one node per file.)
    const nodes = dialect === 'postgres' ? [a, b] : [a];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        inTransaction(nodes[i % nodes.length]!, async (trx) => {
          const batch = new RollupBatch();
          const networks = i % 3 ? ['20801', '20810'] : ['20810', '20801'];
          for (const n of networks) batch.add(key('ENROUTE', n), 1, 1, 10);
          batch.move(key('ENROUTE', networks[0]!), 'DELIVERED', 1, 10);
          await batch.write(trx);
        }),
      ),
    );
    const shards = await a.db.selectFrom('consumption_rollups').select('shard').distinct().where('organisation_id', '=', 'org-r').execute();
    assert.ok(shards.length > 1 && shards.every((s) => s.shard >= 0 && s.shard < ROLLUP_SHARDS), `shards used: ${shards.map((s) => s.shard)}`);
    const scope = { organisationId: 'org-r', channelIds: null, channelType: 'SMS', from: '2026-11-01', to: '2026-11-30' };
    assert.deepEqual(await periodTotals(a.db, scope, 7, { offset: 0, limit: 10 }), [
      { channelId: 'ch-r', period: '2026-11', quantity: 120, messages: 120, amount: 1200 },
    ]);
    const byStatus = (await periodBreakdown(b.db, scope, 10))
      .map((r) => `${r.status} ${r.mccMnc} ${r.quantity} ${r.messages} ${r.amount}`)
      .sort();
    assert.deepEqual(byStatus, ['DELIVERED 20801 40 40 400', 'DELIVERED 20810 20 20 200', 'ENROUTE 20801 20 20 200', 'ENROUTE 20810 40 40 400']);
  });
});
