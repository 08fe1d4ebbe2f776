import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Retention } from '../../src/core/retention.ts';
import { uuidv7 } from '../../src/domain/ids.ts';
import { uuidv7Floor } from '../../src/store/retention.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

test('uuidv7Floor sorts below every id of its millisecond and above every earlier one', () => {
  const before = Date.now();
  const id = uuidv7();
  assert.ok(uuidv7Floor(before) <= id && id < uuidv7Floor(Date.now() + 1_000), `${uuidv7Floor(before)} ≤ ${id}`);
  assert.equal(uuidv7Floor(0x0123456789ab), '01234567-89ab-0000-0000-000000000000');
  assert.ok(uuidv7Floor(1_000) < uuidv7Floor(1_001));
});

forEachDialect('retention', (dialect) => {
  let server: TestServer;
  let hooks: Receiver;
  before(async () => {
    server = await startTestServer(dialect);
    hooks = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await hooks.close();
  });

  test('settled messages go with their events and webhooks past their days; what is on its way, money and consumption stay', async () => {
    const t = await createTenant(server, { balance: 10, channel: { defaultCallbackUrlStatus: `${hooks.url}/s` } });
    const sent = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const r = await request(server, 'POST', '/sms/v1/messages', {
          key: t.key,
          body: { recipient: { to: `3361234${String(i).padStart(4, '0')}5` }, body: { text: `old ${i}` } },
        });
        assert.equal(r.status, 201, r.text);
        return r.body.messageId as string;
      }),
    );
    const later = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345675' }, body: { text: 'tomorrow' }, sentDate: new Date(Date.now() + 86_400_000).toISOString() },
    });
    const db = server.app.store.db;
    await eventually(
      async () =>
        (await db.selectFrom('webhook_deliveries').select('id').where('message_id', 'in', sent).where('state', '=', 'DELIVERED').execute()).length === 12,
      15_000,
      'webhooks delivered',
    );
    const usage = async () => (await request(server, 'GET', '/commons/v1/consumptions', { key: t.key })).body;
    const ledger = async () => db.selectFrom('ledger').select(['id']).where('organisation_id', '=', t.organisationId).execute();
    const [usageBefore, ledgerBefore] = [await usage(), await ledger()];
    // A live lookup result kept for 30 days, and one refreshed to last past the pruning.
    const looked = (msisdn: string, expiresAt: number) => ({
      msisdn,
      valid: 1,
      reachable: 1,
      ported: 0,
      roaming: null,
      current_mcc_mnc: '20810',
      current_network: 'SFR',
      original_mcc_mnc: '20810',
      original_network: 'SFR',
      connector: 'simulator',
      looked_up_at: Date.now(),
      expires_at: expiresAt,
    });
    await db
      .insertInto('number_lookups')
      .values([looked('33612340001', Date.now() + 30 * 86_400_000), looked('33612340002', Date.now() + 120 * 86_400_000)])
      .execute();

    // As if 91 days had passed: the default retention is 90 days.
    const retention = new Retention(server.app.store, { messageDays: 90, webhookDays: 30, audioDays: 30 });
    for (const task of retention.tasks()) await task.prune(Date.now() + 91 * 86_400_000);

    const left = await db.selectFrom('messages').select('id').where('organisation_id', '=', t.organisationId).execute();
    assert.deepEqual(
      left.map((m) => m.id),
      [later.body.messageId],
      'only the message still on its way',
    );
    assert.equal((await db.selectFrom('message_events').select('id').where('message_id', 'in', sent).execute()).length, 0);
    assert.equal((await db.selectFrom('webhook_deliveries').select('id').where('message_id', 'in', sent).execute()).length, 0);
    assert.deepEqual(await ledger(), ledgerBefore, 'the ledger is kept');
    assert.deepEqual(
      (await db.selectFrom('number_lookups').select('msisdn').execute()).map((r) => r.msisdn),
      ['33612340002'],
      'expired lookup results go',
    );
    assert.deepEqual(await usage(), usageBefore, 'consumption is kept');
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${sent[0]}`, { key: t.key })).status, 404);
  });
});
