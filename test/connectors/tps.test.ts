import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { campaign, connector, route, routedTo } from '../support/connectors.ts';
import { createTenant, startTestServer, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

const SECRET_KEY = 'operators-test-secret-key-0123456789abcdef';

/** Placements per second of one connector, from its records' creation times, over the seconds fully inside the run. */
async function perSecond(servers: TestServer[], name: string): Promise<number[]> {
  const rows = await servers[0]!.app.store.db.selectFrom('connector_records').select('created_at').where('connector', '=', name).execute();
  const seconds = new Map<number, number>();
  for (const r of rows) {
    const s = Math.floor(Number(r.created_at) / 1000);
    seconds.set(s, (seconds.get(s) ?? 0) + 1);
  }
  const keys = [...seconds.keys()].sort((x, y) => x - y);
  // Leave out the first and last seconds: the run starts and ends inside them.
  return keys.slice(1, -1).map((k) => seconds.get(k) ?? 0);
}

describe('cluster-wide TPS', () => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const nodes = dialect === 'sqlite' ? 1 : 2;
    test(`a connector at 50 TPS holds 50 ± 5 over 20 s on ${nodes} node${nodes > 1 ? 's' : ''} [${dialect}]`, { skip: dialect === 'postgres' && !process.env.TERN_TEST_DATABASE_URL ? 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' : false }, async () => {
      const first = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
      const servers = [first];
      try {
        if (nodes > 1) servers.push(await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY, TERN_DATABASE_URL: first.app.services.config.databaseUrl }));
        const t = await createTenant(first, { balance: 1_000 });
        await connector(first, { name: 'paced', type: 'SIMULATOR', tps: 50 });
        await route(first, { name: 'paced', priority: 1, match: { prefix: '336710' }, connectors: [{ connector: 'paced' }] });
        for (const s of servers) await routedTo(s, '33671000005', 'paced');
        await campaign(first, t, Array.from({ length: 1_100 }, (_, i) => `336710${String(i).padStart(5, '0')}`));
        await eventually(async () => {
          const n = await first.app.store.db.selectFrom('connector_records').select((eb) => eb.fn.countAll<number>().as('n')).where('connector', '=', 'paced').executeTakeFirstOrThrow();
          return Number(n.n) >= 1_100;
        }, 60_000, 'all placed');
        const rates = await perSecond(servers, 'paced');
        assert.ok(rates.length >= 19, `${rates.length} full seconds`);
        const mean = rates.reduce((s, r) => s + r, 0) / rates.length;
        assert.ok(mean >= 45 && mean <= 55, `mean ${mean.toFixed(1)}/s over ${rates.length} s: ${rates.join(' ')}`);
        assert.ok(Math.max(...rates) <= 55, `never above 55 in a second: ${rates.join(' ')}`);
        await sleep(10);
      } finally {
        for (const s of servers.reverse()) await s.stop();
      }
    });
  }
});

