import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { admin, connector, route } from '../../support/connectors.ts';
import { type LookupFake, startInfobipLookup, startTwilioLookup, type Subscriber } from '../../support/lookup-providers.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

// 33612345678's range is SFR's (208 10): ported to Bouygues Telecom (208 20). 33623456789 stays on SFR.
// 33698765432 is a Bouygues subscriber who is absent; 33611112222 belongs to nobody.
const PORTED: Subscriber = {
  msisdn: '33612345678',
  mccMnc: '20820',
  network: 'Bouygues Telecom',
  originalMccMnc: '20810',
  originalNetwork: 'SFR',
  reachable: true,
};
const HOME: Subscriber = { msisdn: '33623456789', mccMnc: '20810', network: 'SFR', originalMccMnc: '20810', originalNetwork: 'SFR', reachable: true };
const ABSENT: Subscriber = {
  msisdn: '33698765432',
  mccMnc: '20820',
  network: 'Bouygues Telecom',
  originalMccMnc: '20820',
  originalNetwork: 'Bouygues Telecom',
  reachable: false,
};
const NOBODY = '33611112222';
/** Ported too, and looked up by no test before the routing one. */
const PORTED_LATER: Subscriber = { ...PORTED, msisdn: '33612345679' };
/** Ported too, in a range whose route asks for a lookup before each send. */
const PORTED_CHECKED: Subscriber = { ...PORTED, msisdn: '33623456780' };
const TWILIO = { accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'twilio-auth-token-0123' };
const INFOBIP_KEY = 'infobip-api-key-0123456789';
const LOOKUP_PRICE = 0.005;
const SMS_PRICE = 0.045;

