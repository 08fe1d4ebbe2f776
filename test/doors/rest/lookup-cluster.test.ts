import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { admin, connector, route } from '../../support/connectors.ts';
import { type LookupFake, startTwilioLookup, type Subscriber } from '../../support/lookup-providers.ts';
import { createTenant, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

// 33612345678's range is SFR's (208 10); the number was ported to Bouygues Telecom (208 20).
const PORTED: Subscriber = {
  msisdn: '33612345678',
  mccMnc: '20820',
  network: 'Bouygues Telecom',
  originalMccMnc: '20810',
  originalNetwork: 'SFR',
  reachable: true,
};
const TWILIO = { accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'twilio-auth-token-0123' };

describe('lookup results across a cluster [postgres]', { skip }, () => {
  let first: TestServer;
  let second: TestServer;
  let twilio: LookupFake;

  before(async () => {
    twilio = await startTwilioLookup(TWILIO, [PORTED]);
    first = await startTestServer('postgres');
    second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    await connector(first, { name: 'twilio', type: 'TWILIO_LOOKUP', baseUrl: twilio.url, ...TWILIO });
    await connector(first, { name: 'net-sfr', type: 'SIMULATOR' });
    await connector(first, { name: 'net-bouygues', type: 'SIMULATOR' });
    await route(first, { name: 'lookups', priority: 1, match: { type: 'LOOKUP' }, connectors: [{ connector: 'twilio' }] });
    await route(first, { name: 'sfr', priority: 2, match: { type: 'SMS', mccMnc: '20810' }, connectors: [{ connector: 'net-sfr' }] });
    await route(first, { name: 'bouygues', priority: 2, match: { type: 'SMS', mccMnc: '20820' }, connectors: [{ connector: 'net-bouygues' }] });
  });
  after(async () => {
    await second?.stop();
    await first?.stop();
    await twilio?.close();
  });

  test('a number looked up on one node is routed by its current network on the other', async () => {
    const t = await createTenant(first, { balance: 10 });
    // The second node has the routes and the lookup connector too.
    await eventually(
      async () => (await admin(second, 'POST', '/admin/v1/routes/test', { to: PORTED.msisdn, type: 'LOOKUP' })).body.candidates?.[0]?.name === 'twilio',
      15_000,
      'routes on the second node',
    );
    const looked = await request(first, 'GET', `/lookup?msisdn=${PORTED.msisdn}`, { key: t.key });
    assert.equal(looked.status, 200, looked.text);
    assert.deepEqual(looked.body.currentNetwork, { mccMnc: '20820', name: 'Bouygues Telecom' });
    const sent = await request(second, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: PORTED.msisdn }, body: { text: 'Ported' } } });
    assert.equal(sent.status, 201, sent.text);
    const row = () => second.app.store.db.selectFrom('messages').select(['connector']).where('id', '=', sent.body.messageId).executeTakeFirstOrThrow();
    await eventually(async () => (await row()).connector !== null, 15_000, 'placed');
    assert.equal((await row()).connector, 'net-bouygues');
  });
});
