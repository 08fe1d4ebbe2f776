import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConsumptionService, type ConsumptionQuery } from '../../../src/core/billing/consumption.ts';
import { addDays, lastSettledDay } from '../../../src/domain/consumption-periods.ts';
import { utcDay } from '../../../src/domain/dates.ts';
import { SecretBox } from '../../../src/core/secrets.ts';
import { TenancyService } from '../../../src/core/tenancy/service.ts';
import { periodTotals } from '../../../src/store/consumption.ts';
import { inTransaction, type Store } from '../../../src/store/db.ts';
import { RollupBatch, type RollupKey } from '../../../src/store/rollups.ts';
import { forEachDialect } from '../../support/server.ts';
import { twoNodes } from '../../support/stores.ts';

const now = Date.now();
const today = utcDay(now);

forEachDialect('consumption of settled days kept per node', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  let organisationId: string;
  let channelId: string;
  let otherChannelId: string;

  const key = (channelId: string, day: string, status = 'DELIVERED'): RollupKey => ({
    organisationId,
    channelId,
    channelType: 'SMS',
    day,
    status,
    mccMnc: '20801',
    priceKind: 'SMS',
  });
  const write = (store: Store, fill: (batch: RollupBatch) => void) =>
    inTransaction(store, async (trx) => {
      const batch = new RollupBatch();
      fill(batch);
      await batch.write(trx, now);
    });
  const query = (over: Partial<ConsumptionQuery> = {}): ConsumptionQuery => ({
    organisationId,
    channelIds: null,
    type: 'SMS',
    periodType: 'DAY',
    startDate: addDays(today, -40),
    endDate: today,
    offset: 0,
    limit: 100,
    ...over,
  });
  const summary = (records: Awaited<ReturnType<ConsumptionService['list']>>) =>
    records.map((r) => `${r.channel.name} ${r.startDate} ${r.quantity} ${r.messages} ${r.amount}`);

  before(async () => {
    ({ a, b, cleanup } = await twoNodes(dialect));
    const tenancy = new TenancyService(a, new SecretBox('consumption test secret key, long enough'));
    organisationId = (await tenancy.createOrganisation({ name: 'Settled' })).id;
    channelId = (await tenancy.createChannel(organisationId, { name: 'main', type: 'SMS', flow: 'TRANSACTIONAL' })).id;
    otherChannelId = (await tenancy.createChannel(organisationId, { name: 'other', type: 'SMS', flow: 'MARKETING' })).id;
    await write(a, (batch) => {
      for (let d = 0; d <= 35; d += 5) batch.add(key(channelId, addDays(today, -d)), 2, 2, 100);
      batch.add(key(otherChannelId, addDays(today, -10)), 1, 1, 50);
    });
  });
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('a list over settled and recent days is what the rollups hold, page by page, months straddling both', async () => {
    const service = new ConsumptionService(a);
    const days = await service.list(query(), now);
    assert.equal(days.length, 9);
    assert.deepEqual(
      days.slice(0, 3).map((r) => [r.startDate, r.channel.name]),
      [
        [today, 'main'],
        [addDays(today, -5), 'main'],
        [addDays(today, -10), 'main'],
      ],
    );
    assert.deepEqual(summary(await service.list(query({ offset: 2, limit: 2 }), now)), summary(days.slice(2, 4)));
    for (const periodType of ['DAY', 'MONTH'] as const) {
      const listed = await service.list(query({ periodType }), now);
      const scope = { organisationId, channelIds: null, channelType: 'SMS', from: listed.at(-1)!.startDate, to: listed[0]!.endDate };
      const sql = await periodTotals(a.db, scope, periodType === 'DAY' ? 10 : 7, { offset: 0, limit: 100 });
      assert.deepEqual(
        listed.map((r) => [r.channel.id, r.quantity, r.messages, r.amount]),
        sql.map((t) => [t.channelId, t.quantity, t.messages, t.amount]),
      );
      assert.ok(listed.every((r) => r.items.length === 1 && r.items[0]!.statuses[0]!.value === 'DELIVERED'));
    }
    assert.deepEqual(summary(await service.list(query({ channelIds: [otherChannelId] }), now)), [`other ${addDays(today, -10)} 1 1 50`]);
  });

  test('settled days are read once; a change to one on another node is seen at the next query, a write outside the pipeline is not', async () => {
    const service = new ConsumptionService(a);
    const old = addDays(today, -20);
    assert.ok(old <= lastSettledDay(now));
    const before = await service.list(query({ startDate: old, endDate: old }), now);
    assert.deepEqual(summary(before), [`main ${old} 2 2 100`]);

    // A row changed behind the pipeline's back raises no epoch: the node keeps serving what it read.
    await a.db.updateTable('consumption_rollups').set({ amount: 999 }).where('channel_id', '=', channelId).where('day', '=', old).execute();
    assert.deepEqual(summary(await service.list(query({ startDate: old, endDate: old }), now)), [`main ${old} 2 2 100`]);
    await a.db.updateTable('consumption_rollups').set({ amount: 100 }).where('channel_id', '=', channelId).where('day', '=', old).execute();

    // A late receipt for a message accepted that day, applied on the other node, raises the epoch in its transaction.
    await write(b, (batch) => batch.move(key(channelId, old), 'UNDELIVERED', 1, 50));
    const afterMove = await service.list(query({ startDate: old, endDate: old }), now);
    assert.deepEqual(summary(afterMove), [`main ${old} 2 2 100`]);
    assert.deepEqual(afterMove[0]!.items[0]!.statuses, [
      { value: 'DELIVERED', quantity: 1 },
      { value: 'UNDELIVERED', quantity: 1 },
    ]);
    await write(b, (batch) => batch.add(key(channelId, old, 'UNDELIVERED'), -1, 0, -50));
    assert.deepEqual(summary(await service.list(query({ startDate: old, endDate: old }), now)), [`main ${old} 1 2 50`]);
  });

  test('recent days are read every time, with no epoch raised for them', async () => {
    const service = new ConsumptionService(a);
    const epochs = async () => (await a.db.selectFrom('consumption_epochs').select('epoch').execute()).map((r) => Number(r.epoch));
    const raised = await epochs();
    await service.list(query({ startDate: today, endDate: today }), now);
    await write(b, (batch) => batch.add(key(channelId, today), 3, 3, 150));
    assert.deepEqual(summary(await service.list(query({ startDate: today, endDate: today }), now)), [`main ${today} 5 5 250`]);
    assert.deepEqual(await epochs(), raised);
  });

  test('a batch written in a transaction that rolled back is written whole when tried again', async () => {
    const day = addDays(today, -30);
    const batch = new RollupBatch();
    batch.add(key(otherChannelId, day), 4, 4, 40);
    await assert.rejects(
      inTransaction(a, async (trx) => {
        await batch.write(trx, now);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await inTransaction(a, (trx) => batch.write(trx, now));
    const service = new ConsumptionService(b);
    assert.deepEqual(summary(await service.list(query({ channelIds: [otherChannelId], startDate: day, endDate: day }), now)), [`other ${day} 4 4 40`]);
  });
});
