// The sender registry: an organisation asks for a sender, the operator approves it for some countries, and a send
// from a sender not approved for the destination's country is refused in each door's own format (REST 400.005,
// SMPP ESME_RINVSRCADR, legacy code 35); fromFieldList keeps working as before and feeds the registry.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import smpp from 'smpp';
import { encodeGsm7 } from '../../src/domain/text.ts';
import { SmppStatus } from '../../src/protocols/smpp/pdu.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { call } from '../support/smpp.ts';

const FR = '33612345678';
const GB = '447400123456';

function sendFrom(server: TestServer, t: Tenant, from: string | undefined, to: string) {
  return request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 'hello' }, ...(from !== undefined && { from }) } });
}

async function legacySend(server: TestServer, t: Tenant, emetteur: string, numero: string): Promise<string> {
  const res = await fetch(`${server.url}/http/1.6/sendSMS.do?${new URLSearchParams({ accessToken: t.key, message: 'hello', numero, emetteur })}`);
  return res.text();
}

forEachDialect('sender registry', (dialect) => {
  let server: TestServer;
  let seq = 0;
  const sessions: smpp.Session[] = [];
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await server.stop();
  });

  const admin = (method: string, path: string, body?: unknown) => request(server, method, path, { key: server.adminKey, body });

  async function smppSession(t: Tenant): Promise<smpp.Session> {
    const systemId = `reg${dialect.slice(0, 2)}${++seq}`;
    const cred = await admin('POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, { systemId, password: 'pw12345' });
    assert.equal(cred.status, 201, cred.text);
    const session = smpp.connect({ host: '127.0.0.1', port: server.smppPort });
    session.on('error', () => {});
    session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
    await once(session, 'connect');
    sessions.push(session);
    assert.equal((await call(session, 'bind_transmitter', { system_id: systemId, password: 'pw12345' })).command_status, 0);
    return session;
  }
  const submit = async (session: smpp.Session, from: string, to: string) =>
    (await call(session, 'submit_sm', { source_addr: from, destination_addr: to, data_coding: 0, short_message: encodeGsm7('hello') }))
      .command_status as number;

  test('requested, PENDING, refused; approved for FR only: FR goes, +44 refused — REST, SMPP and legacy', async () => {
    const t = await createTenant(server, { balance: 5, channel: { defaultFromField: 'ACME' } });
    const asked = await request(server, 'POST', '/commons/v1/senders', { key: t.key, body: { value: 'PROMO', countries: ['fr'] } });
    assert.equal(asked.status, 201, asked.text);
    assert.deepEqual([asked.body.value, asked.body.kind, asked.body.countries, asked.body.status], ['PROMO', 'ALPHANUMERIC', ['FR'], 'PENDING']);
    const id = asked.body.senderId;
    const session = await smppSession(t);

    assertError(await sendFrom(server, t, 'PROMO', FR), 400, '400.005', /^body\.from: sender "PROMO" is not approved yet \(PENDING\)$/);
    assert.equal(await submit(session, 'PROMO', FR), SmppStatus.ESME_RINVSRCADR);
    assert.match(await legacySend(server, t, 'PROMO', FR), /^35 \| .*PROMO.*PENDING/);

    const approved = await admin('PATCH', `/admin/v1/organisations/${t.organisationId}/senders/${id}`, { status: 'APPROVED' });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'APPROVED');
    const sent = await sendFrom(server, t, 'PROMO', FR);
    assert.equal(sent.status, 201, sent.text);
    assert.equal(sent.body.from, 'PROMO');
    assert.equal(await submit(session, 'PROMO', FR), 0);
    assert.match(await legacySend(server, t, 'PROMO', FR), /^0 \| Accepted \| /);

    assertError(await sendFrom(server, t, 'PROMO', GB), 400, '400.005', /sender "PROMO" is not approved for GB \(approved for FR\)/);
    assert.equal(await submit(session, 'PROMO', GB), SmppStatus.ESME_RINVSRCADR);
    assert.match(await legacySend(server, t, 'PROMO', GB), /^35 \| .*not approved for GB/);

    // Widened to every country; then rejected.
    await admin('PATCH', `/admin/v1/organisations/${t.organisationId}/senders/${id}`, { countries: [] });
    assert.equal((await sendFrom(server, t, 'PROMO', GB)).status, 201);
    await admin('PATCH', `/admin/v1/organisations/${t.organisationId}/senders/${id}`, { status: 'REJECTED' });
    assertError(await sendFrom(server, t, 'PROMO', FR), 400, '400.005', /REJECTED/);
    assert.equal(await submit(session, 'PROMO', FR), SmppStatus.ESME_RINVSRCADR);

    // The default sender, when registered, is held to the same rule.
    await admin('POST', `/admin/v1/organisations/${t.organisationId}/senders`, { value: 'ACME', countries: ['FR'], status: 'APPROVED' });
    assert.equal((await sendFrom(server, t, undefined, FR)).status, 201);
    assertError(await sendFrom(server, t, undefined, GB), 400, '400.005', /"ACME" is not approved for GB/);

    // Removed, a rejected sender is as one never registered: the channel (without a sender list) takes it again, on
    // every node at once.
    const gone = await request(server, 'GET', '/commons/v1/senders', { key: t.key });
    const rejected = gone.body.items.find((s: any) => s.value === 'PROMO');
    assert.equal((await admin('DELETE', `/admin/v1/organisations/${t.organisationId}/senders/${rejected.senderId}`)).status, 200);
    assert.equal((await sendFrom(server, t, 'PROMO', FR)).status, 201);
    await admin('POST', `/admin/v1/organisations/${t.organisationId}/senders`, { value: 'PROMO', status: 'REJECTED' });

    const listed = await request(server, 'GET', '/commons/v1/senders', { key: t.key });
    assert.deepEqual(
      listed.body.items.map((s: any) => [s.value, s.status, s.countries]),
      [
        ['ACME', 'APPROVED', ['FR']],
        ['PROMO', 'REJECTED', []],
      ],
    );
    const nothing = (await request(server, 'GET', '/sms/v1/messages?pageSize=100', { key: t.key })).body.items.filter((m: any) => m.recipient.to === GB);
    assert.equal(nothing.length, 1, 'only the send made while PROMO was approved everywhere was stored');
  });

  test('fromFieldList as before: listed senders are APPROVED everywhere, others refused; an open channel takes any', async () => {
    const t = await createTenant(server, { balance: 5, channel: { fromFieldList: ['ACME', '36180'] } });
    const list = await request(server, 'GET', '/commons/v1/senders', { key: t.key });
    assert.deepEqual(
      list.body.items.map((s: any) => [s.value, s.kind, s.status, s.countries]),
      [
        ['ACME', 'ALPHANUMERIC', 'APPROVED', []],
        ['36180', 'SHORT_CODE', 'APPROVED', []],
      ],
    );
    assert.equal((await sendFrom(server, t, 'ACME', GB)).status, 201);
    assertError(await sendFrom(server, t, 'OTHER', FR), 400, '400.005', /"OTHER" is not in the channel's fromFieldList/);

    const patched = await admin('PATCH', `/admin/v1/channels/${t.channelId}`, { fromFieldList: ['ACME', '36180', 'SHOP'] });
    assert.deepEqual(patched.body.fromFieldList, ['ACME', '36180', 'SHOP']);
    assert.equal((await admin('GET', `/admin/v1/channels/${t.channelId}`)).body.fromFieldList.length, 3);
    assert.equal((await sendFrom(server, t, 'SHOP', FR)).status, 201);
    const after = await admin('GET', `/admin/v1/organisations/${t.organisationId}/senders`);
    assert.deepEqual(
      after.body.items.map((s: any) => s.value),
      ['ACME', '36180', 'SHOP'],
    );

    const open = await createTenant(server, { balance: 5 });
    assert.equal((await sendFrom(server, open, 'ANYNAME', FR)).status, 201, 'a channel without fromFieldList takes an unregistered sender, as before');
  });

  test("a campaign: each recipient is held to the sender's countries, the others go", async () => {
    const t = await createTenant(server, { balance: 5, flow: 'MARKETING' });
    await admin('POST', `/admin/v1/organisations/${t.organisationId}/senders`, { value: 'UKONLY', countries: ['GB'], status: 'APPROVED' });
    const created = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: GB }, { to: FR }, { to: '447400123457' }], body: { text: 'Sale' }, from: 'UKONLY' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.counts.accepted, 2);
    assert.deepEqual(
      created.body.errors.map((e: any) => [e.index, e.errorCode]),
      [[1, '400.005']],
    );
    assert.match(created.body.errors[0].detail, /not approved for FR/);
    await admin('POST', `/admin/v1/organisations/${t.organisationId}/senders`, { value: 'WAITING', status: 'PENDING' });
    const pending = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: GB }], body: { text: 'Sale' }, from: 'WAITING' },
    });
    assertError(pending, 400, '400.005', /not approved yet/);
  });

  test('bad input: unknown status, bad countries, senders too long, duplicates, unknown ids, roles', async () => {
    const t = await createTenant(server, { balance: 5 });
    const org = `/admin/v1/organisations/${t.organisationId}/senders`;
    const cases: Array<[Record<string, unknown>, number, string, RegExp]> = [
      [{ value: 'GOOD', status: 'MAYBE' }, 400, '400.001', /body\.status: must be one of PENDING, APPROVED, REJECTED, got "MAYBE"/],
      [{ value: 'GOOD', countries: ['FRA'] }, 400, '400.001', /body\.countries\[0\]: "FRA" is not an ISO 3166 alpha-2 country code/],
      [{ value: 'GOOD', countries: ['FR', 'XX'] }, 400, '400.001', /body\.countries\[1\]: "XX" is not a country/],
      [{ value: 'TOOLONGSENDER' }, 400, '400.005', /body\.value: "TOOLONGSENDER": an alphanumeric sender is 1 to 11 characters/],
      [{ value: '1234567890123456' }, 400, '400.005', /a number is 3 to 15 digits/],
      [{ value: 'BAD<script>' }, 400, '400.005', /letters, digits/],
    ];
    for (const [body, status, code, detail] of cases) {
      assertError(await admin('POST', org, body), status, code, detail);
      // The organisation's own request has no status: the same checks of value and countries.
      if (body.status === undefined) assertError(await request(server, 'POST', '/commons/v1/senders', { key: t.key, body }), status, code, detail);
    }
    assert.equal((await admin('GET', org)).body.items.length, 0, 'nothing written');

    const made = await admin('POST', org, { value: 'GOOD' });
    assert.equal(made.status, 201);
    assert.equal(made.body.status, 'PENDING');
    assertError(await admin('POST', org, { value: 'GOOD' }), 409, '409.001', /already registered/);
    assertError(await admin('PATCH', `${org}/${made.body.senderId}`, { status: 'approved' }), 400, '400.001', /must be one of/);
    assertError(await admin('PATCH', `${org}/${made.body.senderId}`, { countries: ['fr', 'gb', 'nope'] }), 400, '400.001', /countries\[2\]/);
    assert.equal((await admin('GET', org)).body.items[0].status, 'PENDING', 'a refused decision changes nothing');
    assert.equal((await admin('PATCH', `${org}/0190aaaa-0000-7000-8000-000000000000`, { status: 'APPROVED' })).status, 404);
    const other = await createTenant(server, { balance: 1 });
    assert.equal((await admin('PATCH', `/admin/v1/organisations/${other.organisationId}/senders/${made.body.senderId}`, { status: 'APPROVED' })).status, 404);

    // Removed: by the operator only, from its own organisation; then gone.
    assert.equal((await request(server, 'DELETE', `${org}/${made.body.senderId}`, { key: t.key })).status, 403, 'only the operator removes');
    assert.equal((await admin('DELETE', `/admin/v1/organisations/${other.organisationId}/senders/${made.body.senderId}`)).status, 404);
    const removed = await admin('DELETE', `${org}/${made.body.senderId}`);
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.value, 'GOOD');
    assert.deepEqual((await admin('GET', org)).body.items, []);
    assert.equal((await admin('DELETE', `${org}/${made.body.senderId}`)).status, 404);

    const user = await createTenant(server, { balance: 1, roles: ['USER'] });
    assert.equal((await request(server, 'POST', '/commons/v1/senders', { key: user.key, body: { value: 'MINE' } })).status, 403);
    assert.equal((await request(server, 'POST', org, { key: t.key, body: { value: 'MINE', status: 'APPROVED' } })).status, 403, 'only the operator decides');
  });
});
