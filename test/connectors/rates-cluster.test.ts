import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { admin, connector, route } from '../support/connectors.ts';
import { startTestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('rate tables across a cluster [postgres]', { skip }, () => {
  test('rates loaded on one node reach the other node’s least-cost routing', async () => {
    const first = await startTestServer('postgres');
    const second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    try {
      const a = await connector(first, { name: 'cluster-a', type: 'SIMULATOR' });
      const b = await connector(first, { name: 'cluster-b', type: 'SIMULATOR' });
      await route(first, {
        name: 'cluster cost',
        priority: 1,
        match: { prefix: '336123' },
        connectors: [{ connectorId: a }, { connectorId: b }],
        strategy: 'cost',
      });
      const firstOn = async (server: typeof second) => {
        const r = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33612345678' });
        return r.body.candidates?.[0] as { name: string; costPerPart?: number } | undefined;
      };
      assert.equal((await admin(first, 'POST', `/admin/v1/connectors/${a}/rates`, { rates: [{ country: 'FR', price: 0.04 }] })).status, 201);
      assert.equal((await admin(first, 'POST', `/admin/v1/connectors/${b}/rates`, { rates: [{ country: 'FR', price: 0.03 }] })).status, 201);
      const seen = await eventually(
        async () => {
          const c = await firstOn(second);
          return c?.name === 'cluster-b' && c.costPerPart === 0.03 ? c : undefined;
        },
        10_000,
        'the other node routing on the rates loaded',
      );
      assert.equal(seen.costPerPart, 0.03);
      // A newer price list for b, in force from now: the other node turns to a.
      const csv = await admin(first, 'POST', `/admin/v1/connectors/${b}/rates/import`, {
        csv: `country,price,valid_from\nFR,0.05,${new Date().toISOString()}\n`,
      });
      assert.equal(csv.status, 201, csv.text);
      await eventually(async () => (await firstOn(second))?.name === 'cluster-a', 10_000, 'the other node routing on the newer rate');
      const why = await admin(second, 'POST', '/admin/v1/routes/test', { to: '33612345678' });
      assert.deepEqual(
        why.body.candidates.map((c: { name: string; costPerPart: number }) => [c.name, c.costPerPart]),
        [['cluster-a', 0.04]],
      );
      // At 0.05 a part, b would now lose money on a French SMS charged 0.045: left out.
      assert.deepEqual(why.body.atLoss, [{ name: 'cluster-b', costPerPart: 0.05 }]);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
