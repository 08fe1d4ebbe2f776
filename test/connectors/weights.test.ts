import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { campaign, connector, route, routedTo } from '../support/connectors.ts';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

forEachDialect('weighted routes', (dialect) => {
  let a: TestServer;
  let onA: Tenant;
  before(async () => {
    a = await startTestServer(dialect);
    onA = await createTenant(a, { balance: 1_000 });
  });
  after(() => a.stop());

  test('weighted connectors split traffic in proportion: within 5 % over 10,000 messages', async () => {
    await connector(a, { name: 'weight-1', type: 'SIMULATOR' });
    await connector(a, { name: 'weight-3', type: 'SIMULATOR' });
    await route(a, {
      name: 'weighted',
      priority: 1,
      match: { prefix: '336700' },
      connectors: [
        { connector: 'weight-1', weight: 1 },
        { connector: 'weight-3', weight: 3 },
      ],
    });
    await routedTo(a, '33670000005', 'weight-1').catch(() => routedTo(a, '33670000005', 'weight-3'));
    const numbers = Array.from({ length: 10_000 }, (_, i) => `336700${String(i).padStart(5, '0')}`);
    const campaignId = await campaign(a, onA, numbers);
    const counts = await eventually(
      async () => {
        const rows = await a.app.store.db
          .selectFrom('messages')
          .select(['connector', (eb) => eb.fn.countAll<number>().as('n')])
          .where('campaign_id', '=', campaignId)
          .where((eb) => eb.or([eb('connector', 'is not', null), eb('status', '=', 'UNDELIVERABLE')]))
          .groupBy('connector')
          .execute();
        const done = rows.reduce((s, r) => s + Number(r.n), 0);
        return done === 10_000 ? new Map(rows.map((r) => [r.connector, Number(r.n)])) : undefined;
      },
      90_000,
      'all 10,000 placed (or refused by the network)',
    );
    const placed = (counts.get('weight-1') ?? 0) + (counts.get('weight-3') ?? 0);
    assert.ok(placed >= 9_990, `${placed} placed`);
    const share = (counts.get('weight-3') ?? 0) / placed;
    assert.ok(Math.abs(share - 0.75) <= 0.05 * 0.75, `weight 3 took ${(share * 100).toFixed(1)} %`);
  });
});
