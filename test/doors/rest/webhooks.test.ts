import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../../src/config/index.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually, sleep } from '../../support/wait.ts';

function verify(secret: string, r: ReceivedRequest): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

async function secretOf(server: TestServer, t: Tenant): Promise<{ secret: string; previousSecret?: string }> {
  const r = await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key });
  assert.equal(r.status, 200, r.text);
  assert.match(r.body.secret, /^whsec_/);
  return r.body;
}

async function send(server: TestServer, t: Tenant, to: string, extra: Record<string, unknown> = {}) {
  const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: `hi ${to}` }, ...extra } });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

forEachDialect('webhooks', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect, {
      TERN_MESSAGE_VALIDITY_SECONDS: '2',
      TERN_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,400ms,500ms,600ms',
      TERN_WEBHOOK_CONNECTIONS: '5',
    });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('status webhooks: each test number reports its final status, signed for standardwebhooks', async () => {
    const t = await createTenant(server, { balance: 5 });
    const { secret } = await secretOf(server, t);
    const expected: Record<string, string> = {
      '33612340001': 'UNDELIVERED',
      '33612340002': 'UNDELIVERABLE',
      '33612340003': 'UNDELIVERED',
      '33612340004': 'DELIVERED',
      '33612345678': 'DELIVERED',
    };
    const ids = new Map<string, string>();
    for (const to of Object.keys(expected)) {
      ids.set((await send(server, t, to, { callbackUrlStatus: `${receiver.url}/status`, refClient: `ref-${to}` })).messageId, to);
    }
    const finals = await eventually(
      async () => {
        const got = new Map<string, any>();
        for (const r of receiver.delivered()) {
          if (r.url !== '/status' || !ids.has(r.json?.messageId)) continue;
          if (['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE'].includes(r.json.status.value)) got.set(r.json.messageId, r);
        }
        return got.size === ids.size ? got : undefined;
      },
      15_000,
      'final status webhooks',
    );
    for (const [id, r] of finals) {
      const to = ids.get(id)!;
      assert.equal(r.json.status.value, expected[to], to);
      assert.equal(r.json.refClient, `ref-${to}`);
      assert.equal(r.json.direction, 'MT');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.deepEqual(verify(secret, r), r.json, 'standardwebhooks accepts the signature');
      assert.match(String(r.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
      const got = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
      assert.deepEqual(r.json, got.body, 'the body is the message object as GET returns it');
    }
    assert.throws(() => verify(`whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`, finals.values().next().value));
  });

  test('channel default callback URL, PATCH through the commons API, no URL keeps the event only', async () => {
    const t = await createTenant(server, { balance: 5 });
    const none = await send(server, t, '33612345678');
    await eventually(async () => {
      const d = await request(server, 'GET', `/sms/v1/messages/${none.messageId}`, { key: t.key });
      return d.body.status.value === 'DELIVERED' ? true : undefined;
    });
    const noDeliveries = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${none.messageId}`, { key: t.key });
    assert.equal(noDeliveries.body.items.length, 0);
    const events = await request(server, 'GET', `/sms/v1/messages/${none.messageId}/events`, { key: t.key });
    assert.equal(events.body.items.length, 2, 'the events are kept');

    const patched = await request(server, 'PATCH', `/commons/v1/channels/${t.channelId}`, {
      key: t.key,
      body: { defaultCallbackUrlStatus: `${receiver.url}/default` },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.defaultCallbackUrlStatus, `${receiver.url}/default`);
    const m = await send(server, t, '33612345678');
    await eventually(async () =>
      receiver.delivered().some((r) => r.url === '/default' && r.json?.messageId === m.messageId && r.json.status.value === 'DELIVERED') ? true : undefined,
    );
    const bad = await request(server, 'PATCH', `/commons/v1/channels/${t.channelId}`, { key: t.key, body: { defaultCallbackUrlMo: 'gopher://x' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, '400.001');
    const user = await createTenant(server, { roles: ['USER'] });
    const forbidden = await request(server, 'PATCH', `/commons/v1/channels/${user.channelId}`, { key: user.key, body: { defaultCallbackUrlMo: null } });
    assert.equal(forbidden.status, 403);
  });

  test('receiver down then up: every event arrives, retries keep the same webhook-id; deliveries record each attempt', async () => {
    const down = await startReceiver();
    down.respond = (r) => (r.index < 6 ? 503 : 200);
    try {
      const t = await createTenant(server, { balance: 5 });
      const ms: any[] = [];
      for (let i = 0; i < 3; i++) ms.push(await send(server, t, `3361234567${i}`, { callbackUrlStatus: `${down.url}/s` }));
      await eventually(
        async () => {
          const ok = new Set(
            down
              .delivered()
              .filter((r) => r.json?.status?.value === 'DELIVERED')
              .map((r) => r.json.messageId),
          );
          return ms.every((m) => ok.has(m.messageId)) ? true : undefined;
        },
        15_000,
        'all deliveries after the receiver comes back',
      );
      const byId = new Map<string, ReceivedRequest[]>();
      for (const r of down.requests) byId.set(String(r.headers['webhook-id']), [...(byId.get(String(r.headers['webhook-id'])) ?? []), r]);
      const retried = [...byId.values()].filter((rs) => rs.length > 1);
      assert.ok(retried.length > 0, 'some deliveries were retried');
      for (const rs of retried)
        assert.ok(
          rs.every((r) => r.body === rs[0]!.body),
          'a retry sends the same body under the same webhook-id',
        );
      // The receiver has answered; the sender records the attempt a moment later.
      const list = await eventually(
        async () => {
          const l = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${ms[0].messageId}`, { key: t.key });
          return l.status === 200 && l.body.items.length > 0 && l.body.items.every((d: any) => d.status === 'DELIVERED') ? l : undefined;
        },
        10_000,
        'every delivery recorded as DELIVERED',
      );
      const attempts = list.body.items.flatMap((d: any) => d.attempts);
      assert.ok(attempts.some((a: any) => a.httpStatus === 503 && a.outcome === 'retry'));
      assert.ok(attempts.some((a: any) => a.httpStatus === 200 && a.outcome === 'delivered'));
    } finally {
      await down.close();
    }
  });

  test('a message’s events arrive in the order they happened, even when an earlier one needs a retry', async () => {
    // Retries a second apart: the next event of a message is due long before its first event's retry.
    const own = await startTestServer(dialect, { TERN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s' });
    const flaky = await startReceiver();
    // Each message's first event fails once (a receiver that hiccups).
    const seen = new Set<string>();
    flaky.respond = (r) => {
      if (r.json?.status?.value !== 'ENROUTE' || seen.has(String(r.headers['webhook-id']))) return 200;
      seen.add(String(r.headers['webhook-id']));
      return 503;
    };
    try {
      const t = await createTenant(own, { balance: 10 });
      // Scheduled a moment ahead: each message reports ENROUTE when it goes, then DELIVERED. (One accepted after its
      // sentDate goes at once, reporting no ENROUTE of its own: the moment is long enough for a loaded machine.)
      const sentDate = new Date(Date.now() + 3_000).toISOString();
      const ms = await Promise.all(
        Array.from({ length: 20 }, (_, i) => send(own, t, `33612341${String(i).padStart(3, '0')}`, { callbackUrlStatus: `${flaky.url}/s`, sentDate })),
      );
      assert.deepEqual(new Set(ms.map((m) => m.status.value)), new Set(['SCHEDULED']), 'every message accepted before its sentDate');
      const ids = new Set(ms.map((m) => m.messageId as string));
      const delivered = () => flaky.delivered().filter((r) => ids.has(r.json?.messageId));
      const both = (value: string) =>
        new Set(
          delivered()
            .filter((r) => r.json.status.value === value)
            .map((r) => r.json.messageId),
        ).size === ids.size;
      await eventually(() => both('DELIVERED') && both('ENROUTE'), 30_000, 'every ENROUTE and DELIVERED');
      assert.ok(flaky.requests.length >= 60, 'every first event was retried');
      for (const id of ids) {
        const got = delivered()
          .filter((r) => r.json.messageId === id)
          .map((r) => r.json.status.value);
        assert.deepEqual(
          got.filter((v, i) => v !== got[i - 1]),
          ['ENROUTE', 'DELIVERED'],
          `${id}: ${got.join(' → ')}`,
        );
      }
    } finally {
      await flaky.close();
      await own.stop();
    }
  });

  test('410 Gone stops retries; exhausting the schedule marks the delivery FAILED; replay sends it again', async () => {
    const gone = await startReceiver();
    gone.respond = (r) => (r.url === '/gone' ? 410 : 500);
    try {
      const t = await createTenant(server, { balance: 5 });
      const a = await send(server, t, '33612345678', { callbackUrlStatus: `${gone.url}/gone` });
      const b = await send(server, t, '33612345679', { callbackUrlStatus: `${gone.url}/fail` });
      const goneDelivery = await eventually(async () => {
        const l = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${a.messageId}&searchBy[status]=GONE`, { key: t.key });
        return l.body.items[0];
      });
      assert.equal(goneDelivery.attemptCount, 1);
      const failed = await eventually(
        async () => {
          const l = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${b.messageId}&searchBy[status]=FAILED`, { key: t.key });
          return l.body.items[0];
        },
        15_000,
        'delivery to fail after the schedule',
      );
      assert.equal(failed.attemptCount, 7, 'first try + 6 retries');
      assert.equal(failed.attempts.length, 7);
      gone.respond = () => 200;
      const replay = await request(server, 'POST', `/commons/v1/webhooks/deliveries/${failed.deliveryId}/replay`, { key: t.key });
      assert.equal(replay.status, 202);
      await eventually(async () => {
        const d = await request(server, 'GET', `/commons/v1/webhooks/deliveries/${failed.deliveryId}`, { key: t.key });
        return d.body.status === 'DELIVERED' ? d.body : undefined;
      });
      const last = gone.delivered().at(-1)!;
      assert.equal(last.headers['webhook-id'], failed.deliveryId);
      const missing = await request(server, 'POST', '/commons/v1/webhooks/deliveries/msg_nope/replay', { key: t.key });
      assert.equal(missing.status, 404);
    } finally {
      await gone.close();
    }
  });

  test('a receiver that hangs delays neither status updates nor other receivers, and holds TERN_WEBHOOK_CONNECTIONS (5 here) requests at most', async () => {
    const slow = await startReceiver();
    slow.respond = () => 'hang';
    const fast = await startReceiver();
    try {
      const a = await createTenant(server, { balance: 20 });
      const b = await createTenant(server, { balance: 20 });
      const slowOnes: any[] = [];
      for (let i = 0; i < 40; i++) slowOnes.push(await send(server, a, `33612${String(345100 + i)}`, { callbackUrlStatus: `${slow.url}/x` }));
      const fastOnes: any[] = [];
      for (let i = 0; i < 5; i++) fastOnes.push(await send(server, b, `33612${String(345200 + i)}`, { callbackUrlStatus: `${fast.url}/y` }));
      await eventually(async () => {
        const ok = new Set(
          fast
            .delivered()
            .filter((r) => r.json?.status?.value === 'DELIVERED')
            .map((r) => r.json.messageId),
        );
        return fastOnes.every((m) => ok.has(m.messageId)) ? true : undefined;
      });
      assert.equal(loadConfig({}).webhookConnections, 8, 'the default');
      assert.throws(() => loadConfig({ TERN_WEBHOOK_CONNECTIONS: '0' }), /TERN_WEBHOOK_CONNECTIONS/);
      await eventually(async () => (slow.hanging === 5 ? true : undefined), 5_000, 'five requests held');
      await sleep(300);
      assert.equal(slow.hanging, 5, 'no more at once than TERN_WEBHOOK_CONNECTIONS');
      assert.equal(slow.delivered().length, 0);
      for (const m of slowOnes.slice(0, 5)) {
        const g = await request(server, 'GET', `/sms/v1/messages/${m.messageId}`, { key: a.key });
        assert.equal(g.body.status.value, 'DELIVERED', 'statuses move on while the receiver hangs');
      }
    } finally {
      await slow.close();
      await fast.close();
    }
  });

  test('secret rotation: both signatures are sent and either secret verifies', async () => {
    const t = await createTenant(server, { balance: 5 });
    const old = (await secretOf(server, t)).secret;
    const rotated = await request(server, 'POST', `/commons/v1/channels/${t.channelId}/webhook-secret/rotate`, { key: t.key });
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body.previousSecret, old);
    assert.notEqual(rotated.body.secret, old);
    const m = await send(server, t, '33612345678', { callbackUrlStatus: `${receiver.url}/rot` });
    const r = await eventually(async () => receiver.delivered().find((x) => x.url === '/rot' && x.json?.messageId === m.messageId));
    assert.equal(String(r.headers['webhook-signature']).split(' ').length, 2);
    assert.deepEqual(verify(old, r), r.json);
    assert.deepEqual(verify(rotated.body.secret, r), r.json);
    const user = await createTenant(server, { roles: ['USER'] });
    const denied = await request(server, 'GET', `/commons/v1/channels/${user.channelId}/webhook-secret`, { key: user.key });
    assert.equal(denied.status, 403);
  });

  test('MO: routed by the channel number, linked to the last MT, delivered to callbackUrlMo; unknown numbers kept unrouted', async () => {
    const t = await createTenant(server, { balance: 5, channel: { fromFieldList: ['36111'], defaultCallbackUrlMo: `${receiver.url}/mo-default` } });
    const mt = await send(server, t, '33698765432', { callbackUrlMo: `${receiver.url}/mo`, refClient: 'conv-1' });
    const inj = await request(server, 'POST', '/admin/v1/simulator/mo', {
      key: server.adminKey,
      body: { from: '+33698765432', to: '36111', text: 'Yes please' },
    });
    assert.equal(inj.status, 202);
    const mo = await eventually(async () => receiver.delivered().find((r) => r.url === '/mo' && r.json?.direction === 'MO'));
    assert.equal(mo.json.from, '33698765432');
    assert.deepEqual(mo.json.recipient, { to: '36111' });
    assert.deepEqual(mo.json.body, { text: 'Yes please' });
    assert.equal(mo.json.originMessageId, mt.messageId);
    assert.equal(mo.json.refClient, 'conv-1');
    assert.equal(mo.json.status, undefined);
    const list = await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key });
    assert.equal(list.body.items.length, 1);
    assert.equal(list.body.items[0].messageId, mo.json.messageId);
    const got = await request(server, 'GET', `/sms/v1/messages/${mo.json.messageId}`, { key: t.key });
    assert.deepEqual(got.body, mo.json);

    await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33611111111', to: '36111', text: 'who are you' } });
    const fresh = await eventually(async () => receiver.delivered().find((r) => r.url === '/mo-default' && r.json?.from === '33611111111'));
    assert.equal(fresh.json.originMessageId, undefined, 'no MT was sent to this user');

    await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33611111111', to: '99999', text: 'lost' } });
    const unrouted = await request(server, 'GET', '/admin/v1/inbound/unrouted', { key: server.adminKey });
    assert.ok(unrouted.body.items.some((u: any) => u.to === '99999' && u.body.text === 'lost'));
    const bad = await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33611111111', to: '36111' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail, /body\.text/);
  });

  test('STOP and START change what MARKETING sends do; the blacklist API manages the list', async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING', channel: { fromFieldList: ['36222'] } });
    const user = '33655555555';
    for (const stop of ['  Arrêt ', 'stop']) {
      await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: user, to: '36222', text: stop } });
      await eventually(async () => {
        const l = await request(server, 'GET', `/commons/v1/blacklist?searchBy[msisdn]=${user}`, { key: t.key });
        return l.body.items.length === 1 ? true : undefined;
      });
      const blocked = await send(server, t, user);
      assert.deepEqual([blocked.status.value, blocked.status.detail, blocked.price.amount], ['UNDELIVERABLE', 'BLACKLISTED', 0]);
      await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: user, to: '36222', text: 'START' } });
      await eventually(async () => {
        const l = await request(server, 'GET', `/commons/v1/blacklist?searchBy[msisdn]=${user}`, { key: t.key });
        return l.body.items.length === 0 ? true : undefined;
      });
      assert.equal((await send(server, t, user)).status.value, 'ENROUTE');
    }
    await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: user, to: '36222', text: 'stop sending me this' } });
    await sleep(200);
    assert.equal((await request(server, 'GET', '/commons/v1/blacklist', { key: t.key })).body.items.length, 0, 'STOP inside a sentence is not a command');

    const added = await request(server, 'POST', '/commons/v1/blacklist', { key: t.key, body: { msisdn: '+33 6 44 44 44 44' } });
    assert.equal(added.status, 201);
    assert.equal(added.body.msisdn, '33644444444');
    assert.equal((await request(server, 'POST', '/commons/v1/blacklist', { key: t.key, body: { msisdn: '33644444444' } })).status, 409);
    assert.equal((await send(server, t, '33644444444')).status.detail, 'BLACKLISTED');
    const tx = await createTenant(server, { balance: 5, flow: 'TRANSACTIONAL' });
    assert.equal((await send(server, tx, '33644444444')).status.value, 'ENROUTE', 'another organisation and a TRANSACTIONAL channel are not affected');
    assert.equal((await request(server, 'DELETE', '/commons/v1/blacklist/33644444444', { key: t.key })).status, 204);
    assert.equal((await request(server, 'DELETE', '/commons/v1/blacklist/33644444444', { key: t.key })).status, 404);
    assert.equal((await request(server, 'POST', '/commons/v1/blacklist', { key: t.key, body: { msisdn: 'abc' } })).body.errorCode, '400.003');
  });
});

forEachDialect('webhooks to private addresses', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect, { TERN_WEBHOOK_ALLOW_PRIVATE: 'false' });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('are refused at delivery time unless TERN_WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const t = await createTenant(server, { balance: 5 });
    const m = await send(server, t, '33612345678', { callbackUrlStatus: `${receiver.url}/private` });
    const d = await eventually(async () => {
      const l = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${m.messageId}&searchBy[status]=REFUSED`, { key: t.key });
      return l.body.items[0];
    });
    assert.match(d.lastError, /private|loopback|not public|refused/i);
    assert.equal(receiver.requests.length, 0);
  });
});
