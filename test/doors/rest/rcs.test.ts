import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const BASIC = 0.04;
const SINGLE = 0.06;
const CONVERSATION = 0.09;
const FR_SMS = 0.045;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Agents name channels for inbound routing, so each tenant gets its own. */
const agentName = () => `Agent${randomBytes(3).toString('hex')}`;

async function rcsTenant(server: TestServer, opts: { balance?: number; channel?: Record<string, unknown>; roles?: string[] } = {}) {
  const agent = agentName();
  const t = await createTenant(server, {
    type: 'RCS',
    balance: opts.balance ?? 5,
    roles: opts.roles,
    channel: { defaultFromField: agent, ...opts.channel },
  });
  return { ...t, agent };
}

/** An RCS tenant whose channel falls back to an SMS channel of the same organisation (with its own key). */
async function tenantWithFallback(server: TestServer, balance = 5) {
  const t = await rcsTenant(server, { balance });
  const admin = server.adminKey;
  const sms = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
    key: admin,
    body: { name: 'SMS fallback', type: 'SMS', flow: 'TRANSACTIONAL', defaultFromField: 'ACME' },
  });
  assert.equal(sms.status, 201, sms.text);
  const patched = await request(server, 'PATCH', `/admin/v1/channels/${t.channelId}`, {
    key: admin,
    body: { fallbackSmsChannelId: sms.body.channelId },
  });
  assert.equal(patched.status, 200, patched.text);
  const cred = await request(server, 'POST', `/admin/v1/channels/${sms.body.channelId}/credentials`, {
    key: admin,
    body: { name: 'SMS key', roles: ['ADMIN'] },
  });
  assert.equal(cred.status, 201, cred.text);
  return { ...t, smsChannelId: sms.body.channelId as string, smsKey: cred.body.value as string };
}

async function send(server: TestServer, t: { key: string }, body: Record<string, unknown>, headers?: Record<string, string>) {
  return request(server, 'POST', '/rcs/v1/messages', { key: t.key, body, headers });
}

const text = (t: string, extra: Record<string, unknown> = {}) => ({ type: 'TEXT', text: t, ...extra });

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

async function statusOf(server: TestServer, t: { key: string }, id: string, wanted: string[], what = id): Promise<any> {
  return eventually(
    async () => {
      const r = await request(server, 'GET', `/rcs/v1/messages/${id}`, { key: t.key });
      return wanted.includes(r.body.status?.value) ? r.body : undefined;
    },
    15_000,
    `${what} to reach ${wanted.join('/')}`,
  );
}

async function injectMo(server: TestServer, from: string, agent: string, body: Record<string, unknown>) {
  const r = await request(server, 'POST', '/admin/v1/simulator/rcs/mo', { key: server.adminKey, body: { from, to: agent, body } });
  assert.equal(r.status, 202, r.text);
}

const suggestionsOfEveryType = [
  { type: 'REPLY', text: 'Yes', postbackData: 'yes' },
  { type: 'OPEN_URL', text: 'Website', postbackData: 'site', url: 'https://example.com/offer' },
  { type: 'DIAL_PHONE', text: 'Call us', postbackData: 'call', phoneNumber: '+33123456789' },
  {
    type: 'CREATE_CALENDAR_EVENT',
    text: 'Save the date',
    postbackData: 'cal',
    startTime: '2026-09-01T10:00:00',
    endTime: '2026-09-01T11:00:00',
    title: 'Opening',
    description: 'Shop opening',
  },
  { type: 'SHOW_LOCATION', text: 'Find us', postbackData: 'map', latitude: 48.8566, longitude: 2.3522, label: 'Paris shop' },
  { type: 'REQUEST_LOCATION', text: 'Share location', postbackData: 'where' },
];

const cardContent = (title: string, extra: Record<string, unknown> = {}) => ({
  title,
  description: `About ${title}`,
  media: { fileUrl: `https://cdn.example.com/${encodeURIComponent(title)}.png`, height: 'MEDIUM' },
  ...extra,
});

