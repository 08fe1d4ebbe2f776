import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connector, route, routedTo } from '../../support/connectors.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';
import { live, SECRET_KEY } from './support.ts';

// Tern A uses Tern B as its operator's SMSC: B's SMPP server and B's simulated network.
forEachDialect('Tern to Tern over SMPP', (dialect) => {
  let a: TestServer;
  let b: TestServer;
  let onA: Tenant;
  let onB: Tenant;
  let hooks: Receiver;
  let connectorId: string;
  before(async () => {
    [a, b] = await Promise.all([startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY }), startTestServer(dialect)]);
    hooks = await startReceiver();
    onB = await createTenant(b, { balance: 100, channel: { fromFieldList: ['36180', 'Tern'] } });
    const cred = await request(b, 'POST', `/admin/v1/channels/${onB.channelId}/smpp-credentials`, {
      key: b.adminKey,
      body: { systemId: 'tern-a', password: 'secret1' },
    });
    assert.equal(cred.status, 201, cred.text);
    onA = await createTenant(a, {
      balance: 100,
      channel: { fromFieldList: ['36180', 'Tern'], defaultCallbackUrlStatus: `${hooks.url}/status`, defaultCallbackUrlMo: `${hooks.url}/mo` },
    });
    connectorId = await connector(a, {
      name: 'tern-b',
      type: 'SMPP',
      host: '127.0.0.1',
      port: b.smppPort,
      systemId: 'tern-a',
      password: 'secret1',
      reconnectMinSeconds: 1,
      reconnectMaxSeconds: 2,
    });
    await route(a, { name: 'france via B', priority: 1, match: { prefix: '33' }, connectors: [{ connector: 'tern-b' }] });
    await routedTo(a, '33612345678', 'tern-b');
  });
  after(async () => {
    await a.stop();
    await b.stop();
    await hooks.close();
  });

  test('a message sent to A over REST reaches B, B’s receipt comes back, and A’s status webhook says DELIVERED', async () => {
    const texts = ['Through B over SMPP', 'Long through B: ' + 'a long text that needs several parts. '.repeat(6)];
    const sent = await Promise.all(
      texts.map(async (text) => {
        const r = await request(a, 'POST', '/sms/v1/messages', {
          key: onA.key,
          body: { recipient: { to: '33612345678' }, body: { text }, from: 'Tern', refClient: 'via-smpp' },
        });
        assert.equal(r.status, 201, r.text);
        return r.body.messageId as string;
      }),
    );
    for (const id of sent) {
      const hook = await eventually(
        () => hooks.delivered().find((h) => h.url === '/status' && h.json?.messageId === id && h.json?.status?.value === 'DELIVERED'),
        20_000,
        'the DELIVERED webhook on A',
      );
      assert.equal(hook.json.refClient, 'via-smpp');
    }
    const onBList = await request(b, 'GET', '/sms/v1/messages', { key: onB.key });
    for (const text of texts) {
      const copy = onBList.body.items.find((m: any) => m.body.text === text);
      assert.ok(copy, `B holds “${text.slice(0, 20)}…” whole`);
      assert.equal(copy.status.value, 'DELIVERED');
      assert.equal(copy.from, 'Tern');
    }
    const s = await live(a, connectorId);
    assert.equal(s.state, 'UP');
    assert.ok(s.receipts >= 2, JSON.stringify(s));
  });

  test('an MO injected on B reaches A’s callbackUrlMo, a long one in one piece', async () => {
    const long = 'A reply long enough to need two SMS parts on its way from B to A, which A must put back together before its webhook goes out.';
    for (const text of ['Short reply via SMPP', long]) {
      const mo = await request(b, 'POST', '/admin/v1/simulator/mo', { key: b.adminKey, body: { from: '33611112222', to: '36180', text } });
      assert.equal(mo.status, 202, mo.text);
      const hook = await eventually(() => hooks.delivered().find((h) => h.url === '/mo' && h.json?.body?.text === text), 20_000, 'the MO webhook on A');
      assert.equal(hook.json.from, '33611112222');
      assert.equal(hook.json.recipient.to, '36180');
      assert.equal(hook.json.direction, 'MO');
    }
  });
});
