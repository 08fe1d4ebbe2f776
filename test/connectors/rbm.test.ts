import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RbmConnector } from '../../src/connectors/rbm/connector.ts';
import type { Connector } from '../../src/core/ports.ts';
import { FakeRbm, type StoredAgentMessage } from '../support/rbm.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';
import { connectorHarness } from './harness.ts';

const CLIENT_TOKEN = 'rbm-client-token-4f1c2e';

/** Serves a connector's own routes over HTTP, as Tern's REST door does, so RBM can push to it. */
async function serveRoutes(getConnector: () => Connector): Promise<Receiver> {
  return startReceiver((req, res) => {
    const route = getConnector()
      .routes?.()
      .find((r) => r.method === req.method && req.url.endsWith(r.path));
    if (!route) return 404;
    void route.handle({ method: req.method, path: route.path, query: {}, headers: req.headers, body: req.json ?? undefined, rawBody: req.body }).then(
      (a) =>
        res
          .writeHead(a.status, { 'content-type': a.contentType ?? 'application/json' })
          .end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {})),
      (err: Error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message })),
    );
  });
}

describe('connector harness: RBM against a fake RBM platform', () => {
  let fake: FakeRbm;
  let routes: Receiver;
  let connector: Connector;
  after(async () => {
    await routes?.close();
    await fake?.close();
  });
  connectorHarness('RBM', {
    idempotentSubmit: true,
    template: { type: 'RCS', body: { type: 'TEXT', text: 'Hello from the harness' } },
    async create(name) {
      // The harness's MO is addressed to 36111: the agent is named so.
      fake = await new FakeRbm({ agentId: '36111', clientToken: CLIENT_TOKEN }).start();
      connector = new RbmConnector(name, {
        agentId: '36111',
        baseUrl: fake.url,
        serviceAccountKey: JSON.parse(fake.serviceAccountKey()),
        webhookClientToken: CLIENT_TOKEN,
        timeoutMs: 5_000,
      });
      routes = await serveRoutes(() => connector);
      assert.ok((await fake.verifyWebhook(`${routes.url}/connectors/${name}/events`)).verified);
      const delivered = new Set<string>();
      return {
        connector,
        operator: {
          deliverable: ['33612345678', '447911123456', '33698765432'],
          async settle() {
            for (const m of fake.agentMessages.filter((x) => !delivered.has(x.messageId))) {
              delivered.add(m.messageId);
              assert.equal(await fake.userEvent('DELIVERED', m), 200);
            }
          },
          async sendMo(_ctx, _c, mo) {
            assert.equal(await fake.userMessage(`+${mo.from}`, { text: mo.text }), 200);
          },
          async close() {},
        },
      };
    },
  });
});

const AGENT = 'tern_test_agent';
const USER = '33612345678';
const NOT_RCS = '33698765432';
const NOT_TESTER = '33655555555';

