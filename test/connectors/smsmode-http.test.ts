import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SmsmodeHttpConnector } from '../../src/connectors/smsmode-http/connector.ts';
import type { Connector } from '../../src/core/ports.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';
import { connectorHarness, type HarnessContext } from './harness.ts';

const SECRET_KEY = 'connector-secrets-test-key-0123456789abcdef';

/** An upstream Tern with an SMS channel whose key the connector uses, and whose number takes replies. */
async function upstream(server: TestServer, callbackMo?: string): Promise<Tenant> {
  return createTenant(server, {
    balance: 100,
    channel: { fromFieldList: ['36180', '36111', 'Tern'], ...(callbackMo && { defaultCallbackUrlMo: callbackMo }) },
  });
}

/** Serves a connector's own routes over HTTP, as Tern's REST door does, so an upstream can call it back. */
async function serveRoutes(getConnector: () => Connector): Promise<Receiver> {
  return startReceiver((req, res) => {
    const route = getConnector()
      .routes?.()
      .find((r) => r.method === req.method && req.url.endsWith(r.path));
    if (!route) return 404;
    void route.handle({ method: req.method, path: route.path, query: {}, headers: req.headers, body: req.json ?? undefined, rawBody: req.body }).then(
      (a) => res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body ?? {})),
      // As the REST door answers a route that throws: a callback that comes once the connector has stopped (the
      // upstream's webhooks go on after the test) is told to try again, not left as an unhandled rejection.
      (err: Error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message })),
    );
  });
}

describe('connector harness: SMSMODE_HTTP against a real upstream Tern', () => {
  let b: TestServer;
  let routes: Receiver;
  let connector: Connector;
  before(async () => {
    b = await startTestServer('sqlite');
  });
  after(async () => {
    await routes?.close();
    await b.stop();
  });
  connectorHarness('SMSMODE_HTTP', {
    idempotentSubmit: true,
    async create(name) {
      routes = await serveRoutes(() => connector);
      const tenant = await upstream(b, `${routes.url}/connectors/${name}/mo`);
      connector = new SmsmodeHttpConnector(name, {
        baseUrl: b.url,
        apiKey: tenant.key,
        tps: 0,
        maxConnections: 4,
        timeoutMs: 5_000,
        pollAfterMs: 60_000,
        webhookSecret: null,
      });
      // B's simulator delivers and calls back: settled once receipts stop coming for a while.
      const settle = async (ctx: HarnessContext) => {
        let seen = -1;
        await eventually(
          async () => {
            const n = ctx.events.filter((e) => e.kind === 'receipt').length;
            const still = n > 0 && n === seen;
            seen = n;
            await sleep(400);
            return still;
          },
          15_000,
          'receipts from the upstream',
        );
      };
      return {
        connector,
        operator: {
          deliverable: ['33612345678', '447911123456', '33698765432'],
          settle,
          async sendMo(_ctx, _c, mo) {
            const r = await request(b, 'POST', '/admin/v1/simulator/mo', { key: b.adminKey, body: { from: mo.from, to: mo.to, text: mo.text } });
            assert.equal(r.status, 202);
          },
          async close() {},
        },
        publicUrl: `${routes.url}/connectors/${name}`,
      };
    },
  });
});

