import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import { periodBreakdown, periodTotals } from '../../src/store/consumption.ts';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { applyCredits } from '../../src/store/ledger.ts';
import { insertOrganisation, lockBalances } from '../../src/store/organisations.ts';
import { BALANCE_FIRST_SHARDS, ROLLUP_SHARDS, RollupBatch } from '../../src/store/rollups.ts';
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
    const byStatus = (await periodBreakdown(b.db, scope, 10)).map((r) => `${r.status} ${r.mccMnc} ${r.quantity} ${r.messages} ${r.amount}`).sort();
    assert.deepEqual(byStatus, ['DELIVERED 20801 40 40 400', 'DELIVERED 20810 20 20 200', 'ENROUTE 20801 20 20 200', 'ENROUTE 20810 40 40 400']);
  });
  test('a transaction holding a balance and one taking it after its rollups never wait on the same rollup row', async (t) => {
    // The two orders of the pipeline: an accept checking spending limits locks the payer's balance, then writes its
    // rollups; a change of status with a refund writes its rollups, then credits the balance. Both on one key and
    // the same draw of shard, on a settled day (each raises the organisation's consumption epoch): on shared rows each
    // would wait for the other's lock (a deadlock, 40P01, after a second).
    if (dialect === 'sqlite') return t.skip('SQLite: one writer at a time, no two transactions hold locks at once');
    await insertOrganisation(a.db, {
      id: 'org-lock',
      name: 'Lock order',
      parentId: null,
      balance: 1_000_000,
      currency: 'EUR',
      state: 'ACTIVE',
      parentBilling: false,
      monthlyLimit: null,
      createdAt: 0,
      defaultCountry: null,
      timeZone: 'Europe/Paris',
      optOutShortCode: null,
      optOutText: null,
      contentRetentionDays: null,
    });
    const k = { ...key('ENROUTE', '20801'), organisationId: 'org-lock' };
    mock.method(Math, 'random', () => 0);
    t.after(() => mock.restoreAll());
    let balanceLocked!: () => void;
    const locked = new Promise<void>((r) => (balanceLocked = r));
    let rollupsWritten!: () => void;
    const written = new Promise<void>((r) => (rollupsWritten = r));
    // Without the retry of inTransaction: a deadlock fails the test.
    const balanceFirst = a.db.transaction().execute(async (trx) => {
      await lockBalances(trx, 'postgres', ['org-lock']);
      balanceLocked();
      await written;
      const batch = new RollupBatch();
      batch.add(k, 1, 1, 10);
      await batch.write(trx, Date.now(), { balanceHeld: true });
    });
    const rollupsFirst = b.db.transaction().execute(async (trx) => {
      await locked;
      const batch = new RollupBatch();
      batch.move(k, 'UNDELIVERED', 1, 10);
      batch.add({ ...k, status: 'UNDELIVERED' }, -1, 0, -10);
      await batch.write(trx, Date.now(), { balanceAfter: true });
      rollupsWritten();
      await applyCredits(trx, 'org-lock', [{ amount: 10, kind: 'REFUND', at: Date.now() }]);
      await batch.raiseEpochs(trx);
    });
    await Promise.all([balanceFirst, rollupsFirst]);
    const rows = await a.db
      .selectFrom('consumption_rollups')
      .select(['shard', 'status', 'messages'])
      .where('organisation_id', '=', 'org-lock')
      .orderBy('shard')
      .orderBy('status')
      .execute();
    assert.deepEqual(rows, [
      { shard: 0, status: 'ENROUTE', messages: -1 },
      { shard: 0, status: 'UNDELIVERED', messages: 1 },
      { shard: ROLLUP_SHARDS, status: 'ENROUTE', messages: 1 },
    ]);
    assert.ok(rows.every((r) => r.shard < ROLLUP_SHARDS + BALANCE_FIRST_SHARDS));
    const epoch = await a.db.selectFrom('consumption_epochs').select('epoch').where('organisation_id', '=', 'org-lock').executeTakeFirstOrThrow();
    assert.equal(Number(epoch.epoch), 2);
    const balance = await a.db.selectFrom('organisations').select('balance').where('id', '=', 'org-lock').executeTakeFirstOrThrow();
    assert.equal(Number(balance.balance), 1_000_010);
  });
});
