import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import parsePhoneNumber from 'libphonenumber-js/max';
import { carrier } from 'libphonenumber-geo-carrier';
import * as mccMncList from 'mcc-mnc-list';
import { PORTED_ENDING, UNREACHABLE_ENDING } from '../../../src/connectors/simulator/hlr.ts';
import { omitNulls } from '../../../src/domain/absent.ts';
import { countryName } from '../../../src/domain/phone.ts';
import { carrierPrefixTable } from '../../../src/core/lookup/carrier-prefixes.ts';
import { upsertPrices } from '../../../src/store/prices.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

type CarrierInput = Parameters<typeof carrier>[0];

// Mobile, fixed, toll-free and invalid (too short, bad range) numbers of twelve countries, plus an international
// freephone number that belongs to no country.
const SAMPLE = [
  '33612345678',
  '33142685300',
  '33800123456',
  '3361234567',
  '4915123456789',
  '49301234567',
  '498001234567',
  '49151234',
  '447400123456',
  '442079460018',
  '448001234567',
  '44740012345',
  '34606123456',
  '34912345678',
  '34900123456',
  '3460612345',
  '393312345678',
  '390612345678',
  '39800123456',
  '14155550100',
  '18002345678',
  '11234567890',
  '1415555010',
  '919000012345',
  '911123456789',
  '911800123456',
  '91900001234',
  '2348031234567',
  '23412345678',
  '234803123456',
  '5511971234567',
  '551123456789',
  '55800123456',
  '551197123456',
  '819021234567',
  '81312345678',
  '81120123456',
  '8190212345',
  '61407123456',
  '61212345678',
  '611800123456',
  '6140712345',
  '27821234567',
  '27211234567',
  '27800123456',
  '27121234',
  '80012345678',
];

const LOOKUP_FIELDS = [
  'msisdn',
  'valid',
  'possible',
  'type',
  'country',
  'isoCountryCode',
  'countryPrefix',
  'formats',
  'network',
  'mcc',
  'mnc',
  'mccMnc',
  'reachable',
  'ported',
  'roaming',
  'currentNetwork',
  'originalNetwork',
  'offline',
];

const DEFAULT_LOOKUP_PRICE = 0.005;

/** What the libraries themselves say about a number, in the API's shape (live part excluded; unknown fields absent). */
async function libraryView(msisdn: string) {
  const parsed = parsePhoneNumber(`+${msisdn}`);
  assert.ok(parsed, `libphonenumber parses ${msisdn}`);
  const libType = parsed.getType();
  const type = libType === 'FIXED_LINE_OR_MOBILE' ? 'MOBILE' : (libType ?? 'UNKNOWN');
  const mobile = parsed.isValid() && (type === 'MOBILE' || type === 'PAGER');
  return omitNulls({
    msisdn,
    valid: parsed.isValid(),
    possible: parsed.isPossible(),
    type,
    country: parsed.country ? countryName(parsed.country) : null,
    isoCountryCode: parsed.country ?? null,
    countryPrefix: parsed.countryCallingCode,
    formats: { e164: parsed.number, international: parsed.formatInternational(), national: parsed.formatNational() },
    network: mobile ? await carrier(parsed as unknown as CarrierInput) : null,
  });
}

