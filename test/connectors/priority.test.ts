import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { campaign, connector, route, routedTo } from '../support/connectors.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

/** An operator connection that takes 100 messages a second, and a route to it for numbers under 33677. */
async function slowOperator(server: TestServer): Promise<void> {
  await connector(server, { name: 'slow', type: 'SIMULATOR', tps: 100, receiptLatencyMs: 0 });
  await route(server, { name: 'slow', priority: 1, match: { prefix: '33677' }, connectors: [{ connector: 'slow' }] });
  await routedTo(server, '33677000001', 'slow');
}

async function statusCounts(server: TestServer, campaignId: string): Promise<Record<string, number>> {
  const rows = await server.app.store.db.selectFrom('messages').select(['status']).where('campaign_id', '=', campaignId).execute();
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

forEachDialect('dispatch priority and fairness', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
    await slowOperator(server);
  });
  after(() => server.stop());

  // Numbers ending in 5: none of the simulator's special endings (…0001–0004).
  const numbers = (series: number, n: number) => Array.from({ length: n }, (_, i) => `33677${series}${String(i * 10 + 5).padStart(5, '0')}`);

  test('an OTP sent behind a queued marketing campaign goes first; the campaign keeps moving', async () => {
    const marketing = await createTenant(server, { balance: 1_000, flow: 'MARKETING' });
    const otp = await createTenant(server, { balance: 10, flow: 'OTP' });
    const campaignId = await campaign(server, marketing, numbers(1, 2_000));
    // The campaign (20 s of traffic at 100/s) is queued and draining.
    await eventually(async () => ((await statusCounts(server, campaignId)).DELIVERED ?? 0) > 0, 15_000, 'the campaign started');
    const sentAt = Date.now();
    const r = await request(server, 'POST', '/sms/v1/messages', {
      key: otp.key,
      body: { recipient: { to: '33677900005' }, body: { text: 'Your code is 4821' } },
    });
    assert.equal(r.status, 201, r.text);
    const delivered = await eventually(
      async () => {
        const m = await request(server, 'GET', `/sms/v1/messages/${r.body.messageId}`, { key: otp.key });
        return m.body.status.value === 'DELIVERED' ? Date.now() : undefined;
      },
      20_000,
      'the OTP delivered',
    );
    const counts = await statusCounts(server, campaignId);
    // Ahead of the campaign, not after it: most of the campaign still waits when the OTP is delivered, however fast
    // the machine (a time bound failed on a loaded one).
    assert.ok((counts.ENROUTE ?? 0) > 500, `most of the campaign still queued behind it after ${delivered - sentAt} ms: ${JSON.stringify(counts)}`);
    assert.ok((counts.DELIVERED ?? 0) > 0);
  });

  test('in one lane, a tenant queueing a flood does not hold back another tenant queueing after it', async () => {
    const big = await createTenant(server, { balance: 1_000, flow: 'MARKETING' });
    const small = await createTenant(server, { balance: 10, flow: 'MARKETING' });
    const flood = await campaign(server, big, numbers(2, 2_000));
    const few = await campaign(server, small, numbers(3, 20));
    const done = await eventually(
      async () => ((await statusCounts(server, few)).DELIVERED === 20 ? Date.now() : undefined),
      120_000,
      'the small campaign delivered',
    );
    const counts = await statusCounts(server, flood);
    assert.ok((counts.ENROUTE ?? 0) > 500, `the flood still mostly queued when the small campaign is done: ${JSON.stringify(counts)} at ${done}`);
  });
});
