import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { InfobipLookupConnector } from '../../src/connectors/infobip-lookup/connector.ts';
import { INFOBIP_LOOKUP_KIND } from '../../src/connectors/infobip-lookup/kind.ts';
import { TwilioLookupConnector } from '../../src/connectors/twilio-lookup/connector.ts';
import { TWILIO_LOOKUP_KIND } from '../../src/connectors/twilio-lookup/kind.ts';
import { CoreError } from '../../src/core/errors.ts';
import { lookupNumber } from '../../src/core/lookup/enrich.ts';
import { LookupUnavailableError } from '../../src/core/lookup/number-status.ts';
import { type LookupFake, startInfobipLookup, startTwilioLookup, type Subscriber } from '../support/lookup-providers.ts';
import { connectorHarness } from './harness.ts';

// 33612345678's range is SFR's (208 10); it was ported to Bouygues Telecom (208 20). 33698765432 is on Bouygues, absent.
const PORTED: Subscriber = {
  msisdn: '33612345678',
  mccMnc: '20820',
  network: 'Bouygues Telecom',
  originalMccMnc: '20810',
  originalNetwork: 'SFR',
  reachable: true,
};
const ABSENT: Subscriber = {
  msisdn: '33698765432',
  mccMnc: '20820',
  network: 'Bouygues Telecom',
  originalMccMnc: '20820',
  originalNetwork: 'Bouygues Telecom',
  reachable: false,
};
const HOME: Subscriber = { msisdn: '33623456789', mccMnc: '20810', network: 'SFR', originalMccMnc: '20810', originalNetwork: 'SFR', reachable: true };
const NOBODY = '33611112222';
const SUBSCRIBERS = [PORTED, ABSENT, HOME];
const TWILIO = { accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'twilio-auth-token-0123' };
const INFOBIP_KEY = 'infobip-api-key-0123456789';
const settings = (baseUrl: string, over: Partial<{ timeoutMs: number; offlineFallback: boolean }> = {}) => ({
  baseUrl,
  timeoutMs: 2_000,
  offlineFallback: false,
  ...over,
});

let twilio: LookupFake;
let infobip: LookupFake;
before(async () => {
  twilio = await startTwilioLookup(TWILIO, SUBSCRIBERS);
  infobip = await startInfobipLookup(INFOBIP_KEY, SUBSCRIBERS);
});
after(async () => {
  await twilio.close();
  await infobip.close();
});

const noOperator = { deliverable: [], settle: async () => {}, close: async () => {} };