forEachDialect('number lookup', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;

  before(async () => {
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 100 });
  });
  after(async () => server.stop());

  const db = () => server.app.store.db;
  const balanceOf = async (organisationId: string) => {
    const res = await request(server, 'GET', `/admin/v1/organisations/${organisationId}`, { key: server.adminKey });
    assert.equal(res.status, 200, res.text);
    return res.body.balance.amount as number;
  };
  /** The organisation's ledger through its API (the key must be an ADMIN or MANAGER key of it), oldest first. */
  const ledgerOf = async (owner: { organisationId: string; key: string }) => {
    const res = await request(server, 'GET', `/commons/v1/organisations/${owner.organisationId}/ledger?pageSize=100`, { key: owner.key });
    assert.equal(res.status, 200, res.text);
    return (res.body.items as Array<{ kind: string; amount: number; balance: number; description: string | null }>).reverse();
  };
  /** The LOOKUP rollups of an organisation, a row per key (the shards writers spread over added up). */
  const lookupRollupsOf = (organisationId: string) =>
    db()
      .selectFrom('consumption_rollups')
      .select(['channel_id', 'channel_type', 'day', 'status', 'mcc_mnc', 'price_kind'])
      .select((eb) => [eb.fn.sum<number>('quantity').as('quantity'), eb.fn.sum<number>('messages').as('messages'), eb.fn.sum<number>('amount').as('amount')])
      .where('organisation_id', '=', organisationId)
      .where('channel_type', '=', 'LOOKUP')
      .groupBy(['channel_id', 'channel_type', 'day', 'status', 'mcc_mnc', 'price_kind'])
      .orderBy('mcc_mnc')
      .execute();

  /** Looks a number up through both paths; they must answer byte for byte the same. */
  async function lookupBoth(key: string, input: string) {
    const byPath = await request(server, 'GET', `/commons/v1/lookup/${encodeURIComponent(input)}`, { key });
    const byQuery = await request(server, 'GET', `/lookup?msisdn=${encodeURIComponent(input)}`, { key });
    assert.equal(byQuery.status, byPath.status, `${input}: ${byPath.text} / ${byQuery.text}`);
    assert.equal(byQuery.text, byPath.text, input);
    return byPath;
  }

  test('numbers of twelve countries: validity, type, country, formats and network as the libraries say', async () => {
    const t = await createTenant(server, { balance: 10 });
    const seen = { countriesWithMobile: new Set<string>(), fixed: 0, tollFree: 0, invalid: 0, notPossible: 0 };
    for (const msisdn of SAMPLE) {
      const res = await lookupBoth(t.key, msisdn);
      assert.equal(res.status, 200, `${msisdn}: ${res.text}`);
      const body = res.body;
      assert.deepEqual(
        Object.keys(body),
        LOOKUP_FIELDS.filter((f) => f in body),
        `${msisdn}: fields in order, unknown ones absent`,
      );
      for (const always of ['msisdn', 'valid', 'possible']) assert.ok(always in body, `${msisdn}: ${always}`);
      const { reachable, ported, roaming, currentNetwork, originalNetwork, mcc, mnc, mccMnc, ...staticPart } = body;
      assert.deepEqual(staticPart, await libraryView(msisdn), msisdn);

      if (body.network === undefined) {
        assert.deepEqual([mcc, mnc, mccMnc], [undefined, undefined, undefined], msisdn);
      } else if (mccMnc !== undefined) {
        assert.equal(mccMnc, `${mcc}${mnc}`, msisdn);
        const listed = mccMncList.filter({ mcc, mnc });
        assert.ok(
          listed.some((o) => (o.countryCode ?? '').split('/').includes(body.isoCountryCode)),
          `${msisdn}: ${mccMnc} is listed for ${body.isoCountryCode}`,
        );
      }

      // The simulated network knows valid mobile numbers only; none of these end in a test pattern.
      if (body.valid && body.type === 'MOBILE') {
        const range = body.network === undefined ? undefined : omitNulls({ mccMnc: mccMnc ?? null, name: body.network });
        assert.deepEqual(
          { reachable, ported, roaming, currentNetwork, originalNetwork },
          { reachable: true, ported: false, roaming: false, currentNetwork: range, originalNetwork: range },
          msisdn,
        );
        if (body.network !== undefined) seen.countriesWithMobile.add(body.isoCountryCode);
      } else {
        assert.deepEqual(
          { reachable, ported, roaming, currentNetwork },
          { reachable: undefined, ported: undefined, roaming: undefined, currentNetwork: undefined },
          msisdn,
        );
      }
      if (body.valid && body.type === 'FIXED_LINE') seen.fixed++;
      if (body.valid && body.type === 'TOLL_FREE') seen.tollFree++;
      if (!body.valid) seen.invalid++;
      if (!body.possible) seen.notPossible++;
    }
    assert.ok(seen.countriesWithMobile.size >= 10, `mobiles with a network in ${[...seen.countriesWithMobile]}`);
    assert.ok(seen.fixed >= 10 && seen.tollFree >= 10, JSON.stringify({ ...seen, countriesWithMobile: undefined }));
    assert.ok(seen.invalid >= 10 && seen.notPossible >= 5, JSON.stringify({ ...seen, countriesWithMobile: undefined }));
  });

  test('well-known allocations answer their operator and MCC/MNC', async () => {
    const expected: Array<[string, string, string, string, string]> = [
      // msisdn, country, network, mccMnc, international format
      ['33612345678', 'France', 'SFR', '20810', '+33 6 12 34 56 78'],
      ['33660123456', 'France', 'Bouygues', '20820', '+33 6 60 12 34 56'],
      ['447770123456', 'United Kingdom', 'Vodafone', '23415', '+44 7770 123456'],
      ['4917212345678', 'Germany', 'Vodafone', '26202', '+49 172 12345678'],
      ['2348031234567', 'Nigeria', 'MTN', '62130', '+234 803 123 4567'],
      ['61407123456', 'Australia', 'Telstra', '50501', '+61 407 123 456'],
    ];
    for (const [msisdn, country, network, mccMnc, international] of expected) {
      const { body } = await lookupBoth(tenant.key, msisdn);
      assert.deepEqual(
        { valid: body.valid, type: body.type, country: body.country, network: body.network, mccMnc: body.mccMnc },
        { valid: true, type: 'MOBILE', country, network, mccMnc },
        msisdn,
      );
      assert.equal(body.formats.international, international, msisdn);
      assert.equal(body.formats.e164, `+${msisdn}`, msisdn);
    }
  });

  test('every common written form gives the same answer, normalised', async () => {
    const { body: reference } = await lookupBoth(tenant.key, '33612345678');
    for (const input of ['+33612345678', '+33 6 12 34 56 78', '0033612345678', '0033 6 12 34 56 78', '+33 (0)6 12-34-56-78']) {
      const res = await lookupBoth(tenant.key, input);
      assert.equal(res.status, 200, `${input}: ${res.text}`);
      assert.deepEqual(res.body, reference, input);
    }
    const viaNumber = await request(server, 'GET', `/lookup?number=${encodeURIComponent('+33 6 12 34 56 78')}`, { key: tenant.key });
    assert.equal(viaNumber.status, 200);
    assert.deepEqual(viaNumber.body, reference);
    // A '+' left unencoded in a query string reads as a space; the number still parses as international.
    const rawPlus = await request(server, 'GET', '/lookup?msisdn=+33612345678', { key: tenant.key });
    assert.deepEqual(rawPlus.body, reference);
  });

  test('input that is no phone number is refused with 400.003 and costs nothing', async () => {
    const t = await createTenant(server, { balance: 1 });
    const cases: Array<[string, RegExp]> = [
      ['3361234', /too short/],
      ['abc', /not a phone number/],
      ['0612345678', /national number/],
      ['1234567890123456', /15 digits/],
      ['+', /not a phone number/],
    ];
    for (const [input, why] of cases) {
      const res = await lookupBoth(t.key, input);
      assertError(res, 400, '400.003', why);
      assert.ok(res.body.detail.includes(input), res.body.detail);
    }
    assertError(await request(server, 'GET', '/lookup?msisdn=', { key: t.key }), 400, '400.003', /empty/);
    assertError(await request(server, 'GET', '/lookup', { key: t.key }), 400, '400.001', /msisdn/);
    assert.equal(await balanceOf(t.organisationId), 1);
    assert.equal((await ledgerOf(t)).filter((e) => e.kind === 'CHARGE').length, 0);
    assert.deepEqual(await lookupRollupsOf(t.organisationId), []);
  });

  test('national numbers are read in the organisation’s defaultCountry, as sends read them', async () => {
    const t = await createTenant(server, { balance: 1 });
    const set = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey, body: { defaultCountry: 'FR' } });
    assert.equal(set.status, 200, set.text);
    const reference = await lookupBoth(t.key, '33612345678');
    for (const input of ['0612345678', '06 12 34 56 78']) {
      const res = await lookupBoth(t.key, input);
      assert.equal(res.status, 200, `${input}: ${res.text}`);
      assert.deepEqual(res.body, reference.body, input);
    }
    const bulk = await request(server, 'POST', '/commons/v1/lookup', { key: t.key, body: { msisdns: ['0612345678', '33612345678', '0612'] } });
    assert.equal(bulk.status, 200, bulk.text);
    assert.deepEqual(
      bulk.body.items.map((i: any) => i.msisdn ?? i.error?.errorCode),
      ['33612345678', '33612345678', '400.003'],
    );
    // Another organisation without a country still refuses them, saying what to do.
    const other = await createTenant(server, { balance: 1 });
    assertError(await lookupBoth(other.key, '0612345678'), 400, '400.003', /national number.*defaultCountry/);
  });

  test('simulator: …555 is unreachable, …777 ported to another operator of the same country', async () => {
    const unreachable = await lookupBoth(tenant.key, `33612345${UNREACHABLE_ENDING}`);
    assert.deepEqual(
      [unreachable.body.network, unreachable.body.reachable, unreachable.body.ported, unreachable.body.currentNetwork],
      ['SFR', false, false, { mccMnc: '20810', name: 'SFR' }],
    );

    for (const msisdn of [`33607123${PORTED_ENDING}`, `447770123${PORTED_ENDING}`, `2348031234${PORTED_ENDING}`, `61407123${PORTED_ENDING}`]) {
      const { body } = await lookupBoth(tenant.key, msisdn);
      assert.equal(body.valid, true, msisdn);
      assert.equal(body.reachable, true, msisdn);
      assert.equal(body.ported, true, msisdn);
      assert.equal(typeof body.currentNetwork.name, 'string', msisdn);
      assert.notEqual(body.currentNetwork.name, body.network, msisdn);
      assert.deepEqual(body.originalNetwork.name, body.network, msisdn);
      // Google's data allocates some range of the same calling code to the new operator…
      const table = await carrierPrefixTable(body.countryPrefix);
      assert.ok([...table.values()].includes(body.currentNetwork.name), `${msisdn}: ${body.currentNetwork.name}`);
    }
    // …and of the same country where the calling code is shared: the largest operators of +1 and +44 serve other
    // countries, so the new operator must hold a range of the Jamaican (876) or Manx (7624) numbering.
    for (const [msisdn, iso, area] of [
      [`18762412${PORTED_ENDING}`, 'JM', '876'],
      [`447624123${PORTED_ENDING}`, 'IM', '7624'],
    ]) {
      const { body } = await lookupBoth(tenant.key, msisdn!);
      assert.equal(body.isoCountryCode, iso);
      assert.equal(body.ported, true, msisdn);
      const table = await carrierPrefixTable(body.countryPrefix);
      const local = [...table].filter(([prefix, name]) => prefix.startsWith(area!) && name === body.currentNetwork.name);
      assert.ok(local.length > 0, `${msisdn}: ${body.currentNetwork.name} holds a range of ${iso}`);
    }

    // Ported needs a known operator to move from: none for US numbers (no carrier data), none for fixed lines.
    const us = await lookupBoth(tenant.key, `14155550${PORTED_ENDING}`);
    assert.equal(us.body.valid, true);
    assert.deepEqual([us.body.network, us.body.reachable, us.body.ported, us.body.currentNetwork], [undefined, true, false, undefined]);
    const fixed = await lookupBoth(tenant.key, `33142685${PORTED_ENDING}`);
    assert.equal(fixed.body.type, 'FIXED_LINE');
    assert.deepEqual([fixed.body.reachable, fixed.body.ported, fixed.body.currentNetwork], [undefined, undefined, undefined]);
  });

  test('bulk: items in input order, bad inputs reported in their item, the rest answered as one by one', async () => {
    const t = await createTenant(server, { balance: 1 });
    const inputs = ['+33 6 12 34 56 78', 'abc', '4915123456789', '3361234567', '3361234', '0033612345678', '33142685300', ''];
    const res = await request(server, 'POST', '/commons/v1/lookup', { key: t.key, body: { msisdns: inputs } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.items.length, inputs.length);
    assert.deepEqual(
      res.body.items.map((i: any) => i.input),
      inputs,
    );

    const single = async (input: string) => (await request(server, 'GET', `/commons/v1/lookup/${encodeURIComponent(input)}`, { key: tenant.key })).body;
    for (const [i, input] of inputs.entries()) {
      const item = res.body.items[i];
      if (['abc', '3361234', ''].includes(input)) {
        assert.deepEqual(Object.keys(item), ['input', 'error'], input);
        assert.equal(item.error.errorCode, '400.003', input);
        assert.equal(item.error.message, 'Invalid phone number');
        assert.match(item.error.detail, /not a phone number|too short|empty/, input);
      } else {
        const { input: echoed, ...answer } = item;
        assert.equal(echoed, input);
        assert.deepEqual(answer, await single(input), input);
      }
    }
    assert.equal(res.body.items[0].msisdn, '33612345678');
    assert.equal(res.body.items[3].valid, false);

    // Five inputs were numbers (one invalid, still a query): charged together in one ledger row.
    const charges = (await ledgerOf(t)).filter((e) => e.kind === 'CHARGE');
    assert.equal(charges.length, 1);
    assert.equal(charges[0]!.amount, -5 * DEFAULT_LOOKUP_PRICE);
    assert.equal(charges[0]!.description, 'Number lookup of 5 numbers');
    assert.equal(await balanceOf(t.organisationId), 1 - 5 * DEFAULT_LOOKUP_PRICE);
  });

  test('bulk: limits and malformed bodies', async () => {
    const t = await createTenant(server, { balance: 100 });
    const post = (body: unknown) => request(server, 'POST', '/commons/v1/lookup', { key: t.key, body });
    assertError(await post({ msisdns: [] }), 400, '400.001', /msisdns/);
    assertError(await post({}), 400, '400.001', /msisdns/);
    assertError(await post({ msisdns: Array.from({ length: 1001 }, (_, i) => `336${String(i).padStart(8, '0')}`) }), 400, '400.001', /msisdns/);
    assertError(await post({ msisdns: ['33612345678'], extra: 1 }), 400, '400.001', /extra/);
    assert.equal(await balanceOf(t.organisationId), 100);

    const thousand = Array.from({ length: 1000 }, (_, i) => `336${String(10_000_000 + i * 7919).slice(-8)}`);
    const res = await post({ msisdns: thousand });
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.deepEqual(
      res.body.items.map((i: any) => i.msisdn),
      thousand,
    );
    assert.equal(await balanceOf(t.organisationId), 100 - 1000 * DEFAULT_LOOKUP_PRICE);
    const rollups = await lookupRollupsOf(t.organisationId);
    assert.equal(
      rollups.reduce((n, r) => n + Number(r.quantity), 0),
      1000,
    );
  });

  test('each lookup is charged to the organisation, in the ledger and the LOOKUP consumption rollups', async (ctx) => {
    const t = await createTenant(server, { balance: 2 });
    await upsertPrices(
      db(),
      [
        { channelType: 'LOOKUP', country: '*', kind: 'LOOKUP', amount: 5_000 },
        { channelType: 'LOOKUP', country: 'FR', kind: 'LOOKUP', amount: 8_000 },
      ],
      Date.now(),
    );
    // The other tests expect the shipped price for France.
    ctx.after(() => db().deleteFrom('prices').where('channel_type', '=', 'LOOKUP').where('country', '=', 'FR').execute());

    assert.equal((await request(server, 'GET', '/commons/v1/lookup/33612345678', { key: t.key })).status, 200);
    assert.equal((await request(server, 'GET', '/lookup?msisdn=33660123456', { key: t.key })).status, 200);
    assert.equal((await request(server, 'GET', '/lookup?msisdn=4915123456789', { key: t.key })).status, 200);
    assert.equal((await request(server, 'GET', '/lookup?msisdn=3361234567', { key: t.key })).status, 200); // invalid: still a query

    assert.equal(await balanceOf(t.organisationId), 2 - 0.008 * 3 - 0.005);
    const charges = (await ledgerOf(t)).filter((e) => e.kind === 'CHARGE');
    assert.deepEqual(
      charges.map((e) => [e.amount, e.balance, e.description]),
      [
        [-0.008, 1.992, 'Number lookup of 33612345678'],
        [-0.008, 1.984, 'Number lookup of 33660123456'],
        [-0.005, 1.979, 'Number lookup of 4915123456789'],
        [-0.008, 1.971, 'Number lookup of 3361234567'],
      ],
    );

    const today = new Date().toISOString().slice(0, 10);
    const rollups = (await lookupRollupsOf(t.organisationId)).map((r) => ({
      channel: r.channel_id,
      day: r.day,
      status: r.status,
      mccMnc: r.mcc_mnc,
      kind: r.price_kind,
      quantity: Number(r.quantity),
      messages: Number(r.messages),
      amount: Number(r.amount),
    }));
    const row = (mccMnc: string, quantity: number, amount: number) => ({
      channel: t.channelId,
      day: today,
      status: 'DONE',
      mccMnc,
      kind: 'LOOKUP',
      quantity,
      messages: quantity,
      amount,
    });
    assert.deepEqual(rollups, [row('', 1, 8_000), row('20810', 1, 8_000), row('20820', 1, 8_000), row('26201', 1, 5_000)]);

    // The organisation's monthly consumption includes the lookups.
    const org = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
    assert.equal(org.body.monthlyConsumption, 0.029);

    // And the consumption API reports them under channel type LOOKUP, by network, and not under SMS.
    for (const periodType of ['DAY', 'MONTH']) {
      const res = await request(server, 'GET', `/commons/v1/consumptions?searchBy[channel.type]=LOOKUP&searchBy[periodType]=${periodType}`, { key: t.key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.items.length, 1, periodType);
      const record = res.body.items[0];
      assert.equal(record.type, 'LOOKUP');
      assert.equal(record.periodType, periodType);
      assert.equal(record.channel.channelId, t.channelId);
      assert.equal(record.quantity, 4);
      assert.deepEqual(record.price, { amount: 0.029, currency: 'EUR' });
      const byNetwork = record.items
        .map((i: any) => [i.lookup.mccMnc, i.quantity, i.price.amount, i.statuses])
        .sort((a: any[], b: any[]) => String(a[0]).localeCompare(String(b[0])));
      assert.deepEqual(byNetwork, [
        ['20810', 1, 0.008, [{ value: 'DONE', quantity: 1 }]],
        ['20820', 1, 0.008, [{ value: 'DONE', quantity: 1 }]],
        ['26201', 1, 0.005, [{ value: 'DONE', quantity: 1 }]],
        [undefined, 1, 0.008, [{ value: 'DONE', quantity: 1 }]],
      ]);
    }
    const sms = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=SMS', { key: t.key });
    assert.equal(sms.status, 200, sms.text);
    assert.deepEqual(sms.body.items, []);
  });

  test('not enough balance: 409.002 and nothing charged, for one number and for a bulk request', async () => {
    const broke = await createTenant(server);
    assertError(await request(server, 'GET', '/commons/v1/lookup/33612345678', { key: broke.key }), 409, '409.002', /0\.005 EUR/);
    assertError(await request(server, 'GET', '/lookup?msisdn=33612345678', { key: broke.key }), 409, '409.002');
    assert.deepEqual(await ledgerOf(broke), []);
    assert.deepEqual(await lookupRollupsOf(broke.organisationId), []);

    // Enough for two lookups, not for three: the bulk request is all or nothing.
    const t = await createTenant(server, { balance: 0.01 });
    const res = await request(server, 'POST', '/commons/v1/lookup', {
      key: t.key,
      body: { msisdns: ['33612345678', '4915123456789', '447400123456'] },
    });
    assertError(res, 409, '409.002', /3 lookups/);
    assert.equal(await balanceOf(t.organisationId), 0.01);
    assert.equal((await ledgerOf(t)).filter((e) => e.kind === 'CHARGE').length, 0);
    assert.deepEqual(await lookupRollupsOf(t.organisationId), []);
    // Bad inputs only: nothing to charge, so a broke organisation still gets its answer.
    const onlyBad = await request(server, 'POST', '/commons/v1/lookup', { key: broke.key, body: { msisdns: ['abc'] } });
    assert.equal(onlyBad.status, 200);
    assert.equal(onlyBad.body.items[0].error.errorCode, '400.003');
  });

  test('concurrent lookups never take the balance below zero', async () => {
    const t = await createTenant(server, { balance: 0.02 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => request(server, 'GET', `/commons/v1/lookup/3361234560${i}`, { key: t.key })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 409, 409, 409, 409, 409, 409]);
    assert.equal(await balanceOf(t.organisationId), 0);
    assert.equal((await ledgerOf(t)).filter((e) => e.kind === 'CHARGE').length, 4);
  });

  test('any role and any channel type may look up; the charge goes to the key’s organisation', async () => {
    for (const [type, roles] of [
      ['SMS', ['MESSAGE']],
      ['RCS', ['USER']],
      ['VOICE', ['MANAGER']],
    ] as const) {
      const t = await createTenant(server, { type, roles: [...roles], balance: 1 });
      const res = await request(server, 'GET', '/lookup?msisdn=33612345678', { key: t.key });
      assert.equal(res.status, 200, `${type} ${roles}: ${res.text}`);
      assert.equal(await balanceOf(t.organisationId), 1 - DEFAULT_LOOKUP_PRICE, type);
      const rollups = await lookupRollupsOf(t.organisationId);
      assert.deepEqual(
        rollups.map((r) => [r.channel_id, r.channel_type]),
        [[t.channelId, 'LOOKUP']],
      );
    }
    assertError(await request(server, 'GET', '/lookup?msisdn=33612345678'), 401, '401.001');
    assertError(await request(server, 'GET', '/commons/v1/lookup/33612345678', { key: 'tern_unknown' }), 401, '401.002');
    assertError(await request(server, 'POST', '/commons/v1/lookup', { key: 'tern_unknown', body: { msisdns: ['33612345678'] } }), 401, '401.002');
  });

  test('a sub-organisation billed by its parent: the parent pays, the consumption is the sub-organisation’s', async () => {
    const parent = await createTenant(server, { balance: 1 });
    const admin = server.adminKey;
    const sub = await request(server, 'POST', '/admin/v1/organisations', {
      key: admin,
      body: { name: 'Sub', parentOrganisationId: parent.organisationId, parentBilling: true },
    });
    assert.equal(sub.status, 201, sub.text);
    const channel = await request(server, 'POST', `/admin/v1/organisations/${sub.body.organisationId}/channels`, {
      key: admin,
      body: { name: 'Sub SMS', type: 'SMS', flow: 'TRANSACTIONAL' },
    });
    const cred = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, {
      key: admin,
      body: { name: 'sub key', roles: ['USER'] },
    });
    const res = await request(server, 'GET', '/lookup?msisdn=33612345678', { key: cred.body.value });
    assert.equal(res.status, 200, res.text);
    assert.equal(await balanceOf(parent.organisationId), 1 - DEFAULT_LOOKUP_PRICE);
    assert.equal(await balanceOf(sub.body.organisationId), 0);
    assert.equal((await ledgerOf(parent)).filter((e) => e.kind === 'CHARGE').length, 1);
    assert.equal((await lookupRollupsOf(sub.body.organisationId)).length, 1);
    assert.equal((await lookupRollupsOf(parent.organisationId)).length, 0);
  });

  test('the OpenAPI document describes the three lookup operations', async () => {
    const doc = await request(server, 'GET', '/openapi.json');
    const paths = doc.body.paths;
    for (const [path, method] of [
      ['/lookup', 'get'],
      ['/commons/v1/lookup/{msisdn}', 'get'],
      ['/commons/v1/lookup', 'post'],
    ]) {
      const op = paths[path]?.[method];
      assert.ok(op, `${method} ${path}`);
      assert.ok(op.responses['200'].content['application/json'].schema, `${method} ${path} answer`);
    }
    const single = paths['/commons/v1/lookup/{msisdn}'].get.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(single.properties), LOOKUP_FIELDS);
  });
});