forEachDialect('RCS', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect, { TERN_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms' });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('every body type is accepted, echoed, priced by kind and delivered; GET returns the same object', async () => {
    const t = await rcsTenant(server, { balance: 5 });
    const bodies: Array<[string, Record<string, unknown>, string, number]> = [
      ['short text', text('Your parcel ships today'), 'BASIC', BASIC],
      ['160 characters', text('a'.repeat(160)), 'BASIC', BASIC],
      ['161 characters', text('a'.repeat(161)), 'SINGLE', SINGLE],
      ['text with every suggestion type', text('Choose', { suggestions: suggestionsOfEveryType }), 'SINGLE', SINGLE],
      [
        'card',
        {
          type: 'CARD',
          content: cardContent('Summer sale', { suggestions: suggestionsOfEveryType.slice(0, 4) }),
          orientation: 'HORIZONTAL',
          suggestions: suggestionsOfEveryType,
        },
        'SINGLE',
        SINGLE,
      ],
      ['card with media only', { type: 'CARD', content: { media: { fileUrl: 'https://cdn.example.com/a.png' } } }, 'SINGLE', SINGLE],
      ['carousel', { type: 'CAROUSEL', contents: [cardContent('One'), cardContent('Two'), { title: 'Three' }] }, 'SINGLE', SINGLE],
      [
        'carousel of wrapped cards',
        {
          type: 'CAROUSEL',
          cardWidth: 'SMALL',
          contents: [{ content: cardContent('A') }, { content: { title: 'B', suggestions: [suggestionsOfEveryType[0]] } }],
        },
        'SINGLE',
        SINGLE,
      ],
      [
        'file',
        {
          type: 'FILE',
          fileUrl: 'https://cdn.example.com/menu.pdf',
          thumbnailUrl: 'https://cdn.example.com/menu.png',
          filename: 'menu.pdf',
          contentType: 'application/pdf',
        },
        'SINGLE',
        SINGLE,
      ],
    ];
    let spent = 0;
    const ids: string[] = [];
    for (const [what, body, kind, price] of bodies) {
      const res = await send(server, t, { recipient: { to: '+33612345678' }, body, refClient: what });
      assert.equal(res.status, 201, `${what}: ${res.text}`);
      const m = res.body;
      assert.equal(m.type, 'RCS', what);
      assert.equal(m.direction, 'MT', what);
      assert.equal(m.channel.type, 'RCS', what);
      assert.deepEqual(m.recipient, { to: '33612345678' }, what);
      assert.equal(m.from, t.agent, `${what}: the agent is the channel's defaultFromField`);
      const expectedBody = body.type === 'CAROUSEL' && !body.cardWidth ? { ...body, cardWidth: 'MEDIUM' } : body;
      assert.deepEqual(m.body, expectedBody, `${what}: body echoed`);
      assert.deepEqual(m.price, { amount: price, currency: 'EUR', kind }, what);
      assert.deepEqual(m.validity, { amount: 2, timeUnit: 'DAYS' }, `${what}: the default validity`);
      assert.equal(m.status.value, 'ENROUTE', what);
      assert.equal(m.refClient, what);
      assert.equal(m.href, `${server.url}/rcs/v1/messages/${m.messageId}`);
      const got = await request(server, 'GET', `/rcs/v1/messages/${m.messageId}`, { key: t.key });
      assert.deepEqual({ ...got.body, status: undefined }, { ...m, status: undefined }, what);
      spent += price;
      ids.push(m.messageId);
    }
    assert.equal(await balance(server, t), round6(5 - spent));
    for (const id of ids) assert.ok(['DELIVERED', 'READ'].includes((await statusOf(server, t, id, ['DELIVERED', 'READ'])).status.value));

    const withValidity = await send(server, t, {
      recipient: { to: '33612345678' },
      body: text('hi'),
      validity: { amount: 90, timeUnit: 'MINUTES' },
      from: t.agent,
    });
    assert.deepEqual(withValidity.body.validity, { amount: 90, timeUnit: 'MINUTES' });
    const fifteenDays = await send(server, t, { recipient: { to: '33612345678' }, body: text('hi'), validity: { amount: 15, timeUnit: 'DAYS' } });
    assert.equal(fifteenDays.status, 201, fifteenDays.text);
    const sms = await request(server, 'GET', `/rcs/v1/messages/${ids[0]}`, { key: (await createTenant(server)).key });
    assertError(sms, 403, '403.005');
  });

  test('every limit and every wrong key name is a 400 naming the field; nothing is stored or charged', async () => {
    const t = await rcsTenant(server, { balance: 5 });
    const before = await balance(server, t);
    const ok = { recipient: { to: '33612345678' }, body: text('x') };
    const reply = (over: Record<string, unknown> = {}) => ({ type: 'REPLY', text: 'Yes', postbackData: 'y', ...over });
    const cards = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `Card ${i}` }));
    const tooLongUrl = `https://cdn.example.com/${'a'.repeat(240)}`;
    const cases: Array<[string, Record<string, unknown>, RegExp, string?]> = [
      ['text over 3072', { body: text('a'.repeat(3073)) }, /body\.body\.text: must NOT have more than 3072 characters/],
      ['empty text', { body: text('') }, /body\.body\.text/],
      [
        '12 suggestions',
        { body: text('x', { suggestions: Array.from({ length: 12 }, () => reply()) }) },
        /body\.body\.suggestions: must NOT have more than 11 items/,
      ],
      [
        'suggestion text over 25',
        { body: text('x', { suggestions: [reply(), reply({ text: 'x'.repeat(26) })] }) },
        /body\.body\.suggestions\[1\]\.text: must NOT have more than 25/,
      ],
      [
        'postbackData over 2048',
        { body: text('x', { suggestions: [reply({ postbackData: 'p'.repeat(2049) })] }) },
        /body\.body\.suggestions\[0\]\.postbackData: must NOT have more than 2048/,
      ],
      [
        'suggestion without postbackData',
        { body: text('x', { suggestions: [{ type: 'REPLY', text: 'Yes' }] }) },
        /body\.body\.suggestions\[0\]\.postbackData: is required/,
      ],
      ['unknown suggestion type', { body: text('x', { suggestions: [reply({ type: 'SHARE' })] }) }, /body\.body\.suggestions\[0\]\.type: must be one of/],
      ['OPEN_URL without url', { body: text('x', { suggestions: [reply({ type: 'OPEN_URL' })] }) }, /body\.body\.suggestions\[0\]\.url: is required/],
      [
        'OPEN_URL with a bad url',
        { body: text('x', { suggestions: [reply({ type: 'OPEN_URL', url: 'example' })] }) },
        /body\.body\.suggestions\[0\]\.url: must be an absolute URL/,
      ],
      [
        'DIAL_PHONE without a number',
        { body: text('x', { suggestions: [reply({ type: 'DIAL_PHONE' })] }) },
        /body\.body\.suggestions\[0\]\.phoneNumber: is required/,
      ],
      [
        'calendar event ending before it starts',
        {
          body: text('x', {
            suggestions: [reply({ type: 'CREATE_CALENDAR_EVENT', title: 'T', startTime: '2026-09-01T10:00:00', endTime: '2026-09-01T09:00:00' })],
          }),
        },
        /body\.body\.suggestions\[0\]\.endTime: must not be before startTime/,
      ],
      [
        'calendar event without title',
        { body: text('x', { suggestions: [reply({ type: 'CREATE_CALENDAR_EVENT', startTime: '2026-09-01T10:00:00', endTime: '2026-09-01T11:00:00' })] }) },
        /suggestions\[0\]\.title: is required/,
      ],
      [
        'latitude out of range',
        { body: text('x', { suggestions: [reply({ type: 'SHOW_LOCATION', latitude: 91, longitude: 2 })] }) },
        /body\.body\.suggestions\[0\]\.latitude: must be <= 90/,
      ],
      [
        'REPLY with a url',
        { body: text('x', { suggestions: [reply({ url: 'https://e.com' })] }) },
        /body\.body\.suggestions\[0\]\.url: is not an allowed field/,
      ],
      ['card title over 200', { body: { type: 'CARD', content: { title: 't'.repeat(201) } } }, /body\.body\.content\.title: must NOT have more than 200/],
      [
        'card description over 2000',
        { body: { type: 'CARD', content: { title: 't', description: 'd'.repeat(2001) } } },
        /body\.body\.content\.description: must NOT have more than 2000/,
      ],
      [
        'media fileUrl over 255',
        { body: { type: 'CARD', content: { media: { fileUrl: tooLongUrl } } } },
        /body\.body\.content\.media\.fileUrl: must NOT have more than 255/,
      ],
      [
        'media height',
        { body: { type: 'CARD', content: { media: { fileUrl: 'https://e.com/a.png', height: 'HUGE' } } } },
        /body\.body\.content\.media\.height: must be one of SHORT, MEDIUM, TALL/,
      ],
      [
        '5 card suggestions',
        { body: { type: 'CARD', content: { title: 't', suggestions: Array.from({ length: 5 }, () => reply()) } } },
        /body\.body\.content\.suggestions: must NOT have more than 4 items/,
      ],
      [
        '12 suggestions under a card',
        { body: { type: 'CARD', content: { title: 't' }, suggestions: Array.from({ length: 12 }, () => reply()) } },
        /body\.body\.suggestions: must NOT have more than 11/,
      ],
      [
        'card with neither title nor media',
        { body: { type: 'CARD', content: { description: 'just words' } } },
        /body\.body\.content: a card needs a title or media/,
      ],
      [
        'orientation',
        { body: { type: 'CARD', content: { title: 't' }, orientation: 'DIAGONAL' } },
        /body\.body\.orientation: must be one of VERTICAL, HORIZONTAL/,
      ],
      ['wrong key: card', { body: { type: 'CARD', card: { title: 't' } } }, /body\.body\.content: is required/],
      [
        'wrong key: card next to content',
        { body: { type: 'CARD', content: { title: 't' }, card: { title: 't' } } },
        /body\.body\.card: is not an allowed field/,
      ],
      ['wrong key: cards', { body: { type: 'CAROUSEL', contents: cards(2), cards: cards(2) } }, /body\.body\.cards: is not an allowed field/],
      ['wrong key: cards alone', { body: { type: 'CAROUSEL', cards: cards(2) } }, /body\.body\.contents: is required/],
      [
        'wrong key: media.url',
        { body: { type: 'CARD', content: { media: { fileUrl: 'https://e.com/a.png', url: 'https://e.com/a.png' } } } },
        /body\.body\.content\.media\.url: is not an allowed field/,
      ],
      [
        'wrong key: media.url alone',
        { body: { type: 'CARD', content: { media: { url: 'https://e.com/a.png' } } } },
        /body\.body\.content\.media\.fileUrl: is required/,
      ],
      ['carousel of 1', { body: { type: 'CAROUSEL', contents: cards(1) } }, /body\.body\.contents: must NOT have fewer than 2 items/],
      ['carousel of 11', { body: { type: 'CAROUSEL', contents: cards(11) } }, /body\.body\.contents: must NOT have more than 10 items/],
      [
        'carousel card title',
        { body: { type: 'CAROUSEL', contents: [...cards(2), { content: { title: 't'.repeat(201) } }] } },
        /body\.body\.contents\[2\]\.content\.title: must NOT have more than 200/,
      ],
      [
        'carousel plain card title',
        { body: { type: 'CAROUSEL', contents: [...cards(2), { title: 't'.repeat(201) }] } },
        /body\.body\.contents\[2\]\.title: must NOT have more than 200/,
      ],
      [
        'carousel card without title or media',
        { body: { type: 'CAROUSEL', contents: [...cards(2), { description: 'd' }] } },
        /body\.body\.contents\[2\]: a card needs a title or media/,
      ],
      [
        'carousel card suggestions',
        { body: { type: 'CAROUSEL', contents: [...cards(1), { content: { title: 't', suggestions: Array.from({ length: 5 }, () => reply()) } }] } },
        /body\.body\.contents\[1\]\.content\.suggestions: must NOT have more than 4/,
      ],
      ['cardWidth', { body: { type: 'CAROUSEL', contents: cards(2), cardWidth: 'LARGE' } }, /body\.body\.cardWidth: must be one of SMALL, MEDIUM/],
      ['file without fileUrl', { body: { type: 'FILE', filename: 'a.pdf' } }, /body\.body\.fileUrl: is required/],
      ['file url over 255', { body: { type: 'FILE', fileUrl: tooLongUrl } }, /body\.body\.fileUrl: must NOT have more than 255/],
      ['file url not http', { body: { type: 'FILE', fileUrl: 'ftp://e.com/a.pdf' } }, /body\.body\.fileUrl: must be an http or https URL/],
      ['unknown body type', { body: { type: 'VIDEO', fileUrl: 'https://e.com/a.mp4' } }, /body\.body\.type: must be one of TEXT, CARD, CAROUSEL, FILE/],
      ['text field on a card', { body: { type: 'CARD', content: { title: 't' }, text: 'hello' } }, /body\.body\.text: is not an allowed field/],
      ['no body', { body: undefined }, /body\.body: is required/],
      ['validity over 15 days', { validity: { amount: 16, timeUnit: 'DAYS' } }, /body\.validity: at most 15 days/],
      ['validity in hours over 15 days', { validity: { amount: 361, timeUnit: 'HOURS' } }, /body\.validity: at most 15 days/],
      ['validity unit', { validity: { amount: 1, timeUnit: 'WEEKS' } }, /body\.validity\.timeUnit: must be one of SECONDS, MINUTES, HOURS, DAYS/],
      ['validity amount', { validity: { amount: 0, timeUnit: 'HOURS' } }, /body\.validity\.amount: must be >= 1/],
      ['recipient', { recipient: { to: 'abc' } }, /body\.recipient\.to/, '400.003'],
      ['agent not in the list', { from: 'Other' }, /body\.from/, '400.005'],
      ['refClient over 140', { refClient: 'r'.repeat(141) }, /body\.refClient: at most 140/],
      ['callback URL', { callbackUrlStatus: 'not a url' }, /body\.callbackUrlStatus/],
      ['sentDate', { sentDate: 'soon' }, /body\.sentDate/, '400.007'],
      ['fallback without a fallback channel', { fallback: { text: 'Hello by SMS' } }, /body\.fallback: this RCS channel has no fallback SMS channel/],
      ['fallback without text', { fallback: { from: 'ACME' } }, /body\.fallback\.text: is required/],
      ['fallback with a wrong key', { fallback: { text: 'x', sender: 'ACME' } }, /body\.fallback\.sender: is not an allowed field/],
    ];
    const restricted = await rcsTenant(server, { balance: 5 });
    await request(server, 'PATCH', `/admin/v1/channels/${restricted.channelId}`, { key: server.adminKey, body: { fromFieldList: [restricted.agent] } });
    for (const [what, over, detail, code] of cases) {
      const who = what === 'agent not in the list' ? restricted : t;
      const res = await send(server, who, { ...ok, ...over });
      assertError(res, 400, code ?? '400.001', detail);
    }
    const f = await tenantWithFallback(server);
    assertError(await send(server, f, { ...ok, fallback: { text: '😀', from: 'WAYTOOLONGSENDER' } }), 400, '400.005', /body\.fallback\.from: at most 11/);
    assertError(await send(server, f, { ...ok, fallback: { text: 'a'.repeat(1531) } }), 400, '400.004', /body\.fallback\.text: 11 parts/);
    assert.equal(await balance(server, t), before, 'no charge for rejected requests');
    const list = await request(server, 'GET', '/rcs/v1/messages?pageSize=100', { key: t.key });
    assert.equal(list.body.items.length, 0, 'no message stored for rejected requests');
    const fl = await request(server, 'GET', '/sms/v1/messages', { key: f.smsKey });
    assert.equal(fl.body.items.length, 0, 'no fallback SMS for rejected requests');
  });

  test('channel types are enforced both ways: 403.005', async () => {
    const sms = await createTenant(server, { balance: 5 });
    const rcs = await rcsTenant(server);
    const rcsBody = { recipient: { to: '33612345678' }, body: text('hi') };
    assertError(await send(server, sms, rcsBody), 403, '403.005', /RCS channels; the key belongs to a SMS channel/);
    assertError(await request(server, 'GET', '/rcs/v1/messages', { key: sms.key }), 403, '403.005');
    assertError(await request(server, 'GET', '/rcs/v1/capabilities/33612345678', { key: sms.key }), 403, '403.005');
    assertError(await request(server, 'GET', '/rcs/v1/conversations', { key: sms.key }), 403, '403.005');
    const smsBody = { recipient: { to: '33612345678' }, body: { text: 'hi' } };
    assertError(
      await request(server, 'POST', '/sms/v1/messages', { key: rcs.key, body: smsBody }),
      403,
      '403.005',
      /SMS channels; the key belongs to a RCS channel/,
    );
    assertError(await request(server, 'GET', '/sms/v1/messages', { key: rcs.key }), 403, '403.005');
    assertError(await request(server, 'POST', '/rcs/v1/messages', { body: rcsBody }), 401, '401.001');
    const sent = await send(server, rcs, rcsBody);
    assert.equal(sent.status, 201);
    assertError(await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: sms.key }), 404, '404.001');
    assertError(await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: rcs.key, body: { messageId: sent.body.messageId } }), 403, '403.004');
  });

  test('capability: numbers ending in 9 cannot receive RCS; without fallback they end UNDELIVERABLE at no charge', async () => {
    const t = await rcsTenant(server, { balance: 1 });
    const yes = await request(server, 'GET', '/rcs/v1/capabilities/+33612345678', { key: t.key });
    assert.equal(yes.status, 200, yes.text);
    assert.equal(yes.body.msisdn, '33612345678');
    assert.equal(yes.body.capable, true);
    assert.ok(yes.body.features.includes('RICHCARD_CAROUSEL'));
    const no = await request(server, 'GET', '/rcs/v1/capabilities/0033612345679', { key: t.key });
    assert.deepEqual(no.body, { msisdn: '33612345679', capable: false, features: [] });
    const invalid = await request(server, 'GET', '/rcs/v1/capabilities/3312345678', { key: t.key });
    assert.equal(invalid.body.capable, false, 'not a valid number: not capable');
    assertError(await request(server, 'GET', '/rcs/v1/capabilities/hello', { key: t.key }), 400, '400.003', /path\.msisdn/);

    const r = await send(server, t, {
      recipient: { to: '33612345679' },
      body: { type: 'CARD', content: { title: 'Offer' } },
      callbackUrlStatus: `${receiver.url}/cap`,
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual([r.body.status.value, r.body.status.detail], ['UNDELIVERABLE', 'NOT_RCS_CAPABLE']);
    assert.deepEqual(r.body.price, { amount: 0, currency: 'EUR', kind: 'SINGLE' });
    assert.equal(r.body.fallbackMessageId, undefined);
    assert.equal(await balance(server, t), 1);
    const hook = await eventually(
      async () => receiver.delivered().find((x) => x.url === '/cap' && x.json?.messageId === r.body.messageId),
      10_000,
      'status webhook',
    );
    assert.equal(hook.json.status.detail, 'NOT_RCS_CAPABLE');
    const submitted = await server.app.store.db.selectFrom('connector_records').select('key').where('key', '=', r.body.messageId).execute();
    assert.equal(submitted.length, 0, 'never sent to the operator');
    const bad = await send(server, t, { recipient: { to: '3312345678' }, body: text('x') });
    assert.deepEqual([bad.body.status.value, bad.body.status.detail, bad.body.price.amount], ['UNDELIVERABLE', 'INVALID_PHONE_NUMBER', 0]);
  });

  test('fallback on a non-capable recipient: RCS UNDELIVERED / FALLBACK_SMS free, an ordinary SMS billed, delivered and reported', async () => {
    const t = await tenantWithFallback(server, 2);
    const cb = `${receiver.url}/fb-now`;
    const r = await send(server, t, {
      recipient: { to: '33612345679' },
      body: { type: 'CARD', content: cardContent('Offer') },
      refClient: 'order-9',
      callbackUrlStatus: cb,
      fallback: { text: 'Our offer: https://e.com/o', from: 'ACME' },
    });
    assert.equal(r.status, 201, r.text);
    const m = r.body;
    assert.deepEqual([m.status.value, m.status.detail], ['UNDELIVERED', 'FALLBACK_SMS']);
    assert.deepEqual(m.price, { amount: 0, currency: 'EUR', kind: 'SINGLE' });
    assert.deepEqual(m.fallback, { text: 'Our offer: https://e.com/o', from: 'ACME' });
    assert.match(m.fallbackMessageId, /^[0-9a-f-]{36}$/);
    const sms = await eventually(
      async () => {
        const g = await request(server, 'GET', `/sms/v1/messages/${m.fallbackMessageId}`, { key: t.smsKey });
        return g.body.status?.value === 'DELIVERED' ? g.body : undefined;
      },
      15_000,
      'fallback SMS delivered',
    );
    assert.equal(sms.type, 'SMS');
    assert.equal(sms.channel.channelId, t.smsChannelId);
    assert.equal(sms.recipient.to, '33612345679');
    assert.equal(sms.from, 'ACME');
    assert.equal(sms.body.text, 'Our offer: https://e.com/o');
    assert.equal(sms.refClient, 'order-9');
    assert.equal(sms.fallbackFor, m.messageId);
    assert.deepEqual(sms.price, { amount: FR_SMS, currency: 'EUR' });
    assert.equal(await balance(server, t), round6(2 - FR_SMS), 'only the SMS is charged');
    const hooks = await eventually(
      async () => {
        const got = receiver.delivered().filter((x) => x.url === '/fb-now');
        const rcsHook = got.find((x) => x.json.messageId === m.messageId);
        const smsHook = got.find((x) => x.json.messageId === m.fallbackMessageId && x.json.status.value === 'DELIVERED');
        return rcsHook && smsHook ? { rcsHook, smsHook } : undefined;
      },
      15_000,
      'RCS and SMS webhooks',
    );
    assert.deepEqual([hooks.rcsHook.json.status.value, hooks.rcsHook.json.status.detail], ['UNDELIVERED', 'FALLBACK_SMS']);
    assert.equal(hooks.rcsHook.json.fallbackMessageId, m.fallbackMessageId);
    assert.equal(hooks.smsHook.json.type, 'SMS');
    const got = await request(server, 'GET', `/rcs/v1/messages/${m.messageId}`, { key: t.key });
    assert.deepEqual([got.body.status.value, got.body.fallbackMessageId], ['UNDELIVERED', m.fallbackMessageId]);
    const smsList = await request(server, 'GET', '/sms/v1/messages', { key: t.smsKey });
    assert.deepEqual(
      smsList.body.items.map((x: any) => x.messageId),
      [m.fallbackMessageId],
    );
    const rcsList = await request(server, 'GET', '/rcs/v1/messages', { key: t.key });
    assert.deepEqual(
      rcsList.body.items.map((x: any) => x.messageId),
      [m.messageId],
      'the SMS is not listed as RCS',
    );

    const capable = await send(server, t, { recipient: { to: '33612345678' }, body: text('hi'), fallback: { text: 'hi by SMS' } });
    assert.equal(capable.body.status.value, 'ENROUTE', 'a capable recipient gets the RCS message');
    assert.equal(capable.body.fallbackMessageId, undefined);
  });

  test('fallback at the end of validity: the RCS message is revoked and refunded, the SMS goes out and is reported', async () => {
    const t = await tenantWithFallback(server, 2);
    const cb = `${receiver.url}/fb-expiry`;
    const r = await send(server, t, {
      recipient: { to: '33612340007' },
      body: text('Your table is ready'),
      validity: { amount: 2, timeUnit: 'SECONDS' },
      callbackUrlStatus: cb,
      fallback: { text: 'Your table is ready (SMS)' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status.value, 'ENROUTE');
    assert.deepEqual(r.body.validity, { amount: 2, timeUnit: 'SECONDS' });
    assert.equal(await balance(server, t), round6(2 - BASIC));
    const ended = await statusOf(server, t, r.body.messageId, ['UNDELIVERED', 'DELIVERED', 'READ'], 'the expired RCS message');
    assert.deepEqual([ended.status.value, ended.status.detail], ['UNDELIVERED', 'FALLBACK_SMS']);
    assert.deepEqual(ended.price, { amount: 0, currency: 'EUR', kind: 'BASIC' }, 'refunded');
    const smsId = ended.fallbackMessageId;
    const sms = await eventually(
      async () => {
        const g = await request(server, 'GET', `/sms/v1/messages/${smsId}`, { key: t.smsKey });
        return g.body.status?.value === 'DELIVERED' ? g.body : undefined;
      },
      15_000,
      'fallback SMS delivered',
    );
    assert.equal(sms.body.text, 'Your table is ready (SMS)');
    assert.equal(sms.from, 'ACME', "the SMS channel's default sender");
    assert.equal(await balance(server, t), round6(2 - FR_SMS));
    const hooks = await eventually(
      async () => {
        const got = receiver.delivered().filter((x) => x.url === '/fb-expiry');
        const rcsHook = got.find((x) => x.json.messageId === r.body.messageId && x.json.status.value === 'UNDELIVERED');
        const smsHook = got.find((x) => x.json.messageId === smsId && x.json.status.value === 'DELIVERED');
        return rcsHook && smsHook ? { rcsHook, smsHook } : undefined;
      },
      15_000,
      'RCS and SMS webhooks',
    );
    assert.equal(hooks.rcsHook.json.status.detail, 'FALLBACK_SMS');
    assert.equal(hooks.smsHook.json.fallbackFor, r.body.messageId);
    const events = await request(server, 'GET', `/rcs/v1/messages/${r.body.messageId}/events`, { key: t.key });
    assert.deepEqual(
      events.body.items.map((e: any) => [e.status, e.detail]),
      [
        ['ENROUTE', undefined],
        ['UNDELIVERED', 'FALLBACK_SMS'],
      ],
    );
    const sub = await server.app.store.db.selectFrom('connector_records').selectAll().where('key', '=', r.body.messageId).executeTakeFirst();
    assert.ok(sub, 'the operator took it');
    assert.equal(sub.due_at, null, 'revoked at the operator');
    assert.equal(JSON.parse(sub.data).next, null, 'nothing owed any more');

    const plain = await rcsTenant(server, { balance: 1 });
    const noFallback = await send(server, plain, { recipient: { to: '33612340007' }, body: text('x'), validity: { amount: 1, timeUnit: 'SECONDS' } });
    const expired = await statusOf(server, plain, noFallback.body.messageId, ['UNDELIVERED'], 'the RCS message without fallback');
    assert.deepEqual([expired.status.detail, expired.price.amount, expired.fallbackMessageId], ['EXPIRED', BASIC, undefined]);
  });

  test('READ: the simulator reads delivered messages after a delay; READ can be injected; webhooks for each', async () => {
    const t = await rcsTenant(server, { balance: 1 });
    const cb = `${receiver.url}/read`;
    const auto = await send(server, t, { recipient: { to: '33612345678' }, body: text('hello'), callbackUrlStatus: cb });
    const read = await statusOf(server, t, auto.body.messageId, ['READ'], 'the automatic read');
    assert.equal('detail' in read.status, false);
    const events = await request(server, 'GET', `/rcs/v1/messages/${auto.body.messageId}/events`, { key: t.key });
    assert.deepEqual(
      events.body.items.map((e: any) => e.status),
      ['ENROUTE', 'DELIVERED', 'READ'],
    );
    await eventually(
      async () => {
        const statuses = receiver
          .delivered()
          .filter((x) => x.url === '/read' && x.json.messageId === auto.body.messageId)
          .map((x) => x.json.status.value);
        return statuses.includes('DELIVERED') && statuses.includes('READ') ? true : undefined;
      },
      10_000,
      'DELIVERED and READ webhooks',
    );

    const manual = await send(server, t, { recipient: { to: '33612340008' }, body: text('hello') });
    await statusOf(server, t, manual.body.messageId, ['DELIVERED'], 'delivery');
    const injected = await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: server.adminKey, body: { messageId: manual.body.messageId } });
    assert.equal(injected.status, 200, injected.text);
    assert.equal(injected.body.status.value, 'READ');
    const again = await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: server.adminKey, body: { messageId: manual.body.messageId } });
    assert.equal(again.body.status.value, 'READ', 'a second read changes nothing');
    const evs = await request(server, 'GET', `/rcs/v1/messages/${manual.body.messageId}/events`, { key: t.key });
    assert.deepEqual(
      evs.body.items.map((e: any) => e.status),
      ['ENROUTE', 'DELIVERED', 'READ'],
    );

    const failed = await send(server, t, { recipient: { to: '33612340001' }, body: text('x') });
    await statusOf(server, t, failed.body.messageId, ['UNDELIVERED'], 'the undelivered one');
    assertError(
      await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: server.adminKey, body: { messageId: failed.body.messageId } }),
      409,
      '409.001',
      /UNDELIVERED/,
    );
    assertError(
      await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: server.adminKey, body: { messageId: '01900000-0000-7000-8000-000000000000' } }),
      404,
      '404.001',
    );
    assertError(await request(server, 'POST', '/admin/v1/simulator/rcs/read', { key: server.adminKey, body: {} }), 400, '400.001', /messageId/);
  });

  test('MO of each type is stored, listed and sent to callbackUrlMo with its originMessageId', async () => {
    const t = await rcsTenant(server, { balance: 1, channel: { defaultCallbackUrlMo: `${receiver.url}/mo-default` } });
    const user = '33611111231';
    const mt = await send(server, t, {
      recipient: { to: user },
      body: text('How was your visit?'),
      callbackUrlMo: `${receiver.url}/mo`,
      refClient: 'survey-1',
    });
    assert.equal(mt.status, 201);
    const bodies = [
      { type: 'TEXT', text: 'Great, thanks' },
      { type: 'SUGGESTION', text: 'Yes', postbackData: 'survey:yes' },
      { type: 'LOCATION', latitude: 48.8584, longitude: 2.2945 },
      { type: 'FILE', fileUrl: 'https://files.example.com/photo.jpg', filename: 'photo.jpg', contentType: 'image/jpeg' },
    ];
    for (const body of bodies) await injectMo(server, `+${user}`, t.agent, body);
    const hooks = await eventually(
      async () => {
        const got = receiver.delivered().filter((x) => x.url === '/mo' && x.json?.originMessageId === mt.body.messageId);
        return got.length === bodies.length ? got : undefined;
      },
      10_000,
      'MO webhooks',
    );
    for (const body of bodies) {
      const h = hooks.find((x) => x.json.body.type === body.type);
      assert.ok(h, body.type);
      assert.deepEqual(h.json.body, body, body.type);
      assert.equal(h.json.type, 'RCS');
      assert.equal(h.json.direction, 'MO');
      assert.equal(h.json.from, user);
      assert.equal(h.json.channel.channelId, t.channelId);
      assert.equal(h.json.refClient, 'survey-1', 'the MT reference comes back');
      assert.equal(h.json.status, undefined, 'an MO has no status');
    }
    const mo = await request(server, 'GET', '/rcs/v1/messages?searchBy[direction]=MO&pageSize=2', { key: t.key });
    assert.equal(mo.status, 200);
    assert.deepEqual([mo.body.page, mo.body.pageSize, mo.body.items.length], [1, 2, 2]);
    const mo2 = await request(server, 'GET', '/rcs/v1/messages?searchBy[direction]=MO&pageSize=2&page=2', { key: t.key });
    assert.equal(mo2.body.items.length, 2);
    const all = [...mo.body.items, ...mo2.body.items];
    assert.deepEqual(new Set(all.map((m: any) => m.body.type)), new Set(['TEXT', 'SUGGESTION', 'LOCATION', 'FILE']));
    assert.ok(all.every((m: any) => m.direction === 'MO' && m.originMessageId === mt.body.messageId));
    const mtList = await request(server, 'GET', '/rcs/v1/messages', { key: t.key });
    assert.deepEqual(
      mtList.body.items.map((m: any) => m.messageId),
      [mt.body.messageId],
      'MT by default',
    );

    const stranger = '33611111232';
    await injectMo(server, stranger, t.agent, { type: 'TEXT', text: 'Hello?' });
    const first = await eventually(
      async () => receiver.delivered().find((x) => x.url === '/mo-default' && x.json?.from === stranger),
      10_000,
      'MO to the default URL',
    );
    assert.equal(first.json.originMessageId, undefined, 'no MT to answer');

    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'LOCATION', latitude: 100, longitude: 0 }, /body\.body\.latitude/],
      [{ type: 'TEXT' }, /body\.body\.text: is required/],
      [{ type: 'SUGGESTION', text: 'x' }, /body\.body\.postbackData: is required/],
      [{ type: 'FILE', fileUrl: 'https://e.com/a' }, /body\.body\.filename: is required/],
      [{ type: 'STICKER' }, /body\.body\.type/],
    ];
    for (const [body, detail] of bad) {
      assertError(
        await request(server, 'POST', '/admin/v1/simulator/rcs/mo', { key: server.adminKey, body: { from: user, to: t.agent, body } }),
        400,
        '400.001',
        detail,
      );
    }
  });

  test('conversations: an MO opens one for 24 hours; agent messages in it are CONVERSATION, charged once; consumption by kind', async () => {
    const t = await rcsTenant(server, { balance: 5 });
    const user = '33622221231';
    const before = await send(server, t, { recipient: { to: user }, body: text('Hi!') });
    assert.deepEqual(before.body.price, { amount: BASIC, currency: 'EUR', kind: 'BASIC' });
    assert.equal(before.body.conversationId, undefined);
    await injectMo(server, user, t.agent, { type: 'TEXT', text: 'Tell me more' });
    const convs = await eventually(
      async () => {
        const r = await request(server, 'GET', '/rcs/v1/conversations', { key: t.key });
        return r.body.items?.length === 1 ? r.body : undefined;
      },
      10_000,
      'the conversation',
    );
    const conv = convs.items[0];
    assert.equal(conv.status, 'OPEN');
    assert.equal(conv.agent, t.agent);
    assert.deepEqual(conv.recipient, { to: user });
    assert.equal(Date.parse(conv.expiresAt) - Date.parse(conv.openedAt), 24 * 3_600_000);
    assert.equal(conv.messages.length, 1);
    assert.equal(conv.messages[0].direction, 'MO');
    assert.equal(conv.openedByMessageId, conv.messages[0].messageId);

    const inside = [];
    for (const body of [text('Here it is'), { type: 'CARD', content: cardContent('Catalogue') }, text('a'.repeat(500))]) {
      const r = await send(server, t, { recipient: { to: user }, body });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.conversationId, conv.conversationId);
      inside.push(r.body);
    }
    assert.deepEqual(
      inside.map((m) => m.price),
      [
        { amount: CONVERSATION, currency: 'EUR', kind: 'CONVERSATION' },
        { amount: 0, currency: 'EUR', kind: 'CONVERSATION' },
        { amount: 0, currency: 'EUR', kind: 'CONVERSATION' },
      ],
    );
    const other = await send(server, t, { recipient: { to: '33622221232' }, body: text('Not in a conversation') });
    assert.equal(other.body.price.kind, 'BASIC');
    assert.equal(await balance(server, t), round6(5 - BASIC - CONVERSATION - BASIC));

    const one = await request(server, 'GET', `/rcs/v1/conversations/${conv.conversationId}`, { key: t.key });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.price, { amount: CONVERSATION, currency: 'EUR', kind: 'CONVERSATION' });
    assert.equal(one.body.messageCount, 4);
    assert.deepEqual(
      one.body.messages.map((m: any) => m.direction),
      ['MO', 'MT', 'MT', 'MT'],
    );
    assert.deepEqual(
      one.body.messages.slice(1).map((m: any) => m.messageId),
      inside.map((m) => m.messageId),
    );
    assert.equal(one.body.href, `${server.url}/rcs/v1/conversations/${conv.conversationId}`);
    const byUser = await request(server, 'GET', `/rcs/v1/conversations?searchBy[recipient.to]=%2B${user}&searchBy[status]=OPEN`, { key: t.key });
    assert.equal(byUser.body.items.length, 1);
    const closed = await request(server, 'GET', '/rcs/v1/conversations?searchBy[status]=CLOSED', { key: t.key });
    assert.equal(closed.body.items.length, 0);
    const stranger = await rcsTenant(server);
    assertError(await request(server, 'GET', `/rcs/v1/conversations/${conv.conversationId}`, { key: stranger.key }), 404, '404.001');
    assertError(await request(server, 'GET', '/rcs/v1/conversations/not-an-id', { key: t.key }), 400, '400.001');

    // A second MO inside the window joins the same conversation.
    await injectMo(server, user, t.agent, { type: 'SUGGESTION', text: 'Buy', postbackData: 'buy' });
    await eventually(
      async () => {
        const r = await request(server, 'GET', `/rcs/v1/conversations/${conv.conversationId}`, { key: t.key });
        return r.body.messageCount === 5 ? true : undefined;
      },
      10_000,
      'the second MO in the conversation',
    );

    // Past 24 hours the conversation is closed: agent messages are priced on their own again, a new MO opens another.
    await server.app.store.db
      .updateTable('rcs_conversations')
      .set({ opened_at: Date.now() - 25 * 3_600_000, expires_at: Date.now() - 3_600_000 })
      .where('id', '=', conv.conversationId)
      .execute();
    const later = await send(server, t, { recipient: { to: user }, body: text('Still there?') });
    assert.equal(later.body.price.kind, 'BASIC');
    await injectMo(server, user, t.agent, { type: 'TEXT', text: 'Yes' });
    const second = await eventually(
      async () => {
        const r = await request(server, 'GET', '/rcs/v1/conversations?searchBy[status]=OPEN', { key: t.key });
        return r.body.items?.length === 1 && r.body.items[0].conversationId !== conv.conversationId ? r.body.items[0] : undefined;
      },
      10_000,
      'a new conversation',
    );
    const again = await send(server, t, { recipient: { to: user }, body: text('Welcome back') });
    assert.deepEqual([again.body.price.kind, again.body.price.amount, again.body.conversationId], ['CONVERSATION', CONVERSATION, second.conversationId]);
    const closedNow = await request(server, 'GET', '/rcs/v1/conversations?searchBy[status]=CLOSED&startDate=2020-01-01T00:00:00Z', { key: t.key });
    assert.deepEqual(
      closedNow.body.items.map((c: any) => c.conversationId),
      [conv.conversationId],
    );

    const rollups = await server.app.store.db
      .selectFrom('consumption_rollups')
      .select(['price_kind', 'channel_type', 'quantity', 'messages', 'amount'])
      .where('channel_id', '=', t.channelId)
      .execute();
    const byKind = new Map<string, { quantity: number; messages: number; amount: number }>();
    for (const r of rollups) {
      assert.equal(r.channel_type, 'RCS');
      const k = byKind.get(r.price_kind) ?? { quantity: 0, messages: 0, amount: 0 };
      byKind.set(r.price_kind, { quantity: k.quantity + Number(r.quantity), messages: k.messages + Number(r.messages), amount: k.amount + Number(r.amount) });
    }
    assert.deepEqual(byKind.get('BASIC'), { quantity: 3, messages: 3, amount: 3 * 40_000 });
    assert.deepEqual(byKind.get('CONVERSATION'), { quantity: 2, messages: 4, amount: 2 * 90_000 });
    assert.equal(await balance(server, t), round6(5 - 3 * BASIC - 2 * CONVERSATION));
    const consumption = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=RCS&searchBy[periodType]=DAY', { key: t.key });
    assert.equal(consumption.status, 200, consumption.text);
    assert.equal(consumption.body.items.length, 1);
    assert.equal(consumption.body.items[0].type, 'RCS');
    assert.equal(consumption.body.items[0].quantity, 5, 'three BASIC messages and two conversations');
    assert.deepEqual(consumption.body.items[0].price, { amount: round6(3 * BASIC + 2 * CONVERSATION), currency: 'EUR' });
    assert.deepEqual(
      consumption.body.items[0].priceKinds,
      [
        { kind: 'BASIC', quantity: 3, messages: 3, price: { amount: round6(3 * BASIC), currency: 'EUR' } },
        { kind: 'CONVERSATION', quantity: 2, messages: 4, price: { amount: round6(2 * CONVERSATION), currency: 'EUR' } },
      ],
      'consumption breaks the charge down by price kind',
    );
  });

  test('concurrent sends into one conversation take its charge once', async () => {
    const t = await rcsTenant(server, { balance: 5 });
    const user = '33633331231';
    await injectMo(server, user, t.agent, { type: 'TEXT', text: 'Hi' });
    await eventually(
      async () => {
        const r = await request(server, 'GET', '/rcs/v1/conversations', { key: t.key });
        return r.body.items?.length === 1 ? true : undefined;
      },
      10_000,
      'the conversation',
    );
    const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => send(server, t, { recipient: { to: user }, body: text(`reply ${i}`) })));
    assert.ok(sent.every((r) => r.status === 201 && r.body.price.kind === 'CONVERSATION'));
    assert.equal(sent.filter((r) => r.body.price.amount === CONVERSATION).length, 1);
    assert.equal(await balance(server, t), round6(5 - CONVERSATION));
  });

  test('scheduled RCS messages can be cancelled and are refunded; Idempotency-Key replays the first answer', async () => {
    const t = await rcsTenant(server, { balance: 1 });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const s = await send(server, t, { recipient: { to: '33612345678' }, body: text('later'), sentDate: later });
    assert.equal(s.body.status.value, 'SCHEDULED');
    assert.equal(await balance(server, t), round6(1 - BASIC));
    const c = await request(server, 'DELETE', `/rcs/v1/messages/${s.body.messageId}`, { key: t.key });
    assert.deepEqual([c.status, c.body.status.value, c.body.price.amount], [200, 'CANCELLED', 0]);
    assert.equal(await balance(server, t), 1);

    const h = { 'idempotency-key': 'rcs-1' };
    const a = await send(server, t, { recipient: { to: '33612345678' }, body: text('once') }, h);
    const b = await send(server, t, { recipient: { to: '33612345678' }, body: text('once') }, h);
    assert.equal(a.status, 201);
    assert.equal(b.body.messageId, a.body.messageId);
    assert.equal(await balance(server, t), round6(1 - BASIC));
    assertError(await send(server, t, { recipient: { to: '33612345678' }, body: text('twice') }, h), 422, '422.001');
  });
});
