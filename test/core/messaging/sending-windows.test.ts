// Marketing windows end to end: a real Tern, its admin API, and marketing sends over REST, SMPP and legacy HTTP that
// are accepted outside the window, deferred to its next opening on a ramp, and sent then.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { eventually } from '../../support/wait.ts';

const FRENCH_HOURS = { from: '08:00', to: '20:00' };

async function frenchTenant(server: TestServer, flow: 'MARKETING' | 'TRANSACTIONAL' | 'OTP' = 'MARKETING', roles?: string[]): Promise<Tenant> {
  const t = await createTenant(server, { balance: 10, flow, ...(roles && { roles }), channel: { defaultFromField: 'SHOP' } });
  const r = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey, body: { defaultCountry: 'FR' } });
  assert.equal(r.status, 200, r.text);
  return t;
}

/** Another channel (and key) of the same organisation. */
async function otherChannel(server: TestServer, orgId: string, flow: string): Promise<{ channelId: string; key: string }> {
  const c = await request(server, 'POST', `/admin/v1/organisations/${orgId}/channels`, {
    key: server.adminKey,
    body: { name: `${flow} channel`, type: 'SMS', flow },
  });
  assert.equal(c.status, 201, c.text);
  const k = await request(server, 'POST', `/admin/v1/channels/${c.body.channelId}/credentials`, {
    key: server.adminKey,
    body: { name: 'k', roles: ['ADMIN'] },
  });
  assert.equal(k.status, 201, k.text);
  return { channelId: c.body.channelId, key: k.body.value };
}

const windowOf = (server: TestServer, orgId: string) => request(server, 'GET', `/admin/v1/organisations/${orgId}/sending-window`, { key: server.adminKey });
const setWindow = (server: TestServer, orgId: string, body: unknown) =>
  request(server, 'PUT', `/admin/v1/organisations/${orgId}/sending-window`, { key: server.adminKey, body });
const send = (server: TestServer, key: string, body: Record<string, unknown>) =>
  request(server, 'POST', '/sms/v1/messages', { key, body: { recipient: { to: '33612345678' }, body: { text: 'Promo -20%' }, ...body } });

async function message(server: TestServer, key: string, id: string): Promise<any> {
  const r = await request(server, 'GET', `/sms/v1/messages/${id}`, { key });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** Europe/Paris wall-clock `HH:MM` of an instant. */
function parisHhMm(ms: number): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }).format(new Date(ms));
}

