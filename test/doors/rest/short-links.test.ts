import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../../src/config/index.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const FR_PRICE = 0.045;
const BASE = 'https://t.example/l/';
const LONG_URL = 'https://shop.example.com/offers/winter-sale?utm_source=sms&utm_campaign=winter&customer=12345';
const CODE = /^[0-9A-Za-z]{10}$/;

function verify(secret: string, r: ReceivedRequest): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

/** The codes of the short links in a text. */
function codesIn(text: string): string[] {
  return [...text.matchAll(/https:\/\/t\.example\/l\/([0-9A-Za-z]+)/g)].map((m) => m[1]!);
}

/** Follows a short link on the server, not following the redirect. */
function follow(server: TestServer, code: string) {
  return fetch(`${server.url}/l/${code}`, { redirect: 'manual' });
}

forEachDialect('short links', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect, { TERN_SHORT_LINK_BASE: 'https://t.example/l', TERN_SHORT_LINK_DAYS: '7' });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('a channel with short links: each message gets its own link, counted in parts and price; a click redirects, is recorded and reaches the webhook', async () => {
    const t = await createTenant(server, { balance: 5, channel: { shortLinks: true, defaultCallbackUrlStatus: `${receiver.url}/status` } });
    const channel = await request(server, 'GET', `/admin/v1/channels/${t.channelId}`, { key: server.adminKey });
    assert.equal(channel.body.shortLinks, true, channel.text);
    const { secret } = (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body;

    // 150 characters with the long URL (one part once shortened, two as written).
    const text = `Winter sale, up to 50% off everything in store and online this week only: ${LONG_URL}.`;
    assert.ok(text.length > 160);
    const sent: any[] = [];
    for (const to of ['33612345678', '33612345679']) {
      const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text }, refClient: `ref-${to}` } });
      assert.equal(r.status, 201, r.text);
      sent.push(r.body);
    }
    const codes = sent.map((m) => codesIn(m.body.text));
    for (const [i, m] of sent.entries()) {
      assert.equal(codes[i]!.length, 1, m.body.text);
      assert.match(codes[i]![0]!, CODE);
      const expected = text.replace(LONG_URL, `${BASE}${codes[i]![0]}`);
      assert.equal(m.body.text, expected);
      assert.equal(m.body.length, expected.length);
      assert.equal(m.body.messagePartCount, 1);
      assert.deepEqual(m.price, { amount: FR_PRICE, currency: 'EUR' });
      const stored = await request(server, 'GET', `/sms/v1/messages/${m.messageId}`, { key: t.key });
      assert.equal(stored.body.body.text, expected);
    }
    assert.notEqual(codes[0]![0], codes[1]![0], 'one link per recipient');

    const quote = await request(server, 'POST', '/sms/v1/messages/quote', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text } } });
    assert.equal(quote.status, 200, quote.text);
    assert.deepEqual(
      [quote.body.body.length, quote.body.body.messagePartCount, quote.body.price.amount],
      [sent[0].body.length, 1, FR_PRICE],
      'the quote counts the short link',
    );

    const [code] = codes[0]!;
    const res = await follow(server, code!);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), LONG_URL);

    const clicked = await eventually(
      () => receiver.delivered().find((r) => r.json?.event === 'CLICKED' && r.json.messageId === sent[0].messageId),
      15_000,
      'CLICKED webhook',
    );
    assert.deepEqual(verify(secret, clicked), clicked.json, 'signed like every webhook');
    assert.equal(clicked.json.url, LONG_URL);
    assert.equal(clicked.json.code, code);
    assert.equal(clicked.json.refClient, 'ref-33612345678');
    assert.ok(!Number.isNaN(Date.parse(clicked.json.date)));

    const events = await request(server, 'GET', `/sms/v1/messages/${sent[0].messageId}/events`, { key: t.key });
    assert.equal(events.body.items.filter((e: any) => e.kind === 'CLICK').length, 1, events.text);
    const other = await request(server, 'GET', `/sms/v1/messages/${sent[1].messageId}/events`, { key: t.key });
    assert.equal(other.body.items.filter((e: any) => e.kind === 'CLICK').length, 0, 'a click counts for its own message only');

    const links = await request(server, 'GET', `/sms/v1/messages/${sent[0].messageId}/links`, { key: t.key });
    assert.equal(links.status, 200, links.text);
    assert.equal(links.body.items.length, 1);
    const [link] = links.body.items;
    assert.deepEqual([link.code, link.url, link.clicks], [code, LONG_URL, 1]);
    assert.ok(Date.parse(link.lastClickDate) > 0 && Date.parse(link.expirationDate) > Date.parse(link.lastClickDate), links.text);
    const unclicked = await request(server, 'GET', `/sms/v1/messages/${sent[1].messageId}/links`, { key: t.key });
    assert.deepEqual(
      unclicked.body.items.map((l: any) => [l.code, l.clicks, 'lastClickDate' in l]),
      [[codes[1]![0], 0, false]],
    );
    // Another organisation's key does not see the message's links; a message without links has none.
    const stranger = await createTenant(server, { balance: 1 });
    assertError(await request(server, 'GET', `/sms/v1/messages/${sent[0].messageId}/links`, { key: stranger.key }), 404, '404.001');
    const plain = await request(server, 'POST', '/sms/v1/messages', {
      key: stranger.key,
      body: { recipient: { to: '33612345678' }, body: { text: `See ${LONG_URL}` } },
    });
    assert.deepEqual((await request(server, 'GET', `/sms/v1/messages/${plain.body.messageId}/links`, { key: stranger.key })).body, { items: [] });
    assertError(await request(server, 'GET', '/sms/v1/messages/not-an-id/links', { key: t.key }), 400, '400.001');

    // The consumption counts the click beside the messages, in the period it happened.
    const consumption = await request(server, 'GET', `/commons/v1/consumptions?searchBy[periodType]=DAY&searchBy[channel.channelId]=${t.channelId}`, {
      key: t.key,
    });
    assert.equal(consumption.status, 200, consumption.text);
    assert.deepEqual(
      consumption.body.items.map((r: any) => [r.quantity, r.clicks]),
      [[2, 1]],
      consumption.text,
    );
    const strangers = await request(server, 'GET', '/commons/v1/consumptions?searchBy[periodType]=DAY', { key: stranger.key });
    assert.deepEqual(
      strangers.body.items.map((r: any) => r.clicks),
      [0],
      'clicks of another organisation are not counted',
    );

    const clicks = await server.app.store.db.selectFrom('short_link_clicks').selectAll().where('message_id', '=', sent[0].messageId).execute();
    assert.equal(clicks.length, 1);
    assert.equal(clicks[0]!.code, code);
    assert.ok(!clicks[0]!.visitor_hash.includes('127.0.0.1'), 'no address kept');
    assert.ok(clicks[0]!.clicked_at > 0);
  });

  test('a campaign: every recipient has its own link, and the campaign counts the clicks', async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING', channel: { shortLinks: true } });
    const created = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: '33612345678' }, { to: '33612345679' }, { to: '33612345670' }], body: { text: `Sale: ${LONG_URL}` } },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.body.counts.clicks, created.body.counts.links, created.body.counts.clickedLinks], [0, 3, 0]);
    const messages = await server.app.store.db.selectFrom('messages').select(['id', 'body']).where('campaign_id', '=', created.body.campaignId).execute();
    const codes = messages.map((m) => codesIn(JSON.parse(m.body).text)[0]!);
    assert.equal(new Set(codes).size, 3, 'one link per recipient');
    for (const code of [codes[0]!, codes[0]!, codes[2]!]) assert.equal((await follow(server, code)).status, 302);
    const read = await request(server, 'GET', `/sms/v1/campaigns/${created.body.campaignId}`, { key: t.key });
    assert.equal(read.body.counts.clicks, 3, read.text);
    assert.deepEqual([read.body.counts.links, read.body.counts.clickedLinks], [3, 2], 'three links, two of them clicked');
    const listed = await request(server, 'GET', '/sms/v1/campaigns', { key: t.key });
    const mine = listed.body.items.find((c: any) => c.campaignId === created.body.campaignId);
    assert.deepEqual([mine.counts.clicks, mine.counts.links, mine.counts.clickedLinks], [3, 3, 2], listed.text);
  });

  test("a scheduled campaign's new text gets new links and the STOP mention again, priced again; the old links are gone", async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING', channel: { shortLinks: true } });
    const sentDate = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const created = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: '33612345678' }, { to: '33612345679' }], body: { text: `Sale ${LONG_URL}` }, sentDate },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.campaignId;
    const read = async () =>
      (
        await server.app.store.db.selectFrom('messages').select(['id', 'body', 'price', 'part_count', 'accepted_at']).where('campaign_id', '=', id).execute()
      ).map((m) => ({ ...m, text: JSON.parse(m.body).text as string }));
    const before = await read();
    const oldCodes = before.flatMap((m) => codesIn(m.text));
    assert.equal(oldCodes.length, 2);
    assert.ok(
      before.every((m) => m.text.endsWith('\nSTOP au 36111')),
      'marketing to French numbers carries the mention',
    );

    // Refused (too long once shortened and with the mention): nothing changes, the links still work.
    const tooLong = `${'y'.repeat(1510)} ${LONG_URL}`;
    assertError(
      await request(server, 'PATCH', `/sms/v1/campaigns/${id}`, { key: t.key, body: { body: { text: tooLong } } }),
      400,
      '400.004',
      /body\.body\.text/,
    );
    assert.deepEqual(
      (await read()).map((m) => m.text),
      before.map((m) => m.text),
    );
    assert.equal((await follow(server, oldCodes[0]!)).status, 302);

    const text = `${'x'.repeat(100)} New offer: ${LONG_URL}/new and ${LONG_URL}/two`;
    const changed = await request(server, 'PATCH', `/sms/v1/campaigns/${id}`, { key: t.key, body: { body: { text } } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.body.text, text, 'the campaign keeps the text as written');
    assert.equal(changed.body.counts.links, 4, changed.text);
    const after = await read();
    const newCodes: string[] = [];
    for (const m of after) {
      const codes = codesIn(m.text);
      assert.equal(codes.length, 2, m.text);
      newCodes.push(...codes);
      assert.equal(m.text, `${'x'.repeat(100)} New offer: ${BASE}${codes[0]} and ${BASE}${codes[1]}\nSTOP au 36111`);
      // 100 + 12 + 30 + 5 + 30 + 14 = 191 characters: two parts, each at the price of the part accepted.
      assert.equal(m.part_count, 2);
      assert.equal(Number(m.price), 2 * Number(before.find((b) => b.id === m.id)!.price), 'priced again per part');
      const links = await server.app.store.db.selectFrom('short_links').selectAll().where('message_id', '=', m.id).orderBy('url').execute();
      assert.deepEqual(
        links.map((l) => [l.url, Number(l.expires_at) - Number(m.accepted_at)]),
        [
          [`${LONG_URL}/new`, 7 * 86_400_000],
          [`${LONG_URL}/two`, 7 * 86_400_000],
        ],
        'links expire counted from the accept, as at accept',
      );
    }
    assert.equal(new Set([...newCodes, ...oldCodes]).size, 6, 'every message has links of its own, none reused');
    for (const old of oldCodes) assert.equal((await follow(server, old)).status, 404, 'the old links went with the old text');
    const res = await follow(server, newCodes[0]!);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `${LONG_URL}/new`);
  });

  test('legacy HTTP sends on the channel get short links too', async () => {
    const t = await createTenant(server, { balance: 5, channel: { shortLinks: true } });
    const q = new URLSearchParams({ accessToken: t.key, message: `Promo ${LONG_URL}`, numero: '33612345678' });
    const res = await fetch(`${server.url}/http/1.6/sendSMS.do?${q}`);
    const answer = await res.text();
    const id = /^0 \| Accepted \| ([0-9a-f-]{36})$/.exec(answer)?.[1];
    assert.ok(id, answer);
    const m = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
    const [code] = codesIn(m.body.body.text);
    assert.equal(m.body.body.text, `Promo ${BASE}${code}`);
    const r = await follow(server, code!);
    assert.equal(r.headers.get('location'), LONG_URL);
  });

  test('unknown and expired codes answer a plain 404', async () => {
    const t = await createTenant(server, { balance: 5, channel: { shortLinks: true } });
    const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: `See ${LONG_URL}` } } });
    assert.equal(r.status, 201, r.text);
    const [code] = codesIn(r.body.body.text);
    assert.equal((await follow(server, code!)).status, 302);

    for (const unknown of ['AAAAAAAAAA', 'short', 'a'.repeat(60), `${code!.slice(0, 9)}%2F`]) {
      const res = await follow(server, unknown);
      assert.equal(res.status, 404, unknown);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(await res.text(), /does not exist or has expired/);
    }
    await server.app.store.db
      .updateTable('short_links')
      .set({ expires_at: Date.now() - 1 })
      .where('code', '=', code!)
      .execute();
    const expired = await follow(server, code!);
    assert.equal(expired.status, 404);
    assert.match(await expired.text(), /expired/);
    const clicks = await server.app.store.db.selectFrom('short_link_clicks').select('id').where('code', '=', code!).execute();
    assert.equal(clicks.length, 1, 'a refused click is not recorded');
  });

  test('a channel without the option leaves URLs alone; short URLs and the base itself are kept', async () => {
    const t = await createTenant(server, { balance: 5 });
    const text = `Winter sale, up to 50% off everything in store and online this week only: ${LONG_URL}.`;
    const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text } } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.body.text, text);
    assert.equal(r.body.body.messagePartCount, 2);
    assert.equal(r.body.price.amount, FR_PRICE * 2);

    const on = await createTenant(server, { balance: 5, channel: { shortLinks: true } });
    const short = 'Go to https://x.io/a or http://t.co/b now';
    const s = await request(server, 'POST', '/sms/v1/messages', { key: on.key, body: { recipient: { to: '33612345678' }, body: { text: short } } });
    assert.equal(s.body.body.text, short, 'URLs no longer than a short link stay as written');
  });

  test('bad settings are refused', async () => {
    const org = await request(server, 'POST', '/admin/v1/organisations', { key: server.adminKey, body: { name: 'Links org' } });
    const channels = `/admin/v1/organisations/${org.body.organisationId}/channels`;
    assertError(
      await request(server, 'POST', channels, { key: server.adminKey, body: { name: 'v', type: 'VOICE', flow: 'TRANSACTIONAL', shortLinks: true } }),
      400,
      '400.001',
      /SMS channels/,
    );
    assertError(
      await request(server, 'POST', channels, { key: server.adminKey, body: { name: 's', type: 'SMS', flow: 'MARKETING', shortLinks: { on: true } } }),
      400,
      '400.001',
    );
    const sms = await request(server, 'POST', channels, { key: server.adminKey, body: { name: 's', type: 'SMS', flow: 'MARKETING' } });
    assert.equal(sms.body.shortLinks, false);
    const on = await request(server, 'PATCH', `/admin/v1/channels/${sms.body.channelId}`, { key: server.adminKey, body: { shortLinks: true } });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.shortLinks, true);

    // The customer sets it on its own channel, as its callback URLs.
    const own = await createTenant(server, { balance: 1 });
    const patched = await request(server, 'PATCH', `/commons/v1/channels/${own.channelId}`, { key: own.key, body: { shortLinks: true } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.shortLinks, true);
    assertError(
      await request(server, 'PATCH', `/commons/v1/channels/${own.channelId}`, { key: own.key, body: { shortLinks: 'on' } }),
      400,
      '400.001',
      /shortLinks/,
    );
    const off = await request(server, 'PATCH', `/commons/v1/channels/${own.channelId}`, { key: own.key, body: { shortLinks: false } });
    assert.equal(off.body.shortLinks, false);

    // A server without a base cannot turn the option on.
    const plain = await startTestServer(dialect);
    try {
      const o = await request(plain, 'POST', '/admin/v1/organisations', { key: plain.adminKey, body: { name: 'No links' } });
      assertError(
        await request(plain, 'POST', `/admin/v1/organisations/${o.body.organisationId}/channels`, {
          key: plain.adminKey,
          body: { name: 's', type: 'SMS', flow: 'MARKETING', shortLinks: true },
        }),
        400,
        '400.001',
        /TERN_SHORT_LINK_BASE/,
      );
    } finally {
      await plain.stop();
    }

    for (const [env, why] of [
      [{ TERN_SHORT_LINK_BASE: 'ftp://t.example/' }, /http or https/],
      [{ TERN_SHORT_LINK_BASE: 't.example' }, /absolute URL/],
      [{ TERN_SHORT_LINK_BASE: 'https://t.example/?c=' }, /no query/],
      [{ TERN_SHORT_LINK_DAYS: '0' }, /between 1 and 3650/],
      [{ TERN_SHORT_LINK_DAYS: 'ten' }, /between 1 and 3650/],
    ] as const) {
      assert.throws(
        () => loadConfig({ TERN_ADMIN_KEY: 'k'.repeat(24), ...env }),
        (err: Error) => why.test(err.message),
        JSON.stringify(env),
      );
    }
    assert.equal(loadConfig({ TERN_SHORT_LINK_BASE: 'https://t.example' }).shortLinkBase, 'https://t.example/');
  });
});
