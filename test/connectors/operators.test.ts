import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connector, cuttableProxy, route, routedTo } from '../support/connectors.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const SECRET_KEY = 'operators-test-secret-key-0123456789abcdef';

forEachDialect('routing over several connectors', (dialect) => {
  let a: TestServer;
  let b: TestServer;
  let onA: Tenant;
  before(async () => {
    a = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
    b = await startTestServer(dialect);
    onA = await createTenant(a, { balance: 1_000 });
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });

  test('the first connector down: traffic moves to the failover within one reconnect interval, and back when it returns', async () => {
    const onB = await createTenant(b, { balance: 100, channel: { fromFieldList: ['Tern'] } });
    const proxy = await cuttableProxy(b.url);
    try {
      await connector(a, { name: 'primary', type: 'SMSMODE_HTTP', baseUrl: proxy.url, apiKey: onB.key, pollAfterSeconds: 2 });
      await route(a, {
        name: 'with failover',
        priority: 1,
        match: { prefix: '33680' },
        connectors: [{ connector: 'primary' }],
        failover: [{ connector: 'simulator' }],
      });
      await routedTo(a, '33680000005', 'primary');
      const via = async () => {
        const r = await request(a, 'POST', '/sms/v1/messages', { key: onA.key, body: { recipient: { to: '33680000005' }, body: { text: 'Which way' } } });
        assert.equal(r.status, 201, r.text);
        return eventually(
          async () => {
            const m = await a.app.store.db.selectFrom('messages').select(['connector', 'status']).where('id', '=', r.body.messageId).executeTakeFirstOrThrow();
            return m.connector !== null ? m : undefined;
          },
          15_000,
          'placed',
        );
      };
      assert.equal((await via()).connector, 'primary');
      await proxy.cut();
      const during = await via();
      assert.equal(during.connector, 'simulator', 'a connection refused moves the message to the failover in the same pass');
      await routedTo(a, '33680000005', 'simulator');
      assert.equal((await via()).connector, 'simulator');
      await proxy.restore();
      const back = Date.now();
      await routedTo(a, '33680000005', 'primary');
      assert.ok(Date.now() - back < 15_000, 'back within one reconnect interval (10 s) of its return');
      assert.equal((await via()).connector, 'primary');
    } finally {
      await proxy.close();
    }
  });

  test('connector metrics: state, traffic and errors by connector', async () => {
    const res = await fetch(`${a.url}/metrics`);
    const text = await res.text();
    assert.match(text, /tern_connector_up\{connector="simulator",state="UP"\} 1/);
    assert.match(text, /tern_connector_submits_total\{connector="primary",outcome="accepted"\} [1-9]/);
    assert.match(text, /tern_connector_submits_total\{connector="primary",outcome="temporary_error"\} [1-9]/);
    assert.match(text, /tern_connector_receipts_total\{connector="simulator"\} [1-9]/);
    assert.match(text, /tern_dispatch_taken_over_total \d+/);
  });
});