forEachDialect('SMSMODE_HTTP connector: Tern to Tern over the smsmode REST API', (dialect) => {
  let a: TestServer;
  let b: TestServer;
  let hooks: Receiver;
  let onA: Tenant;
  let onB: Tenant;
  let connectorId: string;
  before(async () => {
    hooks = await startReceiver();
    b = await startTestServer(dialect);
    a = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
    onB = await upstream(b, `${a.url}/connectors/upstream-b/mo`);
    onA = await createTenant(a, {
      balance: 10,
      channel: { fromFieldList: ['36180'], defaultCallbackUrlStatus: `${hooks.url}/status`, defaultCallbackUrlMo: `${hooks.url}/mo` },
    });
    const c = await request(a, 'POST', '/admin/v1/connectors', {
      key: a.adminKey,
      body: { name: 'upstream-b', type: 'SMSMODE_HTTP', baseUrl: b.url, apiKey: onB.key, pollAfterSeconds: 2 },
    });
    assert.equal(c.status, 201, c.text);
    connectorId = c.body.connectorId;
    assert.equal(c.body.apiKey, undefined, 'the API key is never answered');
    assert.deepEqual(c.body.secretsSet, ['apiKey']);
    const r = await request(a, 'POST', '/admin/v1/routes', {
      key: a.adminKey,
      body: { name: 'france via B', priority: 1, match: { prefix: '33' }, connectors: [{ connector: 'upstream-b' }], costPerPart: 0.02 },
    });
    assert.equal(r.status, 201, r.text);
    await eventually(
      async () => (await request(a, 'GET', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey })).body.live?.state === 'UP',
      10_000,
      'the connector UP',
    );
  });
  after(async () => {
    await a.stop();
    await b.stop();
    await hooks.close();
  });

  test('a message sent to A goes through B; B’s status comes back and A’s webhook says DELIVERED', async () => {
    const sent = await request(a, 'POST', '/sms/v1/messages', {
      key: onA.key,
      body: { recipient: { to: '33612345678' }, body: { text: 'Through B' }, refClient: 'via-b' },
    });
    assert.equal(sent.status, 201, sent.text);
    const hook = await eventually(
      () => hooks.delivered().find((h) => h.json?.messageId === sent.body.messageId && h.json?.status?.value === 'DELIVERED'),
      15_000,
      'the DELIVERED webhook on A',
    );
    assert.equal(hook.json.refClient, 'via-b');
    const onBList = await request(b, 'GET', '/sms/v1/messages', { key: onB.key });
    const copy = onBList.body.items.find((m: any) => m.refClient === sent.body.messageId);
    assert.ok(copy, 'B holds the message, with A’s id as its refClient');
    assert.equal(copy.body.text, 'Through B');
    const row = await a.app.store.db
      .selectFrom('messages')
      .select(['connector', 'upstream_id', 'route'])
      .where('id', '=', sent.body.messageId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { connector: 'upstream-b', upstream_id: copy.messageId, route: 'france via B' });
    const state = await request(a, 'GET', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey });
    assert.ok(state.body.live.accepted >= 1 && state.body.live.receipts >= 1, JSON.stringify(state.body.live));
    const usage = await request(a, 'GET', '/admin/v1/consumptions?searchBy[connector]=upstream-b', { key: a.adminKey });
    const line = usage.body.items.find((i: any) => i.route === 'france via B');
    assert.ok(line && line.messages >= 1 && line.cost.amount >= 0.02, JSON.stringify(usage.body));
    assert.equal(Math.round((line.charged.amount - line.cost.amount) * 1e6), Math.round(line.margin.amount * 1e6));
  });

  test('a reply on B reaches A’s callbackUrlMo', async () => {
    const mo = await request(b, 'POST', '/admin/v1/simulator/mo', { key: b.adminKey, body: { from: '33611112222', to: '36180', text: 'Reply via B' } });
    assert.equal(mo.status, 202);
    const hook = await eventually(() => hooks.delivered().find((h) => h.url === '/mo' && h.json?.body?.text === 'Reply via B'), 15_000, 'the MO webhook on A');
    assert.equal(hook.json.direction, 'MO');
    assert.equal(hook.json.from, '33611112222');
  });

  test('a lost status callback is made up for by asking B', async () => {
    // This connector holds a signing secret that is not B's: every callback of B is refused, as if it were lost.
    const deaf = await request(a, 'POST', '/admin/v1/connectors', {
      key: a.adminKey,
      body: {
        name: 'upstream-b-deaf',
        type: 'SMSMODE_HTTP',
        baseUrl: b.url,
        apiKey: onB.key,
        pollAfterSeconds: 1,
        webhookSecret: 'whsec_bm90LUJzLXNlY3JldC1hdC1hbGwh',
      },
    });
    assert.equal(deaf.status, 201, deaf.text);
    const r = await request(a, 'POST', '/admin/v1/routes', {
      key: a.adminKey,
      body: { name: 'uk via B, callbacks lost', priority: 1, match: { prefix: '44' }, connectors: [{ connector: 'upstream-b-deaf' }] },
    });
    assert.equal(r.status, 201, r.text);
    await eventually(
      async () =>
        (await request(a, 'POST', '/admin/v1/routes/test', { key: a.adminKey, body: { to: '447911123456' } })).body.candidates?.[0]?.name === 'upstream-b-deaf',
      10_000,
      'the new route in force',
    );
    const sent = await request(a, 'POST', '/sms/v1/messages', { key: onA.key, body: { recipient: { to: '447911123456' }, body: { text: 'Poll me' } } });
    assert.equal(sent.status, 201);
    const m = await eventually(
      async () => {
        const got = await request(a, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: onA.key });
        return got.body.status.value === 'DELIVERED' ? got.body : undefined;
      },
      20_000,
      'DELIVERED by polling',
    );
    assert.equal(m.status.value, 'DELIVERED');
  });

  test('B’s signed callbacks are checked when the connector has B’s signing secret; a forged one is refused', async () => {
    const secret = await request(b, 'GET', `/commons/v1/channels/${onB.channelId}/webhook-secret`, { key: onB.key });
    assert.equal(secret.status, 200, secret.text);
    const patched = await request(a, 'PATCH', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey, body: { webhookSecret: secret.body.secret } });
    assert.deepEqual(patched.body.secretsSet.sort(), ['apiKey', 'webhookSecret']);
    // The restart with the secret comes within a second; meanwhile a callback is answered by the connector as it was,
    // or with 503 while it restarts (a status its sender retries), never 404.
    const seen = new Set<number>();
    await eventually(
      async () => {
        const forged = await request(a, 'POST', '/connectors/upstream-b/status', { body: { messageId: 'x', status: { value: 'DELIVERED' } } });
        seen.add(forged.status);
        return forged.status === 401;
      },
      10_000,
      'a forged callback refused',
    );
    assert.ok(!seen.has(404), `answers seen: ${[...seen].join(', ')}`);
    await eventually(
      async () => (await request(a, 'GET', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey })).body.live?.state === 'UP',
      10_000,
      'restarted',
    );
    const sent = await request(a, 'POST', '/sms/v1/messages', { key: onA.key, body: { recipient: { to: '33612345678' }, body: { text: 'Signed' } } });
    await eventually(
      () => hooks.delivered().find((h) => h.json?.messageId === sent.body.messageId && h.json?.status?.value === 'DELIVERED'),
      15_000,
      'DELIVERED through a signed callback',
    );
  });

  test('a refused key: the connector goes DOWN and messages wait; a good key lets them go', async () => {
    await request(a, 'PATCH', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey, body: { apiKey: 'tern_not-a-key' } });
    await eventually(
      async () => (await request(a, 'GET', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey })).body.live?.state === 'DOWN',
      10_000,
      'DOWN',
    );
    const down = await request(a, 'GET', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey });
    assert.match(down.body.live.lastError, /refuses the API key/);
    const sent = await request(a, 'POST', '/sms/v1/messages', { key: onA.key, body: { recipient: { to: '33612345678' }, body: { text: 'Waits' } } });
    await sleep(500);
    assert.equal((await request(a, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: onA.key })).body.status.value, 'ENROUTE');
    const test = await request(a, 'POST', '/admin/v1/routes/test', { key: a.adminKey, body: { to: '33612345678' } });
    assert.equal(test.body.route, 'france via B');
    assert.deepEqual(test.body.candidates, []);
    assert.match(test.body.reason, /none of its connectors \(upstream-b\) is up: it would wait/);
    await request(a, 'PATCH', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey, body: { apiKey: onB.key } });
    await eventually(
      async () => ((await request(a, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: onA.key })).body.status.value === 'DELIVERED' ? true : undefined),
      20_000,
      'sent once the key is good',
    );
  });

  test('bad definitions are refused with the field named', async () => {
    const bad = [
      [{ name: 'x', type: 'FAX' }, /body\.type: must be one of/],
      [{ name: 'Bad Name', type: 'SIMULATOR' }, /body\.name/],
      [{ name: 'nokey', type: 'SMSMODE_HTTP', baseUrl: b.url }, /body\.apiKey: is required/],
      [{ name: 'badurl', type: 'SMSMODE_HTTP', baseUrl: 'ftp://x', apiKey: 'k' }, /body\.baseUrl/],
      [{ name: 'badtps', type: 'SMSMODE_HTTP', baseUrl: b.url, apiKey: 'k', tps: -1 }, /body\.tps/],
      [{ name: 'sim', type: 'SIMULATOR', colour: 'blue' }, /body\.colour: is not a setting/],
    ] as const;
    for (const [body, detail] of bad) assertError(await request(a, 'POST', '/admin/v1/connectors', { key: a.adminKey, body }), 400, '400.001', detail);
    assertError(await request(a, 'POST', '/admin/v1/connectors', { key: a.adminKey, body: { name: 'upstream-b', type: 'SIMULATOR' } }), 409, '409.001');
    assertError(await request(a, 'DELETE', `/admin/v1/connectors/${connectorId}`, { key: a.adminKey }), 409, '409.001', /routes .* use connector upstream-b/);
    assertError(
      await request(a, 'POST', '/admin/v1/routes', { key: a.adminKey, body: { name: 'r', connectors: [{ connector: 'nobody' }] } }),
      400,
      '400.001',
      /body\.connectors\[0\]: no connector nobody/,
    );
    assertError(await request(a, 'POST', '/admin/v1/connectors', { key: onA.key, body: { name: 'x', type: 'SIMULATOR' } }), 403, '403.004');
  });
});