forEachDialect('RBM connector: RCS through Google RBM', (dialect) => {
  let server: TestServer;
  let fake: FakeRbm;
  let hooks: Receiver;
  let t: { key: string; organisationId: string; channelId: string; smsKey: string };
  const events = () => `${server.url}/connectors/rbm-eu/events`;

  before(async () => {
    fake = await new FakeRbm({ agentId: AGENT, clientToken: CLIENT_TOKEN, notRcs: [`+${NOT_RCS}`], notTesters: [`+${NOT_TESTER}`] }).start();
    hooks = await startReceiver();
    server = await startTestServer(dialect);
    const admin = server.adminKey;
    const c = await request(server, 'POST', '/admin/v1/connectors', {
      key: admin,
      body: { name: 'rbm-eu', type: 'RBM', agentId: AGENT, baseUrl: fake.url, serviceAccountKey: fake.serviceAccountKey(), webhookClientToken: CLIENT_TOKEN },
    });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.secretsSet.sort(), ['serviceAccountKey', 'webhookClientToken']);
    assert.equal(c.body.serviceAccountKey, undefined, 'the key is never answered');
    const r = await request(server, 'POST', '/admin/v1/routes', {
      key: admin,
      body: { name: 'rcs via rbm', priority: 1, match: { type: 'RCS' }, connectors: [{ connector: 'rbm-eu' }] },
    });
    assert.equal(r.status, 201, r.text);
    await eventually(
      async () => (await request(server, 'GET', `/admin/v1/connectors/${c.body.connectorId}`, { key: admin })).body.live?.state === 'UP',
      10_000,
      'the RBM connector UP',
    );

    const rcs = await createTenant(server, {
      type: 'RCS',
      balance: 10,
      channel: { defaultFromField: AGENT, defaultCallbackUrlStatus: `${hooks.url}/status`, defaultCallbackUrlMo: `${hooks.url}/mo` },
    });
    const sms = await request(server, 'POST', `/admin/v1/organisations/${rcs.organisationId}/channels`, {
      key: admin,
      body: { name: 'SMS fallback', type: 'SMS', flow: 'TRANSACTIONAL', defaultFromField: 'ACME' },
    });
    assert.equal(sms.status, 201, sms.text);
    assert.equal(
      (await request(server, 'PATCH', `/admin/v1/channels/${rcs.channelId}`, { key: admin, body: { fallbackSmsChannelId: sms.body.channelId } })).status,
      200,
    );
    const cred = await request(server, 'POST', `/admin/v1/channels/${sms.body.channelId}/credentials`, {
      key: admin,
      body: { name: 'SMS key', roles: ['ADMIN'] },
    });
    t = { ...rcs, smsKey: cred.body.value };
  });
  after(async () => {
    await server?.stop();
    await hooks?.close();
    await fake?.close();
  });

  const send = (body: Record<string, unknown>) => request(server, 'POST', '/rcs/v1/messages', { key: t.key, body });
  const stored = (messageId: string) => eventually(() => fake.agentMessages.find((m) => m.messageId === messageId), 15_000, `message ${messageId} at RBM`);
  const status = (id: string, wanted: string) =>
    eventually(
      async () => {
        const g = await request(server, 'GET', `/rcs/v1/messages/${id}`, { key: t.key });
        return g.body.status?.value === wanted ? g.body : undefined;
      },
      20_000,
      `${id} ${wanted}`,
    );
  const hooked = (id: string, value: string) =>
    eventually(
      () => hooks.requests.find((x) => x.url === '/status' && x.json?.messageId === id && x.json.status?.value === value),
      20_000,
      `${value} webhook of ${id}`,
    );

  test('the webhook handshake: the secret back for the client token, 403 for another', async () => {
    assert.deepEqual(await fake.verifyWebhook(events(), 'not-the-token'), { status: 403, verified: false });
    assert.deepEqual(await fake.verifyWebhook(events()), { status: 200, verified: true });
  });

  test('a card with every kind of suggestion reaches RBM as the exact AgentMessage, with its traffic type and ttl', async () => {
    const assertionsBefore = fake.assertions;
    const suggestions = [
      { type: 'REPLY', text: 'Yes', postbackData: 'yes' },
      { type: 'OPEN_URL', text: 'Open', postbackData: 'open', url: 'https://example.com/o' },
      { type: 'DIAL_PHONE', text: 'Call us', postbackData: 'dial', phoneNumber: '+33 1 80 00 00 00' },
      {
        type: 'CREATE_CALENDAR_EVENT',
        text: 'Remind me',
        postbackData: 'cal',
        startTime: '2030-01-02T10:00:00+01:00',
        endTime: '2030-01-02T11:00:00Z',
        title: 'Visit',
        description: 'At the shop',
      },
    ];
    const r = await send({
      recipient: { to: USER },
      body: {
        type: 'CARD',
        orientation: 'HORIZONTAL',
        content: { title: 'Your order', description: 'On its way', media: { fileUrl: 'https://example.com/p.png', height: 'SHORT' }, suggestions },
        suggestions: [
          { type: 'SHOW_LOCATION', text: 'Shop', postbackData: 'loc', latitude: 48.85, longitude: 2.35, label: 'Our shop' },
          { type: 'REQUEST_LOCATION', text: 'Share', postbackData: 'share' },
        ],
      },
      validity: { amount: 2, timeUnit: 'HOURS' },
    });
    assert.equal(r.status, 201, r.text);
    const m = await stored(r.body.messageId);
    assert.equal(m.phone, `+${USER}`);
    const { ttl, ...rest } = m.body;
    const seconds = Number(/^(\d+)s$/.exec(ttl)?.[1]);
    assert.ok(seconds > 7000 && seconds <= 7200, `ttl ${ttl}: what is left of two hours`);
    assert.deepEqual(rest, {
      contentMessage: {
        richCard: {
          standaloneCard: {
            cardOrientation: 'HORIZONTAL',
            cardContent: {
              title: 'Your order',
              description: 'On its way',
              media: { height: 'SHORT', contentInfo: { fileUrl: 'https://example.com/p.png' } },
              suggestions: [
                { reply: { text: 'Yes', postbackData: 'yes' } },
                { action: { text: 'Open', postbackData: 'open', openUrlAction: { url: 'https://example.com/o' } } },
                { action: { text: 'Call us', postbackData: 'dial', dialAction: { phoneNumber: '+33180000000' } } },
                {
                  action: {
                    text: 'Remind me',
                    postbackData: 'cal',
                    createCalendarEventAction: {
                      startTime: '2030-01-02T09:00:00.000Z',
                      endTime: '2030-01-02T11:00:00.000Z',
                      title: 'Visit',
                      description: 'At the shop',
                    },
                  },
                },
              ],
            },
          },
        },
        suggestions: [
          { action: { text: 'Shop', postbackData: 'loc', viewLocationAction: { latLong: { latitude: 48.85, longitude: 2.35 }, label: 'Our shop' } } },
          { action: { text: 'Share', postbackData: 'share', shareLocationAction: {} } },
        ],
      },
      messageTrafficType: 'TRANSACTION',
    });
    assert.ok(fake.assertions - assertionsBefore <= 1, 'the access token is reused between calls');
  });

  test('text, carousel and file bodies map onto contentMessage exactly', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ type: 'TEXT', text: 'Hello 👋' }, { text: 'Hello 👋' }],
      [
        {
          type: 'CAROUSEL',
          cardWidth: 'SMALL',
          contents: [{ title: 'A', media: { fileUrl: 'https://example.com/a.png' } }, { content: { title: 'B', description: 'b' } }],
        },
        {
          richCard: {
            carouselCard: {
              cardWidth: 'SMALL',
              cardContents: [
                { title: 'A', media: { height: 'MEDIUM', contentInfo: { fileUrl: 'https://example.com/a.png' } } },
                { title: 'B', description: 'b' },
              ],
            },
          },
        },
      ],
      [
        { type: 'FILE', fileUrl: 'https://example.com/f.pdf', thumbnailUrl: 'https://example.com/t.png' },
        { contentInfo: { fileUrl: 'https://example.com/f.pdf', thumbnailUrl: 'https://example.com/t.png' } },
      ],
    ];
    for (const [body, contentMessage] of cases) {
      const r = await send({ recipient: { to: USER }, body });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual((await stored(r.body.messageId)).body.contentMessage, contentMessage);
    }
  });

  test('a body RBM cannot carry is refused at accept, and nothing is sent', async () => {
    const before = fake.agentMessages.length;
    assertError(
      await send({ recipient: { to: USER }, body: { type: 'FILE', fileUrl: 'https://example.com/f.pdf', filename: 'f.pdf' } }),
      400,
      '400.001',
      /body\.filename: RBM takes a file’s name from its URL.*rbm-eu/,
    );
    assertError(
      await send({
        recipient: { to: USER },
        body: {
          type: 'CAROUSEL',
          cardWidth: 'SMALL',
          contents: [{ title: 'A', media: { fileUrl: 'https://example.com/a.png', height: 'TALL' } }, { title: 'B' }],
        },
      }),
      400,
      '400.001',
      /body\.contents\[0\]\.media\.height: RBM has no TALL media/,
    );
    assertError(
      await send({
        recipient: { to: USER },
        body: { type: 'TEXT', text: 'Call', suggestions: [{ type: 'DIAL_PHONE', text: 'Call', postbackData: 'c', phoneNumber: '0180000000' }] },
      }),
      400,
      '400.001',
      /body\.suggestions\[0\]\.phoneNumber: RBM dials international numbers only/,
    );
    const listed = await request(server, 'GET', `/rcs/v1/messages?pageSize=100`, { key: t.key });
    assert.ok(!listed.body.items.some((m: any) => m.body?.filename === 'f.pdf'), 'no message written');
    assert.equal(fake.agentMessages.length, before);
  });

  test('DELIVERED and READ come back through the signed webhook and reach the status webhook; a bad signature changes nothing', async () => {
    const r = await send({ recipient: { to: USER }, body: { type: 'TEXT', text: 'Your parcel is here' } });
    assert.equal(r.status, 201, r.text);
    const m = await stored(r.body.messageId);
    await status(r.body.messageId, 'ENROUTE');
    const forged = await fake.push({ senderPhoneNumber: m.phone, eventType: 'DELIVERED', eventId: 'e1', messageId: m.messageId }, () => 'bm90IGEgc2lnbmF0dXJl');
    assert.equal(forged, 401);
    const unsigned = await fetch(events(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: { data: Buffer.from('{}').toString('base64') } }),
    });
    assert.equal(unsigned.status, 401);
    assert.equal((await request(server, 'GET', `/rcs/v1/messages/${r.body.messageId}`, { key: t.key })).body.status.value, 'ENROUTE');

    assert.equal(await fake.userEvent('DELIVERED', m), 200);
    await hooked(r.body.messageId, 'DELIVERED');
    assert.equal(await fake.userEvent('IS_TYPING', m), 200);
    assert.equal(await fake.userEvent('READ', m), 200);
    await hooked(r.body.messageId, 'READ');
    await status(r.body.messageId, 'READ');
  });

  test("a user's suggestion reply becomes an RCS MO and its webhook, once however often RBM hands it over", async () => {
    const id = `MsReply${Date.now()}`;
    const reply = { suggestionResponse: { postbackData: 'yes', text: 'Yes', type: 'REPLY' } };
    assert.equal(await fake.userMessage(`+${USER}`, reply, id), 200);
    assert.equal(await fake.userMessage(`+${USER}`, reply, id), 200);
    const mo = await eventually(() => hooks.requests.find((x) => x.url === '/mo' && x.json?.body?.postbackData === 'yes'), 20_000, 'the MO webhook');
    assert.deepEqual(mo.json.body, { type: 'SUGGESTION', text: 'Yes', postbackData: 'yes' });
    assert.equal(mo.json.from, USER);
    assert.equal(await fake.userMessage(`+${USER}`, { location: { latitude: 48.85, longitude: 2.35 } }), 200);
    await eventually(() => hooks.requests.find((x) => x.url === '/mo' && x.json?.body?.type === 'LOCATION'), 20_000, 'the location MO');
    assert.equal(hooks.requests.filter((x) => x.url === '/mo' && x.json?.body?.postbackData === 'yes').length, 1, 'one MO for one RBM message');
  });

  test('a number without RCS falls back to SMS; a number the unlaunched agent may not reach is a clear error', async () => {
    const r = await send({ recipient: { to: NOT_RCS }, body: { type: 'TEXT', text: 'Hello' }, fallback: { text: 'Hello by SMS' } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status.value, 'UNDELIVERED');
    assert.equal(r.body.status.detail, 'FALLBACK_SMS');
    await eventually(
      async () => (await request(server, 'GET', `/sms/v1/messages/${r.body.fallbackMessageId}`, { key: t.smsKey })).body.status?.value === 'DELIVERED',
      20_000,
      'the fallback SMS delivered',
    );
    assert.ok(!fake.agentMessages.some((m) => m.phone === `+${NOT_RCS}`), 'nothing sent through RBM');

    const denied = await send({ recipient: { to: NOT_TESTER }, body: { type: 'TEXT', text: 'Hello' }, fallback: { text: 'Hello by SMS' } });
    assertError(denied, 400, '400.001', /until the agent is launched, only its testers can be reached/);
  });

  test('a submit whose answer was lost is sent again with the same messageId: RBM says ALREADY_EXISTS, taken once', async () => {
    const phone = '33611112222';
    fake.loseAnswerFor.add(`+${phone}`);
    const r = await send({ recipient: { to: phone }, body: { type: 'TEXT', text: 'Once only' } });
    assert.equal(r.status, 201, r.text);
    const m = await stored(r.body.messageId);
    await status(r.body.messageId, 'ENROUTE');
    await eventually(
      async () =>
        (await request(server, 'GET', `/rcs/v1/messages/${r.body.messageId}`, { key: t.key })).body.status?.value === 'ENROUTE' &&
        fake.log.some((l) => l.path.includes(phone) && l.status === 409),
      20_000,
      'the repeat answered ALREADY_EXISTS',
    );
    assert.equal(fake.agentMessages.filter((x) => x.phone === `+${phone}`).length, 1, 'RBM has it once');
    assert.deepEqual(
      fake.log.filter((l) => l.path.endsWith(`+${phone}/agentMessages`)).map((l) => l.status),
      [0, 409],
    );
    assert.equal(await fake.userEvent('DELIVERED', m), 200);
    await status(r.body.messageId, 'DELIVERED');
  });

  test('an access token RBM no longer takes is renewed once and the call goes through', async () => {
    const assertions = fake.assertions;
    fake.expireTokens();
    const r = await send({ recipient: { to: USER }, body: { type: 'TEXT', text: 'After renewal' } });
    assert.equal(r.status, 201, r.text);
    await stored(r.body.messageId);
    assert.equal(fake.assertions, assertions + 1);
  });

  test('TTL_EXPIRATION_REVOKED ends the message UNDELIVERED and its SMS fallback goes out', async () => {
    const r = await send({ recipient: { to: USER }, body: { type: 'TEXT', text: 'Your code' }, fallback: { text: 'Your code by SMS' } });
    assert.equal(r.status, 201, r.text);
    const m = await stored(r.body.messageId);
    await status(r.body.messageId, 'ENROUTE');
    assert.equal(await fake.ttlRevoked(m), 200);
    const ended = await status(r.body.messageId, 'UNDELIVERED');
    assert.equal(ended.status.detail, 'FALLBACK_SMS');
    assert.match(ended.fallbackMessageId, /^[0-9a-f-]{36}$/);
    await eventually(
      async () => (await request(server, 'GET', `/sms/v1/messages/${ended.fallbackMessageId}`, { key: t.smsKey })).body.status?.value === 'DELIVERED',
      20_000,
      'the fallback SMS delivered',
    );
  });

  test('at the end of its validity an undelivered message is revoked at RBM before its SMS goes out', async () => {
    const r = await send({
      recipient: { to: USER },
      body: { type: 'TEXT', text: 'Short-lived' },
      validity: { amount: 2, timeUnit: 'SECONDS' },
      fallback: { text: 'Short-lived by SMS' },
    });
    assert.equal(r.status, 201, r.text);
    const m: StoredAgentMessage = await stored(r.body.messageId);
    assert.ok(/^[12]s$/.test(m.body.ttl), `ttl ${m.body.ttl}`);
    const ended = await status(r.body.messageId, 'UNDELIVERED');
    assert.equal(ended.status.detail, 'FALLBACK_SMS');
    await eventually(() => m.revoked, 20_000, 'the revocation at RBM');
    assert.ok(fake.log.some((l) => l.method === 'DELETE' && l.path === `/v1/phones/+${USER}/agentMessages/${m.messageId}` && l.status === 200));
  });

  test('a message without a fallback is revoked at RBM too when its validity ends, and ends UNDELIVERED', async () => {
    const r = await send({ recipient: { to: USER }, body: { type: 'TEXT', text: 'No fallback' }, validity: { amount: 2, timeUnit: 'SECONDS' } });
    assert.equal(r.status, 201, r.text);
    const m = await stored(r.body.messageId);
    const ended = await status(r.body.messageId, 'UNDELIVERED');
    assert.equal(ended.status.detail, 'EXPIRED');
    await eventually(() => m.revoked, 20_000, 'the revocation at RBM');
  });
});
