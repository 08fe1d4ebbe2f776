import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { campaign, connector, route, routedTo } from '../support/connectors.ts';
import { createTenant, startTestServer, type TestServer } from '../support/server.ts';
import { type ThreadArrival, ThreadSmsc } from '../support/smsc-thread.ts';
import { eventually } from '../support/wait.ts';

const SECRET_KEY = 'operators-test-secret-key-0123456789abcdef';

/**
 * Submits per second as the SMSC received them, over the seconds fully inside the run. The SMSC runs in a thread of
 * its own: on the test's thread, a pause of the Tern beside it would move submits into the next second as counted.
 */
function perSecond(arrivals: ThreadArrival[]): number[] {
  const seconds = new Map<number, number>();
  for (const a of arrivals) {
    const s = Math.floor(a.at / 1000);
    seconds.set(s, (seconds.get(s) ?? 0) + 1);
  }
  const keys = [...seconds.keys()].sort((x, y) => x - y);
  // Leave out the first and last seconds: the run starts and ends inside them.
  return keys.slice(1, -1).map((k) => seconds.get(k) ?? 0);
}

describe('cluster-wide TPS', () => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const nodes = dialect === 'sqlite' ? 1 : 2;
    test(`an SMPP connector at 50 TPS holds 50 ± 5 at the SMSC over 20 s on ${nodes} node${nodes > 1 ? 's' : ''} [${dialect}]`, { skip: dialect === 'postgres' && !process.env.TERN_TEST_DATABASE_URL ? 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' : false }, async () => {
      const smsc = await ThreadSmsc.start();
      const first = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
      const servers: TestServer[] = [first];
      try {
        if (nodes > 1) servers.push(await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY, TERN_DATABASE_URL: first.app.services.config.databaseUrl }));
        const t = await createTenant(first, { balance: 1_000 });
        // A bind for each node: both send, and share one rate.
        await connector(first, { name: 'paced', type: 'SMPP', host: '127.0.0.1', port: smsc.port, systemId: 'tern', password: 'secret', tps: 50, binds: nodes, window: 20 });
        await route(first, { name: 'paced', priority: 1, match: { prefix: '336710' }, connectors: [{ connector: 'paced' }] });
        for (const s of servers) await routedTo(s, '33671000005', 'paced');
        await eventually(async () => (await smsc.state()).bound === nodes, 20_000, 'a bind per node');
        await campaign(first, t, Array.from({ length: 1_100 }, (_, i) => `336710${String(i).padStart(5, '0')}`));
        await eventually(async () => (await smsc.state()).arrivals.length >= 1_100, 60_000, 'all submitted');
        const { arrivals } = await smsc.state();
        const rates = perSecond(arrivals);
        assert.ok(rates.length >= 19, `${rates.length} full seconds`);
        const mean = rates.reduce((s, r) => s + r, 0) / rates.length;
        assert.ok(mean >= 45 && mean <= 55, `mean ${mean.toFixed(1)}/s over ${rates.length} s: ${rates.join(' ')}`);
        assert.ok(Math.max(...rates) <= 55, `never above 55 in a second: ${rates.join(' ')}`);
        assert.equal(arrivals.length, 1_100, 'each once');
        assert.equal(new Set(arrivals.map((a) => a.connection)).size, nodes, 'every node sent through its bind');
      } finally {
        for (const s of servers.reverse()) await s.stop();
        await smsc.close();
      }
    });
  }
});
