import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, connector, route, routedTo } from '../support/connectors.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

forEachDialect('re-routing on a failed delivery, and route quality', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  let failing: string;
  let good: string;
  const name = (n: string) => `${n}-${dialect}`;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 10 });
    // A network in trouble: every SMS it takes is reported UNDELIVERED / OPERATOR_ERROR.
    // Receipts a moment after the submit, as an operator's come.
    failing = await connector(server, { name: name('failing'), type: 'SIMULATOR', failedDeliveryPercent: 100, receiptLatencyMs: 300 });
    good = await connector(server, { name: name('good'), type: 'SIMULATOR', receiptLatencyMs: 300 });
    assert.equal((await admin(server, 'POST', `/admin/v1/connectors/${failing}/rates`, { rates: [{ country: 'FR', price: 0.01 }] })).status, 201);
    assert.equal((await admin(server, 'POST', `/admin/v1/connectors/${good}/rates`, { rates: [{ country: 'FR', price: 0.02 }] })).status, 201);
  });
  after(() => server.stop());

  const db = () => server.app.store.db;
  const send = async (to: string) => {
    const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 're-routed' } } });
    assert.equal(r.status, 201, r.text);
    return r.body.messageId as string;
  };
  const final = (id: string) =>
    eventually(async () => {
      const m = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
      return m.body.status.value === 'ENROUTE' ? undefined : m.body;
    });
  const balance = async () => (await admin(server, 'GET', `/admin/v1/organisations/${t.organisationId}`)).body.balance.amount as number;

  test('a failed delivery goes to the route’s next connector, both placements recorded, charged once', async () => {
    const r = await route(server, {
      name: name('fr retry'),
      priority: 1,
      match: { prefix: '336123' },
      connectors: [{ connectorId: failing }, { connectorId: good }],
      strategy: 'cost',
      maxAttempts: 2,
    });
    await routedTo(server, '33612345678', name('failing'));
    const before = await balance();
    const id = await send('33612345678');
    const m = await final(id);
    assert.equal(m.status.value, 'DELIVERED');
    assert.equal(JSON.stringify(m).includes(name('good')), false, 'the customer sees no connector');
    const attempts = await eventually(async () => {
      const a = await admin(server, 'GET', `/admin/v1/messages/${id}/attempts`);
      return a.body.items.length === 2 && a.body.items[1].outcome ? a.body.items : undefined;
    });
    assert.deepEqual(
      attempts.map((a: { attempt: number; connector: string; outcome: string; detail?: string; cost: { amount: number } }) => [
        a.attempt,
        a.connector,
        a.outcome,
        a.detail,
        a.cost.amount,
      ]),
      [
        [1, name('failing'), 'UNDELIVERED', 'OPERATOR_ERROR', 0.01],
        [2, name('good'), 'DELIVERED', undefined, 0.02],
      ],
    );
    assert.equal(Math.round((before - (await balance())) * 1_000_000), 45_000, 'charged once');
    const row = await db().selectFrom('messages').select(['connector', 'cost', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.connector, Number(row.cost), row.attempts], [name('good'), 20_000, 2]);
    const margins = await admin(server, 'GET', `/admin/v1/consumptions/margins?searchBy[organisationId]=${t.organisationId}`);
    assert.equal(margins.body.totals.messages, 1, 'one message');
    assert.equal(Math.round(margins.body.totals.charged.amount * 1_000_000), 45_000, 'charged once');
    assert.equal(Math.round(margins.body.totals.cost.amount * 1_000_000), 30_000, 'both placements cost');

    // With one attempt allowed, the failure stands.
    await admin(server, 'PATCH', `/admin/v1/routes/${r}`, { maxAttempts: 1 });
    await eventually(async () => {
      const once = await final(await send('33612345678'));
      return once.status.value === 'UNDELIVERED' ? once : undefined;
    });
    await admin(server, 'DELETE', `/admin/v1/routes/${r}`);
  });

  test('delivery rates per connector and network come from receipts; routes prefer or drop by them', async () => {
    const r = await route(server, { name: name('fr quality'), priority: 1, match: { prefix: '33699' }, connectors: [{ connectorId: failing }] });
    await routedTo(server, '33699123450', name('failing'));
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await send(`3369912345${i}`));
    for (const id of ids) assert.equal((await final(id)).status.value, 'UNDELIVERED');
    const quality = await eventually(async () => {
      const q = await admin(server, 'GET', `/admin/v1/quality?hours=1&searchBy[connector]=${name('failing')}`);
      const failed = q.body.items.reduce((s: number, i: { failed: number }) => s + i.failed, 0);
      return failed >= 11 ? q.body : undefined;
    });
    assert.ok(quality.items.every((i: { deliveryRate: number; delivered: number }) => i.deliveryRate === 0 && i.delivered === 0));
    const goodQ = await admin(server, 'GET', `/admin/v1/quality?searchBy[connector]=${name('good')}`);
    assert.equal(goodQ.body.items[0].deliveryRate, 1);
    assert.equal(typeof goodQ.body.items[0].meanSecondsToDelivered, 'number');
    assert.equal((await admin(server, 'GET', '/admin/v1/quality?hours=0')).status, 400);

    // The cheaper connector is left out once it delivers below the route's floor.
    await admin(server, 'PATCH', `/admin/v1/routes/${r}`, {
      connectors: [{ connectorId: failing }, { connectorId: good }],
      strategy: 'cost',
      minDeliveryRate: 0.5,
    });
    await routedTo(server, '33699123450', name('good'));
    const why = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33699123450' });
    assert.deepEqual(why.body.belowMinimum, [{ name: name('failing'), deliveryRate: 0 }]);
    assert.match(why.body.reason, /minDeliveryRate: .*failing.* \(0 % delivered\)/);
    assert.equal((await final(await send('33699123459'))).status.value, 'DELIVERED');

    // By quality: the best delivering first (one not judged yet counts as delivering all).
    await admin(server, 'PATCH', `/admin/v1/routes/${r}`, { strategy: 'quality', minDeliveryRate: null });
    await routedTo(server, '33699123450', name('good'));
    const byQuality = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33699123450' });
    assert.equal(byQuality.body.strategy, 'quality');
    assert.deepEqual(
      byQuality.body.candidates.map((c: { name: string }) => c.name),
      [name('good'), name('failing')],
    );
    assert.match(byQuality.body.reason, /best delivering/);
    assert.equal((await admin(server, 'PATCH', `/admin/v1/routes/${r}`, { minDeliveryRate: 1.5 })).status, 400);

    const metrics = await request(server, 'GET', '/metrics');
    assert.match(metrics.text, new RegExp(`tern_connector_delivery_rate\\{connector="${name('failing')}",network="[^"]+"\\} 0`));
  });
});