forEachDialect('live lookups and portability-aware routing', (dialect) => {
  let server: TestServer;
  let twilio: LookupFake;
  let infobip: LookupFake;
  let receiver: Receiver;
  let tenant: Tenant;
  let lookupRoute: string;

  const balanceOf = async (organisationId: string) => (await admin(server, 'GET', `/admin/v1/organisations/${organisationId}`)).body.balance.amount as number;
  const lookup = (key: string, msisdn: string) => request(server, 'GET', `/lookup?msisdn=${msisdn}`, { key });
  /** Points the LOOKUP route at a connector, and waits until the router uses it. */
  const lookupThrough = async (name: string) => {
    const r = await admin(server, 'PATCH', `/admin/v1/routes/${lookupRoute}`, { connectors: [{ connector: name }] });
    assert.equal(r.status, 200, r.text);
    await eventually(
      async () => (await admin(server, 'POST', '/admin/v1/routes/test', { to: PORTED.msisdn, type: 'LOOKUP' })).body.candidates?.[0]?.name === name,
      15_000,
      `lookups through ${name}`,
    );
  };
  const message = (id: string) =>
    server.app.store.db.selectFrom('messages').select(['status', 'status_detail', 'connector']).where('id', '=', id).executeTakeFirstOrThrow();
  const sms = async (to: string) => {
    const r = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to }, body: { text: 'Ported?' } } });
    assert.equal(r.status, 201, r.text);
    return r.body.messageId as string;
  };

  before(async () => {
    twilio = await startTwilioLookup(TWILIO, [PORTED, HOME, ABSENT, PORTED_LATER, PORTED_CHECKED]);
    infobip = await startInfobipLookup(INFOBIP_KEY, [PORTED, HOME, ABSENT, PORTED_LATER, PORTED_CHECKED]);
    receiver = await startReceiver();
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 100 });
    await connector(server, { name: 'twilio', type: 'TWILIO_LOOKUP', baseUrl: twilio.url, timeoutMs: 2_000, ...TWILIO });
    await connector(server, { name: 'infobip', type: 'INFOBIP_LOOKUP', baseUrl: infobip.url, timeoutMs: 2_000, apiKey: INFOBIP_KEY });
    lookupRoute = await route(server, { name: 'lookups', priority: 1, match: { type: 'LOOKUP' }, connectors: [{ connector: 'twilio' }] });
    // Two simulated networks, reached by MCC/MNC: SFR's (208 10) and Bouygues Telecom's (208 20).
    await connector(server, { name: 'net-sfr', type: 'SIMULATOR' });
    await connector(server, { name: 'net-bouygues', type: 'SIMULATOR' });
    await route(server, { name: 'sfr', priority: 2, match: { type: 'SMS', mccMnc: '20810' }, connectors: [{ connector: 'net-sfr' }] });
    await route(server, { name: 'bouygues', priority: 2, match: { type: 'SMS', mccMnc: '20820' }, connectors: [{ connector: 'net-bouygues' }] });
    // Sends to these two ranges ask for a lookup first.
    for (const prefix of ['3369876', '3361111']) {
      await route(server, {
        name: `checked-${prefix}`,
        priority: 0,
        match: { type: 'SMS', prefix },
        connectors: [{ connector: 'net-bouygues' }],
        lookupBeforeSend: true,
      });
    }
    // SFR's numbers of this range are looked up before each send; one found on another network goes by that one.
    await route(server, {
      name: 'checked-sfr',
      priority: 0,
      match: { type: 'SMS', prefix: '3362345678', mccMnc: '20810' },
      connectors: [{ connector: 'net-sfr' }],
      lookupBeforeSend: true,
    });
    await lookupThrough('twilio');
  });
  after(async () => {
    await server?.stop();
    await Promise.all([twilio?.close(), infobip?.close(), receiver?.close()]);
  });

  for (const provider of ['twilio', 'infobip'] as const) {
    test(`/lookup through ${provider}: the live fields, the smsmode fields kept, one lookup charged`, async () => {
      await lookupThrough(provider);
      const t = await createTenant(server, { balance: 1 });
      const r = await lookup(t.key, PORTED.msisdn);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        {
          country: r.body.country,
          isoCountryCode: r.body.isoCountryCode,
          countryPrefix: r.body.countryPrefix,
          network: r.body.network,
          mcc: r.body.mcc,
          mnc: r.body.mnc,
          mccMnc: r.body.mccMnc,
        },
        { country: 'France', isoCountryCode: 'FR', countryPrefix: '33', network: 'SFR', mcc: '208', mnc: '10', mccMnc: '20810' },
      );
      assert.equal(r.body.valid, true);
      assert.equal(r.body.reachable, true);
      assert.equal(r.body.ported, true);
      assert.deepEqual(r.body.currentNetwork, { mccMnc: '20820', name: 'Bouygues Telecom' });
      assert.deepEqual(r.body.originalNetwork, { mccMnc: '20810', name: 'SFR' });
      assert.equal(r.body.offline, undefined);
      if (provider === 'infobip') assert.equal(r.body.roaming, false);
      else assert.equal(r.body.roaming, undefined, 'Twilio does not say');

      const absent = await lookup(t.key, ABSENT.msisdn);
      assert.deepEqual([absent.body.valid, absent.body.reachable], [true, false]);
      const nobody = await lookup(t.key, NOBODY);
      assert.deepEqual([nobody.body.valid, nobody.body.reachable, nobody.body.currentNetwork], [false, false, undefined]);
      assert.equal(await balanceOf(t.organisationId), 1 - 3 * LOOKUP_PRICE);
      const consumption = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=LOOKUP', { key: t.key });
      assert.equal(consumption.status, 200, consumption.text);
    });
  }

  test('a provider that fails: 503 and nothing charged; with offlineFallback, the number plan flagged offline', async () => {
    await lookupThrough('infobip');
    const t = await createTenant(server, { balance: 1 });
    infobip.fault = 'error500';
    try {
      assertError(await lookup(t.key, PORTED.msisdn), 503, '503.001', /could not be made: Infobip answered HTTP 500; nothing was charged/);
      assert.equal(await balanceOf(t.organisationId), 1);
      const changed = await admin(
        server,
        'PATCH',
        `/admin/v1/connectors/${(await admin(server, 'GET', '/admin/v1/connectors')).body.items.find((c: { name: string }) => c.name === 'infobip').connectorId}`,
        { offlineFallback: true },
      );
      assert.equal(changed.status, 200, changed.text);
      const offline = await eventually(
        async () => {
          const r = await lookup(t.key, PORTED.msisdn);
          return r.status === 200 ? r : undefined;
        },
        15_000,
        'the offline answer',
      );
      assert.equal(offline.body.offline, true);
      assert.deepEqual(offline.body.currentNetwork, { mccMnc: '20810', name: 'SFR' });
      assert.equal(offline.body.reachable, undefined);
      assert.equal(offline.body.ported, undefined);
      assert.equal(await balanceOf(t.organisationId), 1 - LOOKUP_PRICE);
    } finally {
      infobip.fault = 'none';
    }
  });

  test('an SMS to a number ported from SFR to Bouygues goes to the Bouygues route once a lookup found it', async () => {
    await lookupThrough('twilio');
    // Not looked up yet: routed by its range, to SFR.
    const before = await sms(PORTED_LATER.msisdn);
    await eventually(async () => (await message(before)).connector !== null, 15_000, 'placed');
    assert.equal((await message(before)).connector, 'net-sfr', 'the range’s route');
    assert.equal((await lookup(tenant.key, PORTED_LATER.msisdn)).body.ported, true);
    const afterLookup = await sms(PORTED_LATER.msisdn);
    await eventually(async () => (await message(afterLookup)).connector !== null, 15_000, 'placed');
    assert.equal((await message(afterLookup)).connector, 'net-bouygues');
    const explained = await admin(server, 'POST', '/admin/v1/routes/test', { to: PORTED_LATER.msisdn });
    assert.deepEqual([explained.body.mccMnc, explained.body.route, explained.body.candidates[0]?.name], ['20820', 'bouygues', 'net-bouygues']);
    assert.match(explained.body.reason, /routed by 20820, the network a lookup found the number on, not its range's 20810 one/);
    // A number the lookup found where its range says stays there.
    await lookup(tenant.key, HOME.msisdn);
    const home = await sms(HOME.msisdn);
    await eventually(async () => (await message(home)).connector !== null, 15_000, 'placed');
    assert.equal((await message(home)).connector, 'net-sfr');
    // Every node reads the same kept result: it is in the database, until TERN_LOOKUP_CACHE_DAYS.
    const kept = await server.app.store.db.selectFrom('number_lookups').selectAll().where('msisdn', '=', PORTED_LATER.msisdn).executeTakeFirstOrThrow();
    assert.equal(kept.current_mcc_mnc, '20820');
    assert.equal(kept.connector, 'twilio');
    assert.equal(Number(kept.expires_at) - Number(kept.looked_up_at), 30 * 86_400_000);
  });

  test('lookupBeforeSend: an absent or unknown number ends UNDELIVERABLE unsent, the SMS refunded, the lookup charged', async () => {
    await lookupThrough('twilio');
    const t = await createTenant(server, { balance: 1 });
    const asked = twilio.requests.length;
    const ids: string[] = [];
    for (const to of [ABSENT.msisdn, NOBODY]) {
      const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 'Checked first' } } });
      assert.equal(r.status, 201, r.text);
      ids.push(r.body.messageId);
    }
    const ended = await eventually(
      async () => {
        const rows = await Promise.all(ids.map(message));
        return rows.every((m) => m.status === 'UNDELIVERABLE') ? rows : undefined;
      },
      15_000,
      'both ended',
    );
    assert.deepEqual(
      ended.map((m) => [m.status_detail, m.connector]),
      [
        ['ABSENT_SUBSCRIBER', null],
        ['INVALID_PHONE_NUMBER', null],
      ],
    );
    const seen = await request(server, 'GET', `/sms/v1/messages/${ids[0]}`, { key: t.key });
    assert.deepEqual([seen.body.status.value, seen.body.status.detail], ['UNDELIVERABLE', 'ABSENT_SUBSCRIBER']);
    assert.equal(twilio.requests.length - asked, 2, 'one lookup each');
    // The SMS was refunded; each lookup is charged as a lookup of its own.
    await eventually(async () => (await balanceOf(t.organisationId)) === Number((1 - 2 * LOOKUP_PRICE).toFixed(6)), 15_000, 'refunded, lookups charged');
    const rollups = await server.app.store.db
      .selectFrom('consumption_rollups')
      .select(['channel_type', 'price_kind', (eb) => eb.fn.sum<number>('quantity').as('quantity')])
      .where('organisation_id', '=', t.organisationId)
      .where('channel_type', '=', 'LOOKUP')
      .groupBy(['channel_type', 'price_kind'])
      .execute();
    assert.deepEqual(
      rollups.map((r) => [r.channel_type, r.price_kind, Number(r.quantity)]),
      [['LOOKUP', 'LOOKUP', 2]],
    );
  });

  test('lookupBeforeSend: a number the lookup finds ported goes to its new network’s route, and is sent', async () => {
    await lookupThrough('twilio');
    const t = await createTenant(server, { balance: 1 });
    const r = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: PORTED_CHECKED.msisdn }, body: { text: 'Checked, then sent' } },
    });
    assert.equal(r.status, 201, r.text);
    const sent = await eventually(
      async () => {
        const m = await message(r.body.messageId);
        return m.connector !== null ? m : undefined;
      },
      15_000,
      'placed',
    );
    assert.equal(sent.connector, 'net-bouygues');
    await eventually(async () => (await message(r.body.messageId)).status === 'DELIVERED', 15_000, 'delivered');
    // The SMS and its lookup, each charged.
    assert.equal(await balanceOf(t.organisationId), Number((1 - SMS_PRICE - LOOKUP_PRICE).toFixed(6)));
  });

  test('batch: POST /lookup with msisdns answers 202, then one signed webhook with every item', async () => {
    await lookupThrough('infobip');
    const t = await createTenant(server, { balance: 1 });
    const inputs = [PORTED.msisdn, 'abc', ABSENT.msisdn, NOBODY];
    const r = await request(server, 'POST', '/lookup', { key: t.key, body: { msisdns: inputs, callbackUrl: `${receiver.url}/lookups/${t.channelId}` } });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.count, 4);
    const hook = await eventually(() => receiver.requests.find((q) => q.url === `/lookups/${t.channelId}`), 15_000, 'the batch webhook');
    const { secret } = (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body;
    new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });
    assert.equal(hook.json.event, 'lookup.completed');
    assert.equal(hook.json.batchId, r.body.batchId);
    assert.deepEqual(
      hook.json.items.map((i: { input: string }) => i.input),
      inputs,
    );
    assert.deepEqual(hook.json.items[0].currentNetwork, { mccMnc: '20820', name: 'Bouygues Telecom' });
    assert.equal(hook.json.items[1].error.errorCode, '400.003');
    assert.equal(hook.json.items[2].reachable, false);
    assert.equal(hook.json.items[3].valid, false);
    assert.equal(await balanceOf(t.organisationId), 1 - 3 * LOOKUP_PRICE);

    // The one-number form of the same path answers at once.
    const one = await request(server, 'POST', '/lookup', { key: t.key, body: { msisdn: HOME.msisdn } });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body.currentNetwork, { mccMnc: '20810', name: 'SFR' });
  });

  test('batch: one stored by a node that stopped under way is run by whichever node finds its lease run out', async () => {
    await lookupThrough('twilio');
    const t = await createTenant(server, { balance: 1 });
    // What a node leaves when it dies running a batch it accepted: the batch stored, tried once, its lease run out.
    const id = '0193f6a1-0000-7000-8000-00000000beef';
    await server.app.store.db
      .insertInto('lookup_batches')
      .values({
        id,
        organisation_id: t.organisationId,
        channel_id: t.channelId,
        numbers: JSON.stringify([HOME.msisdn]),
        callback_url: `${receiver.url}/left/${t.channelId}`,
        accepted_at: Date.now() - 60_000,
        due_at: Date.now() - 60_000,
        lease_until: Date.now() - 1,
        attempts: 1,
      })
      .execute();
    // As the safety poll or the heartbeat wakes a node for work that nobody holds.
    server.app.store.signals.fire('lookup-batches');
    const hook = await eventually(() => receiver.requests.find((q) => q.url === `/left/${t.channelId}`), 15_000, 'the batch webhook');
    assert.equal(hook.json.event, 'lookup.completed');
    assert.equal(hook.json.batchId, id);
    assert.deepEqual(hook.json.items[0].currentNetwork, { mccMnc: '20810', name: 'SFR' });
    await eventually(
      async () => (await server.app.store.db.selectFrom('lookup_batches').select('id').where('id', '=', id).execute()).length === 0,
      15_000,
      'the batch gone with its webhook',
    );
  });

  test('batch: stored until its webhook is written, then gone', async () => {
    const t = await createTenant(server, { balance: 1 });
    const r = await request(server, 'POST', '/lookup', { key: t.key, body: { msisdns: [HOME.msisdn], callbackUrl: `${receiver.url}/gone/${t.channelId}` } });
    assert.equal(r.status, 202, r.text);
    await eventually(() => receiver.requests.find((q) => q.url === `/gone/${t.channelId}`), 15_000, 'the batch webhook');
    const left = await server.app.store.db.selectFrom('lookup_batches').select('id').where('id', '=', r.body.batchId).execute();
    assert.deepEqual(left, []);
  });

  test('batch: a balance that does not cover it ends lookup.failed, nothing charged', async () => {
    const t = await createTenant(server, { balance: 0.004 });
    const r = await request(server, 'POST', '/lookup', {
      key: t.key,
      body: { msisdns: [PORTED.msisdn, HOME.msisdn], callbackUrl: `${receiver.url}/poor/${t.channelId}` },
    });
    assert.equal(r.status, 202, r.text);
    const hook = await eventually(() => receiver.requests.find((q) => q.url === `/poor/${t.channelId}`), 15_000, 'the batch webhook');
    assert.equal(hook.json.event, 'lookup.failed');
    assert.equal(hook.json.error.errorCode, '409.002');
    assert.equal(await balanceOf(t.organisationId), 0.004);
  });

  test('bad input: clear 400s, nothing started or charged', async () => {
    const t = await createTenant(server, { balance: 1 });
    const post = (body: unknown) => request(server, 'POST', '/lookup', { key: t.key, body });
    assertError(await post({}), 400, '400.001', /either msisdn .* or msisdns/);
    assertError(await post({ msisdn: PORTED.msisdn, msisdns: [PORTED.msisdn] }), 400, '400.001', /either msisdn/);
    assertError(await post({ msisdns: [] }), 400, '400.001', /at least one number/);
    assertError(await post({ msisdns: Array.from({ length: 1_001 }, () => PORTED.msisdn), callbackUrl: receiver.url }), 400, '400.001');
    assertError(await post({ msisdns: [PORTED.msisdn], callbackUrl: 'not a url' }), 400, '400.001', /callbackUrl/);
    assertError(await post({ msisdns: [PORTED.msisdn] }), 400, '400.001', /callbackUrl: is required/);
    assertError(await post({ msisdn: PORTED.msisdn, callbackUrl: receiver.url }), 400, '400.001', /only for a batch/);
    assertError(await post({ msisdns: [PORTED.msisdn], callbackUrl: receiver.url, extra: 1 }), 400, '400.001');
    assertError(await post({ msisdn: '0612' }), 400, '400.003');
    assert.equal((await request(server, 'POST', '/lookup', { key: null, body: { msisdn: PORTED.msisdn } })).status, 401);
    assert.equal(await balanceOf(t.organisationId), 1);

    // Connectors and routes refuse bad lookup settings, naming the field.
    assertError(
      await admin(server, 'POST', '/admin/v1/connectors', { name: 'no-token', type: 'TWILIO_LOOKUP', accountSid: 'AC1' }),
      400,
      '400.001',
      /authToken/,
    );
    assertError(await admin(server, 'POST', '/admin/v1/connectors', { name: 'no-host', type: 'INFOBIP_LOOKUP', apiKey: 'k' }), 400, '400.001', /baseUrl/);
    assertError(
      await admin(server, 'POST', '/admin/v1/routes', { name: 'x', match: { type: 'LOOKUP' }, connectors: [{ connector: 'twilio' }], lookupBeforeSend: true }),
      400,
      '400.001',
      /lookupBeforeSend/,
    );
    assertError(
      await admin(server, 'POST', '/admin/v1/routes', { name: 'x', connectors: [{ connector: 'twilio' }], lookupBeforeSend: 'yes' }),
      400,
      '400.001',
      /lookupBeforeSend/,
    );
  });
});
