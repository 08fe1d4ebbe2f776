// The STOP mention as smsmode appends it: always on marketing to French numbers, counted in parts, length and price
// over REST (send and quote), SMPP and legacy HTTP; a STOP to the opt-out short code opts the number out.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import smpp from 'smpp';
import { encodeGsm7 } from '../../src/domain/text.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { call } from '../support/smpp.ts';
import { eventually } from '../support/wait.ts';

const MENTION = '\nSTOP au 36111';
/** 150 GSM characters: one part alone, two with the 14 of the mention. */
const TEXT = 'a'.repeat(150);

async function send(server: TestServer, t: Tenant, to: string, extra: Record<string, unknown> = {}, text = TEXT) {
  const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text, ...extra } } });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function quote(server: TestServer, t: Tenant, body: Record<string, unknown>) {
  const r = await request(server, 'POST', '/sms/v1/messages/quote', { key: t.key, body });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** A second channel of the same organisation, with its own key. */
async function otherChannel(server: TestServer, organisationId: string, flow: string): Promise<Tenant> {
  const ch = await request(server, 'POST', `/admin/v1/organisations/${organisationId}/channels`, {
    key: server.adminKey,
    body: { name: flow, type: 'SMS', flow },
  });
  assert.equal(ch.status, 201, ch.text);
  const cred = await request(server, 'POST', `/admin/v1/channels/${ch.body.channelId}/credentials`, {
    key: server.adminKey,
    body: { name: 'k', roles: ['ADMIN'] },
  });
  assert.equal(cred.status, 201, cred.text);
  return { organisationId, channelId: ch.body.channelId, key: cred.body.value, credentialId: cred.body.credentialId };
}

async function blacklisted(server: TestServer, t: Tenant, msisdn: string): Promise<boolean> {
  const l = await request(server, 'GET', `/commons/v1/blacklist?searchBy[msisdn]=${msisdn}`, { key: t.key });
  return l.body.items.length === 1;
}

forEachDialect('the STOP mention', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server.stop();
  });

  test('REST: appended on marketing to +33 whatever stop says, counted in parts, length and price; honoured elsewhere', async () => {
    const marketing = await createTenant(server, { balance: 5, flow: 'MARKETING' });
    for (const stop of [false, undefined, true]) {
      const m = await send(server, marketing, '+33612345678', stop === undefined ? {} : { stop });
      assert.equal(m.body.text, `${TEXT}${MENTION}`, `stop: ${stop}`);
      assert.deepEqual([m.body.stop, m.body.messagePartCount, m.body.length], [true, 2, 164]);
      const q = await quote(server, marketing, { recipient: { to: '33612345678' }, body: { text: TEXT, ...(stop === undefined ? {} : { stop }) } });
      assert.deepEqual([q.body.messagePartCount, q.body.length, q.body.stop, q.price.units], [2, 164, true, 2]);
      assert.equal(m.price.amount, q.price.amount);
      assert.equal(m.price.amount, Number((2 * q.price.unitAmount).toFixed(6)));
    }
    // Outside France the rule does not apply: stop:false (or nothing) leaves the text as it is.
    const uk = await send(server, marketing, '447400123456', { stop: false });
    assert.deepEqual([uk.body.text, uk.body.stop, uk.body.messagePartCount], [TEXT, false, 1]);
    const ukStop = await send(server, marketing, '447400123456', { stop: true });
    assert.deepEqual([ukStop.body.text, ukStop.body.messagePartCount], [`${TEXT}${MENTION}`, 2]);
    const noRecipient = await quote(server, marketing, { body: { text: TEXT } });
    assert.deepEqual([noRecipient.body.messagePartCount, noRecipient.body.stop], [1, false]);

    // A transactional channel appends it only when asked.
    const tx = await createTenant(server, { balance: 5, flow: 'TRANSACTIONAL' });
    const plain = await send(server, tx, '33612345678', { stop: false });
    assert.deepEqual([plain.body.text, plain.body.messagePartCount], [TEXT, 1]);
    const asked = await send(server, tx, '33612345678', { stop: true });
    assert.deepEqual([asked.body.text, asked.body.messagePartCount], [`${TEXT}${MENTION}`, 2]);

    // A text that fits ten parts alone but not with the mention is refused on marketing to France.
    assertError(
      await request(server, 'POST', '/sms/v1/messages', { key: marketing.key, body: { recipient: { to: '33612345678' }, body: { text: 'b'.repeat(1530) } } }),
      400,
      '400.004',
    );
  });

  test("the organisation's own short code and text; bad settings refused", async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING' });
    const org = `/admin/v1/organisations/${t.organisationId}`;
    const shown = await request(server, 'GET', org, { key: server.adminKey });
    assert.deepEqual(shown.body.optOut, { shortCode: '36111', text: 'STOP au 36111', custom: false });

    const set = await request(server, 'PATCH', org, { key: server.adminKey, body: { optOutShortCode: '38123' } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.optOut, { shortCode: '38123', text: 'STOP au 38123', custom: true });
    assert.equal((await send(server, t, '33612345678', {}, 'hi')).body.text, 'hi\nSTOP au 38123');
    await request(server, 'PATCH', org, { key: server.adminKey, body: { optOutText: 'STOP SMS au 38123' } });
    assert.equal((await send(server, t, '33612345678', {}, 'hi')).body.text, 'hi\nSTOP SMS au 38123');

    for (const [body, field] of [
      [{ optOutShortCode: 'ABC' }, /optOutShortCode.*3 to 8 digits/],
      [{ optOutShortCode: '12' }, /optOutShortCode/],
      [{ optOutText: 'Unsubscribe at 38123' }, /optOutText.*STOP/],
      [{ optOutText: 'STOP\nau 38123' }, /optOutText.*one line/],
      [{ optOutText: '' }, /optOutText/],
    ] as const) {
      assertError(await request(server, 'PATCH', org, { key: server.adminKey, body }), 400, '400.001', field);
    }
    // Back to the platform's.
    await request(server, 'PATCH', org, { key: server.adminKey, body: { optOutShortCode: null, optOutText: null } });
    assert.equal((await send(server, t, '33612345678', {}, 'hi')).body.text, `hi${MENTION}`);
  });

  test('SMPP and legacy HTTP: the same mention, counted the same way', async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING', channel: { defaultFromField: 'ACME' } });
    const cred = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId: `mkt${dialect}`, password: 'pw12345' },
    });
    assert.equal(cred.status, 201, cred.text);
    const session = smpp.connect({ host: '127.0.0.1', port: server.smppPort });
    session.on('error', () => {});
    session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
    await once(session, 'connect');
    try {
      assert.equal((await call(session, 'bind_transmitter', { system_id: `mkt${dialect}`, password: 'pw12345' })).command_status, 0);
      for (const [to, parts, text] of [
        ['33612345678', 2, `${TEXT}${MENTION}`],
        ['447400123456', 1, TEXT],
      ] as const) {
        const r = await call(session, 'submit_sm', { source_addr: 'ACME', destination_addr: to, data_coding: 0, short_message: encodeGsm7(TEXT) });
        assert.equal(r.command_status, 0, `submit to ${to}`);
        const m = (await request(server, 'GET', `/sms/v1/messages/${r.message_id}`, { key: t.key })).body;
        assert.deepEqual([m.body.text, m.body.messagePartCount], [text, parts]);
      }
    } finally {
      session.destroy();
    }

    const res = await fetch(`${server.url}/http/1.6/sendSMS.do?${new URLSearchParams({ accessToken: t.key, message: TEXT, numero: '0612345678' })}`);
    const line = await res.text();
    const id = /^0 \| Accepted \| (\S+)$/.exec(line)?.[1];
    assert.ok(id, line);
    const m = (await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key })).body;
    assert.deepEqual([m.body.text, m.body.messagePartCount, m.price.amount], [`${TEXT}${MENTION}`, 2, Number((2 * 0.045).toFixed(6))]);

    // stop=1 adds the mention only when the message stays one SMS: with the organisation's own, longer, mention.
    const tx = await createTenant(server, { balance: 5 });
    const legacyStop1 = async (text: string) => {
      const r = await fetch(
        `${server.url}/http/1.6/sendSMS.do?${new URLSearchParams({ accessToken: tx.key, message: text, numero: '0612345678', stop: '1' })}`,
      );
      const found = /^0 \| Accepted \| (\S+)$/.exec(await r.text())?.[1];
      return (await request(server, 'GET', `/sms/v1/messages/${found}`, { key: tx.key })).body.body.text as string;
    };
    const fits = 'c'.repeat(146);
    assert.equal(await legacyStop1(fits), `${fits}${MENTION}`, '146 + 14 characters: one SMS');
    await request(server, 'PATCH', `/admin/v1/organisations/${tx.organisationId}`, { key: server.adminKey, body: { optOutText: 'STOP SMS au 36111' } });
    assert.equal(await legacyStop1(fits), fits, '146 + 18 characters would take two');
    assert.equal(await legacyStop1('short'), 'short\nSTOP SMS au 36111');
  });

  test('an MO STOP to the short code opts the number out: marketing refused as BLACKLISTED, transactional goes', async () => {
    const a = await createTenant(server, { balance: 5, flow: 'MARKETING' });
    const aTx = await otherChannel(server, a.organisationId, 'TRANSACTIONAL');
    const b = await createTenant(server, { balance: 5, flow: 'MARKETING' });
    await request(server, 'PATCH', `/admin/v1/organisations/${b.organisationId}`, { key: server.adminKey, body: { optOutShortCode: '38444' } });
    const user = '33655500001';
    await send(server, a, user, {}, 'promo a');
    await send(server, b, user, {}, 'promo b');

    const mo = (to: string, text: string) => request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: user, to, text } });
    // The other organisation's code opts out of that one only, any case, with or without the code in the text.
    assert.equal((await mo('38444', 'stop au 38444')).status < 300, true);
    await eventually(async () => ((await blacklisted(server, b, user)) ? true : undefined));
    assert.equal(await blacklisted(server, a, user), false);

    await mo('36111', 'Stop 36111');
    await eventually(async () => ((await blacklisted(server, a, user)) ? true : undefined));
    const refused = await send(server, a, user, {}, 'promo again');
    assert.deepEqual([refused.status.value, refused.status.detail, refused.price.amount], ['UNDELIVERABLE', 'BLACKLISTED', 0]);
    const goes = await send(server, aTx, user, {}, 'your code is 1234');
    assert.equal(goes.status.value, 'ENROUTE');

    // A sentence that merely contains STOP is no command; a number that was sent nothing is not listed.
    const other = '33655500002';
    await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: other, to: '36111', text: 'STOP' } });
    await send(server, a, '33655500003', {}, 'promo');
    await request(server, 'POST', '/admin/v1/simulator/mo', {
      key: server.adminKey,
      body: { from: '33655500003', to: '36111', text: 'please stop 36111 now' },
    });
    const unrouted = await eventually(async () => {
      const l = await request(server, 'GET', '/admin/v1/inbound/unrouted', { key: server.adminKey });
      return l.body.items.filter((u: any) => u.to === '36111').length >= 3 ? l.body.items : undefined;
    });
    assert.ok(unrouted.length >= 3);
    assert.equal(await blacklisted(server, a, other), false);
    assert.equal(await blacklisted(server, a, '33655500003'), false);
  });
});