forEachDialect('Marketing sending windows', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test("admin API: France's default for a French organisation, none elsewhere; set, refused whole, reset", async () => {
    const fr = await frenchTenant(server);
    const w = await windowOf(server, fr.organisationId);
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(w.body, {
      organisationId: fr.organisationId,
      own: false,
      timeZone: 'Europe/Paris',
      enabled: true,
      hours: { monday: FRENCH_HOURS, tuesday: FRENCH_HOURS, wednesday: FRENCH_HOURS, thursday: FRENCH_HOURS, friday: FRENCH_HOURS, saturday: FRENCH_HOURS },
      holidayCalendar: 'FR',
      holidays: [],
      rampPerSecond: 10,
      channelIds: [],
    });
    const elsewhere = await createTenant(server);
    assert.equal((await windowOf(server, elsewhere.organisationId)).body.enabled, false);

    const tx = await otherChannel(server, fr.organisationId, 'TRANSACTIONAL');
    const set = await setWindow(server, fr.organisationId, {
      hours: { sunday: { from: '10:00', to: '12:00' } },
      holidays: ['2027-06-01'],
      rampPerSecond: 5,
      channelIds: [tx.channelId],
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(
      [set.body.own, set.body.hours.sunday, set.body.hours.monday, set.body.holidays, set.body.rampPerSecond, set.body.channelIds],
      [true, { from: '10:00', to: '12:00' }, FRENCH_HOURS, ['2027-06-01'], 5, [tx.channelId]],
    );

    const before = (await windowOf(server, fr.organisationId)).body;
    const otp = await otherChannel(server, fr.organisationId, 'OTP');
    assertError(await setWindow(server, fr.organisationId, { hours: { monday: { from: '8h', to: '20:00' } } }), 400, '400.001', /hours\.monday\.from/);
    assertError(await setWindow(server, fr.organisationId, { hours: { monday: { from: '20:00', to: '08:00' } } }), 400, '400.001', /hours\.monday\.to/);
    assertError(await setWindow(server, fr.organisationId, { hours: { someday: null } }), 400, '400.001');
    assertError(await setWindow(server, fr.organisationId, { holidays: ['2027-02-30'] }), 400, '400.001', /holidays\[0\]/);
    assertError(await setWindow(server, fr.organisationId, { rampPerSecond: 0 }), 400, '400.001', /rampPerSecond/);
    assertError(await setWindow(server, fr.organisationId, { holidayCalendar: 'XX' }), 400, '400.001', /holidayCalendar/);
    assertError(await setWindow(server, fr.organisationId, { channelIds: [elsewhere.channelId] }), 400, '400.001', /channelIds\[0\]/);
    assertError(await setWindow(server, fr.organisationId, { channelIds: [otp.channelId] }), 400, '400.001', /OTP/);
    const none = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, null]));
    assertError(await setWindow(server, fr.organisationId, { hours: none }), 400, '400.001', /at least one weekday/);
    assert.deepEqual((await windowOf(server, fr.organisationId)).body, before, 'a refused change leaves the window as it was');

    assertError(await request(server, 'GET', `/admin/v1/organisations/${fr.organisationId}/sending-window`, { key: fr.key }), 403, '403.004');
    const reset = await request(server, 'DELETE', `/admin/v1/organisations/${fr.organisationId}/sending-window`, { key: server.adminKey });
    assert.equal(reset.status, 200, reset.text);
    assert.deepEqual([reset.body.own, reset.body.hours.sunday, reset.body.rampPerSecond], [false, undefined, 10]);
  });

  test('REST: a marketing send for Saturday 21:00 Paris is accepted, priced and deferred to Monday 08:00, holidays further', async () => {
    const t = await frenchTenant(server);
    // 16 January 2027 is a Saturday; Paris is UTC+1 then.
    const sat = await send(server, t.key, { sentDate: '2027-01-16T21:00:00' });
    assert.equal(sat.status, 201, sat.text);
    assert.deepEqual([sat.body.status.value, sat.body.sentDate, sat.body.deferredUntil], ['SCHEDULED', '2027-01-18T07:00:00.000Z', '2027-01-18T07:00:00.000Z']);
    assert.ok(sat.body.price.amount > 0, 'priced at accept');
    // The next one deferred to the same opening on this channel takes the next place on the ramp (10 a second).
    const next = await send(server, t.key, { sentDate: '2027-01-16T20:00:00Z' });
    assert.equal(next.body.sentDate, '2027-01-18T07:00:00.100Z');
    // Easter Monday 2027 (29 March) and Whit Monday 2027 (17 May): Tuesday 08:00, summer time (UTC+2).
    assert.equal((await send(server, t.key, { sentDate: '2027-03-27T21:00:00' })).body.sentDate, '2027-03-30T06:00:00.000Z');
    assert.equal((await send(server, t.key, { sentDate: '2027-05-15T21:00:00' })).body.sentDate, '2027-05-18T06:00:00.000Z');
    // Inside the window: as asked, nothing deferred.
    const within = await send(server, t.key, { sentDate: '2027-01-18T10:00:00' });
    assert.equal(within.body.sentDate, '2027-01-18T09:00:00.000Z');
    assert.equal(within.body.deferredUntil, undefined);
    // The GET says the same as the answer.
    assert.equal((await message(server, t.key, sat.body.messageId)).deferredUntil, '2027-01-18T07:00:00.000Z');

    // A transactional channel of the same organisation is never held.
    const tx = await otherChannel(server, t.organisationId, 'TRANSACTIONAL');
    const txSat = await send(server, tx.key, { sentDate: '2027-01-16T21:00:00' });
    assert.deepEqual([txSat.body.sentDate, txSat.body.deferredUntil], ['2027-01-16T20:00:00.000Z', undefined]);

    // Campaigns: a scheduled time outside the window moves to the next opening.
    const camp = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients: [{ to: '33612345001' }, { to: '33612345002' }], body: { text: 'Soldes' }, sentDate: '2027-01-23T22:30:00' },
    });
    assert.equal(camp.status, 201, camp.text);
    const msgs = await request(server, 'GET', `/sms/v1/campaigns/${camp.body.campaignId}/messages`, { key: t.key });
    assert.deepEqual(msgs.body.items.map((m: any) => m.sentDate).sort(), ['2027-01-25T07:00:00.000Z', '2027-01-25T07:00:00.100Z']);
    assert.equal(camp.body.sentDate, '2027-01-25T07:00:00.000Z', "the campaign goes at the window's opening");
    // Rescheduled to another Saturday night: the next Monday's opening, on the ramp again.
    const moved = await request(server, 'PATCH', `/sms/v1/campaigns/${camp.body.campaignId}`, { key: t.key, body: { sentDate: '2027-01-30T21:00:00' } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.sentDate, '2027-02-01T07:00:00.000Z');
    const after = await request(server, 'GET', `/sms/v1/campaigns/${camp.body.campaignId}/messages`, { key: t.key });
    assert.deepEqual(after.body.items.map((m: any) => [m.sentDate, m.deferredUntil]).sort(), [
      ['2027-02-01T07:00:00.000Z', '2027-02-01T07:00:00.000Z'],
      ['2027-02-01T07:00:00.100Z', '2027-02-01T07:00:00.100Z'],
    ]);
    // Into the window: as asked, no longer deferred.
    const inside = await request(server, 'PATCH', `/sms/v1/campaigns/${camp.body.campaignId}`, { key: t.key, body: { sentDate: '2027-02-02T10:00:00' } });
    assert.equal(inside.body.sentDate, '2027-02-02T09:00:00.000Z');
    const asked = await request(server, 'GET', `/sms/v1/campaigns/${camp.body.campaignId}/messages`, { key: t.key });
    assert.deepEqual(
      asked.body.items.map((m: any) => [m.sentDate, m.deferredUntil]),
      [
        ['2027-02-02T09:00:00.000Z', undefined],
        ['2027-02-02T09:00:00.000Z', undefined],
      ],
    );
  });

  test('a ramp never runs past the closing: what would leave after it waits for the next opening', async () => {
    const t = await frenchTenant(server);
    // One minute a day on Monday and Tuesday, one message a second: 60 places on each day's ramp.
    const minute = { from: '08:00', to: '08:01' };
    const closed = { tuesday: minute, wednesday: null, thursday: null, friday: null, saturday: null, sunday: null };
    const set = await setWindow(server, t.organisationId, { hours: { monday: minute, ...closed }, holidayCalendar: 'NONE', rampPerSecond: 1 });
    assert.equal(set.status, 200, set.text);
    const recipients = Array.from({ length: 62 }, (_, i) => ({ to: `336123450${String(i).padStart(2, '0')}` }));
    // Saturday 16 January 2027, 21:00 Paris: deferred to Monday 18 January, 08:00 Paris (07:00Z).
    const camp = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: { recipients, body: { text: 'Soldes' }, sentDate: '2027-01-16T21:00:00' },
    });
    assert.equal(camp.status, 201, camp.text);
    assert.equal(camp.body.sentDate, '2027-01-18T07:00:00.000Z');
    const msgs = await request(server, 'GET', `/sms/v1/campaigns/${camp.body.campaignId}/messages?pageSize=100`, { key: t.key });
    const times = msgs.body.items.map((m: any) => m.sentDate).sort();
    assert.equal(times.length, 62);
    const monday = times.filter((d: string) => d.startsWith('2027-01-18'));
    assert.equal(monday.length, 60, 'the first 60 on Monday');
    assert.equal(monday[0], '2027-01-18T07:00:00.000Z');
    assert.equal(monday[59], '2027-01-18T07:00:59.000Z', 'the last one before the 08:01 closing');
    assert.deepEqual(times.slice(60), ['2027-01-19T07:00:00.000Z', '2027-01-19T07:00:01.000Z'], 'the two left over open Tuesday');
    assert.ok(
      msgs.body.items.every((m: any) => m.deferredUntil === m.sentDate),
      'each says when it goes',
    );
    // A message deferred to Monday now finds Monday's ramp full: it goes on Tuesday, after the two moved there.
    const late = await send(server, t.key, { sentDate: '2027-01-17T12:00:00' });
    assert.deepEqual([late.body.sentDate, late.body.deferredUntil], ['2027-01-19T07:00:02.000Z', '2027-01-19T07:00:02.000Z']);
    // Rescheduled onto a full ramp, the campaign's messages spill over the same way.
    const moved = await request(server, 'PATCH', `/sms/v1/campaigns/${camp.body.campaignId}`, { key: t.key, body: { sentDate: '2027-01-17T21:00:00' } });
    assert.equal(moved.status, 200, moved.text);
    const again = (await request(server, 'GET', `/sms/v1/campaigns/${camp.body.campaignId}/messages?pageSize=100`, { key: t.key })).body.items
      .map((m: any) => m.sentDate)
      .sort();
    // Monday's 60 places are taken: 57 more on Tuesday (places 3 to 59), and the last 5 on the next Monday.
    assert.equal(again.filter((d: string) => d.startsWith('2027-01-19')).length, 57, JSON.stringify(again));
    assert.equal(again[0], '2027-01-19T07:00:03.000Z');
    assert.equal(again[56], '2027-01-19T07:00:59.000Z');
    assert.deepEqual(again.slice(57), [
      '2027-01-25T07:00:00.000Z',
      '2027-01-25T07:00:01.000Z',
      '2027-01-25T07:00:02.000Z',
      '2027-01-25T07:00:03.000Z',
      '2027-01-25T07:00:04.000Z',
    ]);
    assert.equal(moved.body.sentDate, '2027-01-19T07:00:03.000Z', 'the campaign goes when its first message does');
  });

  test('the window override: keys with the ADMIN role only, recorded on the message', async () => {
    const t = await frenchTenant(server);
    const forced = await send(server, t.key, { sentDate: '2027-01-16T21:00:00', windowOverride: true });
    assert.equal(forced.status, 201, forced.text);
    assert.deepEqual([forced.body.sentDate, forced.body.deferredUntil, forced.body.windowOverride], ['2027-01-16T20:00:00.000Z', undefined, true]);
    const user = await createTenant(server, { flow: 'MARKETING', roles: ['USER'], balance: 1 });
    assertError(await send(server, user.key, { windowOverride: true }), 403, '403.001', /windowOverride/);
    assertError(await send(server, t.key, { windowOverride: 'yes' }), 400, '400.001', /windowOverride/);
  });

  test('released when the window opens, spread on the ramp: REST, SMPP and legacy HTTP alike; transactional at once', async (t0) => {
    const t = await createTenant(server, { balance: 10, flow: 'MARKETING', channel: { defaultFromField: 'SHOP' } });
    // Opens at the next whole minute at least 30 s away (the sends below must come before it on a busy machine),
    // every day until midnight, Paris time.
    const opening = Math.ceil((Date.now() + 30_000) / 60_000) * 60_000;
    const from = parisHhMm(opening);
    const hours = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, { from, to: '24:00' }]));
    const set = await setWindow(server, t.organisationId, { hours, holidayCalendar: 'NONE', rampPerSecond: 2 });
    assert.equal(set.status, 200, set.text);
    if (Date.now() >= opening - 20_000) {
      t0.skip('the machine paused for most of the half minute before the opening: nothing could be held');
      return;
    }

    const restIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(server, t.key, { body: { text: `Promo ${i}` } });
      assert.equal(r.status, 201, r.text);
      restIds.push(r.body.messageId);
    }
    const smppCred = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId: `win-${dialect}`, password: 'pw' },
    });
    assert.equal(smppCred.status, 201, smppCred.text);
    const esme = await packageClient(server.smppPort);
    try {
      assert.equal((await call(esme, 'bind_transceiver', { system_id: `win-${dialect}`, password: 'pw' })).command_status, 0);
      const resp = await call(esme, 'submit_sm', { source_addr: 'SHOP', destination_addr: '33612345679', short_message: Buffer.from('Promo SMPP') });
      assert.equal(resp.command_status, 0);
      const smppId = String(resp['message_id']);
      const legacy = await fetch(
        `${server.url}/http/1.6/sendSMS.do?${new URLSearchParams({ accessToken: t.key, message: 'Promo legacy', numero: '33612345670' })}`,
      );
      const text = await legacy.text();
      const legacyId = /^0 \| \w+ \| (\S+)$/.exec(text)?.[1];
      assert.ok(legacyId, text);

      const ids = [...restIds, smppId, legacyId];
      const accepted = await Promise.all(ids.map((id) => message(server, t.key, id)));
      // In order of acceptance, half a second apart from the opening.
      assert.deepEqual(
        accepted.map((m) => [m.status.value, m.sentDate, m.deferredUntil]),
        ids.map((_, i) => ['SCHEDULED', new Date(opening + i * 500).toISOString(), new Date(opening + i * 500).toISOString()]),
      );

      // A transactional message of the same organisation goes at once.
      const tx = await otherChannel(server, t.organisationId, 'TRANSACTIONAL');
      const now = await send(server, tx.key, {});
      assert.equal(now.body.deferredUntil, undefined);
      const txDone = await eventually(
        async () => {
          const m = await message(server, tx.key, now.body.messageId);
          return m.status.value === 'DELIVERED' ? m : undefined;
        },
        30_000,
        'the transactional message delivered',
      );
      assert.ok(Date.parse(txDone.status.deliveryDate) < opening, `delivered at ${txDone.status.deliveryDate}, before the window opened`);

      // Each deferred one leaves at its place on the ramp, not before.
      for (const id of ids) {
        const done = await eventually(
          async () => {
            const m = await message(server, t.key, id);
            return m.status.value === 'DELIVERED' ? m : undefined;
          },
          120_000,
          `${id} delivered after the opening`,
        );
        const events = await request(server, 'GET', `/sms/v1/messages/${id}/events`, { key: t.key });
        const enroute = events.body.items.find((e: any) => e.status === 'ENROUTE');
        assert.ok(enroute, JSON.stringify(events.body));
        assert.ok(Date.parse(enroute.date) >= Date.parse(done.sentDate), `${enroute.date} is not before ${done.sentDate}`);
      }
    } finally {
      esme.close();
    }
  });
});
