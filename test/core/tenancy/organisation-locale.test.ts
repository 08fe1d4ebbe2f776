// An organisation's defaultCountry and timeZone: set through the admin API, and read by every door — national
// numbers on REST, SMPP and legacy, dates without an offset on REST (`sentDate`) and legacy (`date_envoi`).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type smpp from 'smpp';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { eventually } from '../../support/wait.ts';

const ID = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';

async function legacySend(server: TestServer, params: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}/http/1.6/sendSMS.do?${new URLSearchParams(params)}`);
  return { status: res.status, text: await res.text() };
}

function legacyId(a: { status: number; text: string }): string {
  const m = new RegExp(`^0 \\| Accepted \\| ${ID}$`).exec(a.text);
  assert.ok(m, `not an accepted answer: ${a.status} ${a.text}`);
  return m[1]!;
}

async function sms(server: TestServer, t: Tenant, id: string): Promise<any> {
  const r = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

function send(server: TestServer, t: Tenant, body: Record<string, unknown>) {
  return request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { body: { text: 'Bonjour' }, ...body } });
}

async function setLocale(server: TestServer, organisationId: string, body: Record<string, unknown>) {
  const r = await request(server, 'PATCH', `/admin/v1/organisations/${organisationId}`, { key: server.adminKey, body });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** An organisation with the locale given at creation, one SMS channel and an ADMIN key. */
async function tenantWith(server: TestServer, locale: Record<string, unknown>): Promise<Tenant> {
  const t = await createTenant(server, { balance: 100 });
  if (Object.keys(locale).length > 0) await setLocale(server, t.organisationId, locale);
  return t;
}

forEachDialect('Organisation country and time zone', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server.stop();
  });

  test('defaultCountry and timeZone are set at creation, shown, changed and cleared with PATCH, and checked', async () => {
    const admin = server.adminKey;
    const created = await request(server, 'POST', '/admin/v1/organisations', {
      key: admin,
      body: { name: 'Brussels shop', defaultCountry: 'be', timeZone: 'europe/brussels' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.defaultCountry, 'BE');
    assert.equal(created.body.timeZone, 'Europe/Brussels');
    const id = created.body.organisationId;

    const plain = await request(server, 'POST', '/admin/v1/organisations', { key: admin, body: { name: 'No locale' } });
    assert.equal(plain.body.defaultCountry ?? null, null, 'no country: none is shown');
    assert.equal(plain.body.timeZone, 'Europe/Paris');

    const changed = await setLocale(server, id, { defaultCountry: 'FR', timeZone: 'America/New_York' });
    assert.equal(changed.defaultCountry, 'FR');
    assert.equal(changed.timeZone, 'America/New_York');
    const cleared = await setLocale(server, id, { defaultCountry: null });
    assert.equal(cleared.defaultCountry ?? null, null);
    assert.equal(cleared.timeZone, 'America/New_York', 'a field not sent is left as it is');
    assert.equal((await request(server, 'GET', `/admin/v1/organisations/${id}`, { key: admin })).body.timeZone, 'America/New_York');

    assertError(
      await request(server, 'POST', '/admin/v1/organisations', { key: admin, body: { name: 'x', defaultCountry: 'FRA' } }),
      400,
      '400.001',
      /^body\.defaultCountry: "FRA" is not an ISO 3166 alpha-2 country code/,
    );
    assertError(
      await request(server, 'PATCH', `/admin/v1/organisations/${id}`, { key: admin, body: { defaultCountry: 'ZZ', name: 'Renamed' } }),
      400,
      '400.001',
      /^body\.defaultCountry: "ZZ" is not a country with a known numbering plan/,
    );
    assertError(
      await request(server, 'PATCH', `/admin/v1/organisations/${id}`, { key: admin, body: { timeZone: 'Paris' } }),
      400,
      '400.001',
      /^body\.timeZone: "Paris" is not an IANA time zone name/,
    );
    const after = (await request(server, 'GET', `/admin/v1/organisations/${id}`, { key: admin })).body;
    assert.equal(after.name, 'Brussels shop', 'a refused PATCH changes nothing');
    assert.equal(after.defaultCountry ?? null, null);
  });

  test('REST: a national number is refused without defaultCountry and stored in international form with one', async () => {
    const t = await tenantWith(server, {});
    assertError(
      await send(server, t, { recipient: { to: '0611223344' } }),
      400,
      '400.003',
      /recipient\.to: .*national numbers need the organisation's defaultCountry/,
    );

    // Set on this node: the next send sees it at once.
    await setLocale(server, t.organisationId, { defaultCountry: 'FR' });
    const fr = await send(server, t, { recipient: { to: '06 11 22 33 44' } });
    assert.equal(fr.status, 201, fr.text);
    assert.equal(fr.body.recipient.to, '33611223344');
    assert.equal((await sms(server, t, fr.body.messageId)).recipient.to, '33611223344');
    const international = await send(server, t, { recipient: { to: '+32470123456' } });
    assert.equal(international.body.recipient.to, '32470123456', 'international numbers are left as they are');

    await setLocale(server, t.organisationId, { defaultCountry: 'BE' });
    const be = await send(server, t, { recipient: { to: '0470123456' } });
    assert.equal(be.status, 201, be.text);
    assert.equal(be.body.recipient.to, '32470123456');

    const campaign = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: '0470123457' }, { to: '33611223345' }], body: { text: 'Hello' } },
    });
    assert.equal(campaign.status, 201, campaign.text);
    const list = await request(server, 'GET', `/sms/v1/messages?searchBy[campaignId]=${campaign.body.campaignId}`, { key: t.key });
    assert.deepEqual(list.body.items.map((m: any) => m.recipient.to).sort(), ['32470123457', '33611223345']);

    await setLocale(server, t.organisationId, { defaultCountry: null });
    assertError(await send(server, t, { recipient: { to: '0470123456' } }), 400, '400.003');
  });

  test('REST: RCS reads national numbers in the organisation country too', async () => {
    const t = await createTenant(server, { type: 'RCS', balance: 10, channel: { defaultFromField: 'Agent' } });
    assertError(
      await request(server, 'POST', '/rcs/v1/messages', { key: t.key, body: { recipient: { to: '0611223344' }, body: { type: 'TEXT', text: 'Hi' } } }),
      400,
      '400.003',
    );
    await setLocale(server, t.organisationId, { defaultCountry: 'FR' });
    const r = await request(server, 'POST', '/rcs/v1/messages', { key: t.key, body: { recipient: { to: '0611223344' }, body: { type: 'TEXT', text: 'Hi' } } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.recipient.to, '33611223344');
  });

  test('SMPP submit_sm: a national destination_addr follows the organisation country', async () => {
    const t = await tenantWith(server, {});
    const cred = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId: `loc${dialect.slice(0, 2)}${Date.now() % 100000}`, password: 'secret1' },
    });
    assert.equal(cred.status, 201, cred.text);
    const session: smpp.Session = await packageClient(server.smppPort);
    try {
      const bound = await call(session, 'bind_transceiver', { system_id: cred.body.systemId, password: 'secret1' });
      assert.equal(bound.command_status, 0);
      const submit = () => call(session, 'submit_sm', { source_addr: '', destination_addr: '0611223344', short_message: 'Bonjour', data_coding: 0 });

      assert.equal((await submit()).command_status, SmppStatus.ESME_RINVDSTADR, 'no defaultCountry: a national number is refused');
      await setLocale(server, t.organisationId, { defaultCountry: 'FR' });
      const ok = await submit();
      assert.equal(ok.command_status, 0);
      const m = await sms(server, t, String(ok['message_id']));
      assert.equal(m.recipient.to, '33611223344');
    } finally {
      session.close();
    }
  });

  test('legacy sendSMS.do: numero is read in the organisation country, and in France when it has none', async () => {
    const none = await tenantWith(server, {});
    const fr = legacyId(await legacySend(server, { accessToken: none.key, message: 'Bonjour', numero: '0611223344' }));
    assert.equal((await sms(server, none, fr)).recipient.to, '33611223344');

    const be = await tenantWith(server, { defaultCountry: 'BE' });
    const one = legacyId(await legacySend(server, { accessToken: be.key, message: 'Bonjour', numero: '0470123456' }));
    assert.equal((await sms(server, be, one)).recipient.to, '32470123456');
    const group = legacyId(await legacySend(server, { accessToken: be.key, message: 'Bonjour', numero: '0470123457,+33611223344' }));
    const list = await request(server, 'GET', `/sms/v1/messages?searchBy[campaignId]=${group}`, { key: be.key });
    assert.deepEqual(list.body.items.map((m: any) => m.recipient.to).sort(), ['32470123457', '33611223344']);
  });

  test('REST sentDate without an offset is read in the organisation time zone, with an offset as written', async () => {
    const paris = await tenantWith(server, {});
    const atParis = await send(server, paris, { recipient: { to: '33611223344' }, sentDate: '2031-07-15T10:30:00' });
    assert.equal(atParis.status, 201, atParis.text);
    assert.equal(atParis.body.sentDate, '2031-07-15T08:30:00.000Z', 'the default time zone is Europe/Paris (summer time)');

    const ny = await tenantWith(server, { timeZone: 'America/New_York' });
    const cases: Array<[string, string]> = [
      ['2031-01-15T10:30:00', '2031-01-15T15:30:00.000Z'],
      ['2031-01-15T10:30', '2031-01-15T15:30:00.000Z'],
      ['2031-07-15', '2031-07-15T04:00:00.000Z'],
      // 02:30 does not exist on 9 March 2031 in New York (clocks go from 02:00 to 03:00): read just after the change.
      ['2031-03-09T02:30:00', '2031-03-09T07:30:00.000Z'],
      // 01:30 happens twice on 2 November 2031: the first time, still on summer time.
      ['2031-11-02T01:30:00', '2031-11-02T05:30:00.000Z'],
      ['2031-01-15T10:30:00Z', '2031-01-15T10:30:00.000Z'],
      ['2031-01-15T10:30:00+01:00', '2031-01-15T09:30:00.000Z'],
    ];
    for (const [sentDate, expected] of cases) {
      const r = await send(server, ny, { recipient: { to: '33611223344' }, sentDate });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.sentDate, expected, sentDate);
      assert.equal(r.body.status.value, 'SCHEDULED');
    }
    assertError(await send(server, ny, { recipient: { to: '33611223344' }, sentDate: '2031-02-30T10:00:00' }), 400, '400.007', /body\.sentDate/);

    const voiceless = await createTenant(server, { type: 'RCS', balance: 10, channel: { defaultFromField: 'Agent' } });
    await setLocale(server, voiceless.organisationId, { timeZone: 'Asia/Tokyo' });
    const rcs = await request(server, 'POST', '/rcs/v1/messages', {
      key: voiceless.key,
      body: { recipient: { to: '33611223344' }, body: { type: 'TEXT', text: 'Hi' }, sentDate: '2031-01-15T10:30:00' },
    });
    assert.equal(rcs.status, 201, rcs.text);
    assert.equal(rcs.body.sentDate, '2031-01-15T01:30:00.000Z');
  });

  test('legacy date_envoi is read in the organisation time zone, daylight saving changes included', async () => {
    const paris = await tenantWith(server, {});
    const p = legacyId(await legacySend(server, { accessToken: paris.key, message: 'Bonjour', numero: '33611223344', date_envoi: '15012031-10:30' }));
    assert.equal((await sms(server, paris, p)).sentDate, '2031-01-15T09:30:00.000Z');

    const ny = await tenantWith(server, { timeZone: 'America/New_York' });
    const cases: Array<[string, string]> = [
      ['15012031-10:30', '2031-01-15T15:30:00.000Z'],
      ['15072031', '2031-07-15T04:00:00.000Z'],
      ['09032031-02:30', '2031-03-09T07:30:00.000Z'],
      ['02112031-01:30', '2031-11-02T05:30:00.000Z'],
    ];
    for (const [date, expected] of cases) {
      const id = legacyId(await legacySend(server, { accessToken: ny.key, message: 'Bonjour', numero: '33611223344', date_envoi: date }));
      assert.equal((await sms(server, ny, id)).sentDate, expected, date);
    }
    const bad = await legacySend(server, { accessToken: ny.key, message: 'Bonjour', numero: '33611223344', date_envoi: '30022031-10:00' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /^35 \| .*date_envoi: "30022031-10:00" must be ddMMyyyy-HH:mm or ddMMyyyy \(local time, America\/New_York\)/);
  });

  test('legacy callbacks write their dates in the time zone of the send', async () => {
    const hits: URL[] = [];
    const receiver = await import('node:http').then(
      (http) =>
        new Promise<import('node:http').Server>((resolve) => {
          const s = http.createServer((req, res) => {
            hits.push(new URL(req.url ?? '/', 'http://receiver'));
            res.end('OK');
          });
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    );
    try {
      const port = (receiver.address() as { port: number }).port;
      const tokyo = await tenantWith(server, { timeZone: 'Asia/Tokyo' });
      const id = legacyId(
        await legacySend(server, { accessToken: tokyo.key, message: 'Bonjour', numero: '33611223344', notification_url: `http://127.0.0.1:${port}/dlr` }),
      );
      const hit = await eventually(() => hits.find((u) => u.searchParams.get('smsID') === id), 15_000, 'the delivery report callback');
      const delivered = await eventually(async () => {
        const m = await sms(server, tokyo, id);
        return m.status.value === 'DELIVERED' ? m : undefined;
      });
      const at = new Date(Date.parse(delivered.status.deliveryDate) + 9 * 3_600_000).toISOString();
      assert.equal(hit.searchParams.get('date_reception'), `${at.slice(0, 10)} ${at.slice(11, 19)}`);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  if (dialect === 'postgres') {
    test('a change made on one node is used by the other nodes at once', async () => {
      const second = await startTestServer(dialect, { TERN_DATABASE_URL: server.app.config.databaseUrl });
      try {
        const t = await tenantWith(server, {});
        // The second node reads (and keeps) the organisation's settings.
        assertError(await send(second, t, { recipient: { to: '0611223344' } }), 400, '400.003');
        const changedAt = Date.now();
        await setLocale(server, t.organisationId, { defaultCountry: 'FR', timeZone: 'America/New_York' });
        const r = await eventually(async () => {
          const res = await send(second, t, { recipient: { to: '0611223344' }, sentDate: '2031-01-15T10:30' });
          return res.status === 201 ? res : undefined;
        }, 10_000);
        // Well inside the 5 s a node may keep the settings when it hears of no change.
        assert.ok(Date.now() - changedAt < 2_000, `seen after ${Date.now() - changedAt} ms`);
        assert.equal(r.body.recipient.to, '33611223344');
        assert.equal(r.body.sentDate, '2031-01-15T15:30:00.000Z');
      } finally {
        await second.stop();
      }
    });
  }
});