describe('TWILIO_LOOKUP', () => {
  connectorHarness('TWILIO_LOOKUP', {
    idempotentSubmit: false,
    lookup: {
      known: [
        {
          msisdn: PORTED.msisdn,
          expect: {
            valid: true,
            reachable: true,
            ported: true,
            roaming: null,
            currentNetwork: { mccMnc: '20820', name: 'Bouygues Telecom' },
            originalNetwork: { mccMnc: '20810', name: 'SFR' },
          },
        },
        { msisdn: ABSENT.msisdn, expect: { valid: true, reachable: false, ported: false, currentNetwork: { mccMnc: '20820', name: 'Bouygues Telecom' } } },
        { msisdn: HOME.msisdn, expect: { valid: true, reachable: true, ported: false, currentNetwork: { mccMnc: '20810', name: 'SFR' } } },
      ],
      unknown: NOBODY,
      fail: (failing) => (twilio.fault = failing ? 'error500' : 'none'),
    },
    create: async (name) => ({ connector: new TwilioLookupConnector(name, settings(twilio.url), TWILIO), operator: noOperator }),
  });

  test('asks Lookup v2 for the line type and line status of the E.164 number, with HTTP Basic auth', async () => {
    const c = new TwilioLookupConnector('t', settings(twilio.url), TWILIO);
    const before = twilio.requests.length;
    await c.numberStatus(await lookupNumber(PORTED.msisdn));
    const [req] = twilio.requests.slice(before);
    assert.equal(req?.method, 'GET');
    assert.equal(req?.path, '/v2/PhoneNumbers/%2B33612345678');
    assert.equal(req?.query.get('Fields'), 'line_type_intelligence,line_status');
    assert.equal(req?.headers.authorization, `Basic ${Buffer.from(`${TWILIO.accountSid}:${TWILIO.authToken}`).toString('base64')}`);
  });

  test('a wrong auth token is a clear error naming Twilio’s code, never the token', async () => {
    const c = new TwilioLookupConnector('t', settings(twilio.url), { ...TWILIO, authToken: 'wrong' });
    await assert.rejects(c.numberStatus(await lookupNumber(HOME.msisdn)), (err: unknown) => {
      assert.ok(err instanceof LookupUnavailableError);
      assert.match(err.reason, /refused the account SID or auth token \(error 20003/);
      assert.doesNotMatch(err.message, /wrong|twilio-auth-token/);
      return true;
    });
  });

  test('a provider that does not answer in time: a timeout, or the number plan flagged offline when allowed', async () => {
    twilio.fault = 'hang';
    try {
      const strict = new TwilioLookupConnector('t', settings(twilio.url, { timeoutMs: 300 }), TWILIO);
      await assert.rejects(strict.numberStatus(await lookupNumber(PORTED.msisdn)), /did not answer within 300 ms/);
      const lenient = new TwilioLookupConnector('t', settings(twilio.url, { timeoutMs: 300, offlineFallback: true }), TWILIO);
      const offline = await lenient.numberStatus(await lookupNumber(PORTED.msisdn));
      assert.deepEqual(offline, {
        valid: true,
        reachable: null,
        ported: null,
        roaming: null,
        currentNetwork: { mccMnc: '20810', name: 'SFR' },
        originalNetwork: { mccMnc: '20810', name: 'SFR' },
        offline: true,
      });
    } finally {
      twilio.fault = 'none';
    }
  });

  test('settings: default base URL, both secrets required, unknown settings refused', () => {
    const ok = TWILIO_LOOKUP_KIND.validate({}, TWILIO);
    assert.deepEqual(ok.settings, { baseUrl: 'https://lookups.twilio.com', timeoutMs: 5_000, offlineFallback: false });
    const refused = (s: Record<string, unknown>, secrets: Record<string, string>, field: string) =>
      assert.throws(
        () => TWILIO_LOOKUP_KIND.validate(s, secrets),
        (e: unknown) => e instanceof CoreError && e.field === field,
      );
    refused({}, { accountSid: TWILIO.accountSid }, 'authToken');
    refused({}, { authToken: TWILIO.authToken }, 'accountSid');
    refused({ tps: 3 }, TWILIO, 'tps');
    refused({ baseUrl: 'ftp://x' }, TWILIO, 'baseUrl');
    refused({ timeoutMs: 10 }, TWILIO, 'timeoutMs');
    refused({ offlineFallback: 'yes' }, TWILIO, 'offlineFallback');
  });
});

describe('INFOBIP_LOOKUP', () => {
  connectorHarness('INFOBIP_LOOKUP', {
    idempotentSubmit: false,
    lookup: {
      known: [
        {
          msisdn: PORTED.msisdn,
          expect: {
            valid: true,
            reachable: true,
            ported: true,
            roaming: false,
            currentNetwork: { mccMnc: '20820', name: 'Bouygues Telecom' },
            originalNetwork: { mccMnc: '20810', name: 'SFR' },
          },
        },
        {
          msisdn: ABSENT.msisdn,
          expect: {
            valid: true,
            reachable: false,
            ported: false,
            currentNetwork: { mccMnc: '20820', name: 'Bouygues Telecom' },
            originalNetwork: { mccMnc: '20820', name: 'Bouygues Telecom' },
          },
        },
        { msisdn: HOME.msisdn, expect: { valid: true, reachable: true, ported: false, currentNetwork: { mccMnc: '20810', name: 'SFR' } } },
      ],
      unknown: NOBODY,
      fail: (failing) => (infobip.fault = failing ? 'error500' : 'none'),
    },
    create: async (name) => ({ connector: new InfobipLookupConnector(name, settings(infobip.url), INFOBIP_KEY), operator: noOperator }),
  });

  test('posts {"to":[…]} to /number/1/query with the App key', async () => {
    const c = new InfobipLookupConnector('i', settings(infobip.url), INFOBIP_KEY);
    const before = infobip.requests.length;
    await c.numberStatus(await lookupNumber(HOME.msisdn));
    const [req] = infobip.requests.slice(before);
    assert.equal(req?.method, 'POST');
    assert.equal(req?.path, '/number/1/query');
    assert.equal(req?.headers.authorization, `App ${INFOBIP_KEY}`);
    assert.deepEqual(JSON.parse(req!.body), { to: [HOME.msisdn] });
  });

  test('roaming is answered as Infobip says it', async () => {
    infobip.subscribers.set('33634567890', { ...HOME, msisdn: '33634567890', roaming: true });
    const c = new InfobipLookupConnector('i', settings(infobip.url), INFOBIP_KEY);
    const s = await c.numberStatus(await lookupNumber('33634567890'));
    assert.equal(s.roaming, true);
    assert.equal(s.reachable, true);
  });

  test('a wrong API key is a clear error naming Infobip’s answer', async () => {
    const c = new InfobipLookupConnector('i', settings(infobip.url), 'wrong-key');
    await assert.rejects(c.numberStatus(await lookupNumber(HOME.msisdn)), /refused the API key \(UNAUTHORIZED: Invalid login details\)/);
  });

  test('a provider that cannot be reached: a clear error, or the number plan flagged offline when allowed', async () => {
    const closed = `http://127.0.0.1:1`;
    await assert.rejects(new InfobipLookupConnector('i', settings(closed), INFOBIP_KEY).numberStatus(await lookupNumber(HOME.msisdn)), /could not be reached/);
    const offline = await new InfobipLookupConnector('i', settings(closed, { offlineFallback: true }), INFOBIP_KEY).numberStatus(
      await lookupNumber(HOME.msisdn),
    );
    assert.equal(offline.offline, true);
    assert.deepEqual(offline.currentNetwork, { mccMnc: '20810', name: 'SFR' });
  });

  test('settings: the account’s base URL and the API key are required', () => {
    assert.throws(
      () => INFOBIP_LOOKUP_KIND.validate({}, { apiKey: 'k' }),
      (e: unknown) => e instanceof CoreError && e.field === 'baseUrl',
    );
    assert.throws(
      () => INFOBIP_LOOKUP_KIND.validate({ baseUrl: 'https://x.api.infobip.com' }, {}),
      (e: unknown) => e instanceof CoreError && e.field === 'apiKey',
    );
    assert.deepEqual(INFOBIP_LOOKUP_KIND.validate({ baseUrl: 'https://x.api.infobip.com/' }, { apiKey: 'k' }).settings, {
      baseUrl: 'https://x.api.infobip.com',
      timeoutMs: 5_000,
      offlineFallback: false,
    });
  });
});

test('the fakes refuse what the real services refuse', async () => {
  const t = await fetch(`${twilio.url}/v2/PhoneNumbers/%2B33612345678?Fields=carrier`, {
    headers: { authorization: `Basic ${Buffer.from(`${TWILIO.accountSid}:${TWILIO.authToken}`).toString('base64')}` },
  });
  assert.equal(t.status, 400);
  assert.equal(((await t.json()) as { code: number }).code, 60200);
  const i = await fetch(`${infobip.url}/number/1/query`, {
    method: 'POST',
    headers: { authorization: `App ${INFOBIP_KEY}`, 'content-type': 'application/json' },
    body: '{"to":"33612345678"}',
  });
  assert.equal(i.status, 400);
  assert.equal(((await i.json()) as any).requestError.serviceException.messageId, 'BAD_REQUEST');
});

test('whatever a provider answers, a connector gives a well-typed answer or a LookupUnavailableError', async () => {
  let next: { status: number; body: string } = { status: 200, body: '{}' };
  const server = createServer((_req, res) => void res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connectors = [new TwilioLookupConnector('t', settings(url), TWILIO), new InfobipLookupConnector('i', settings(url), INFOBIP_KEY)];
  const number = await lookupNumber(PORTED.msisdn);
  const networkOk = (n: unknown) =>
    n === null ||
    (typeof n === 'object' &&
      ['string', 'object'].includes(typeof (n as { mccMnc: unknown }).mccMnc) &&
      ['string', 'object'].includes(typeof (n as { name: unknown }).name));
  const flagOk = (v: unknown) => v === null || typeof v === 'boolean';
  // Shapes near the real answers, with wrong types and missing parts mixed in.
  const anything = fc.jsonValue({ maxDepth: 3 });
  const twilioLike = fc.record(
    {
      valid: fc.oneof(fc.boolean(), anything),
      line_type_intelligence: fc.oneof(
        anything,
        fc.record({
          mobile_country_code: fc.oneof(fc.constant('208'), anything),
          mobile_network_code: fc.oneof(fc.constant('20'), anything),
          carrier_name: anything,
        }),
      ),
      line_status: fc.oneof(
        anything,
        fc.record({ status: fc.oneof(fc.constantFrom('reachable', 'unreachable', 'active', 'inactive', 'unknown', 'BOGUS'), anything) }),
      ),
    },
    { requiredKeys: [] },
  );
  const infobipLike = fc.record(
    {
      results: fc.oneof(
        anything,
        fc.array(
          fc.record(
            {
              to: fc.oneof(fc.constant(PORTED.msisdn), anything),
              mccMnc: anything,
              ported: anything,
              roaming: anything,
              originalNetwork: anything,
              portedNetwork: anything,
              status: fc.oneof(anything, fc.record({ groupName: fc.constantFrom('DELIVERED', 'UNDELIVERABLE', 'REJECTED', 'PENDING') })),
              error: fc.oneof(anything, fc.record({ name: fc.constantFrom('NO_ERROR', 'EC_ABSENT_SUBSCRIBER', 'EC_UNKNOWN_SUBSCRIBER') })),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
      ),
    },
    { requiredKeys: [] },
  );
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(200, 200, 200, 400, 401, 404, 429, 500, 503),
        fc.oneof(twilioLike, infobipLike, anything),
        fc.boolean(),
        async (status, body, notJson) => {
          next = { status, body: notJson ? 'not json <html>' : JSON.stringify(body) };
          for (const c of connectors) {
            try {
              const s = await c.numberStatus(number);
              for (const f of [s.valid, s.reachable, s.ported, s.roaming]) assert.ok(flagOk(f), JSON.stringify(s));
              assert.ok(networkOk(s.currentNetwork) && networkOk(s.originalNetwork), JSON.stringify(s));
              assert.equal(status, 200, 'only a 200 is an answer');
            } catch (err) {
              if (err instanceof assert.AssertionError) throw err;
              assert.ok(err instanceof LookupUnavailableError, `${c.kind}: ${String(err)}`);
            }
          }
        },
      ),
      { seed: 45_2026, numRuns: 300 },
    );
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
