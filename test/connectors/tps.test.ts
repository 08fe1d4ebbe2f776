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

/** The most arrivals within `windowMs` of each other, and when that window began. */
function busiestWindow(arrivals: ThreadArrival[], windowMs: number): { count: number; from: number } {
  const times = arrivals.map((a) => a.at).sort((x, y) => x - y);
  let best = { count: 0, from: 0 };
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + windowMs) j++;
    if (j - i > best.count) best = { count: j - i, from: times[i]! };
  }
  return best;
}

/**
 * The most arrivals certainly within `windowMs` of each other: each counted only when all of the time it may have
 * come in (from `notBefore` to when it was read) lies in the window. A submit read late because the machine stopped
 * the SMSC's thread may have come much earlier; one read at once counts as in busiestWindow.
 */
function busiestCertainWindow(arrivals: ThreadArrival[], windowMs: number): { count: number; from: number } {
  let best = { count: 0, from: 0 };
  for (const start of arrivals) {
    const from = start.notBefore;
    const count = arrivals.filter((a) => a.notBefore >= from && a.at < from + windowMs).length;
    if (count > best.count) best = { count, from };
  }
  return best;
}

describe('cluster-wide TPS', () => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const nodes = dialect === 'sqlite' ? 1 : 2;
    test(
      `an SMPP connector at 50 TPS holds at most 50 a second at the SMSC, most of it used, over 20 s on ${nodes} node${nodes > 1 ? 's' : ''} [${dialect}]`,
      { skip: dialect === 'postgres' && !process.env.TERN_TEST_DATABASE_URL ? 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' : false },
      async () => {
        const smsc = await ThreadSmsc.start();
        const first = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
        const servers: TestServer[] = [first];
        try {
          if (nodes > 1) servers.push(await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY, TERN_DATABASE_URL: first.app.config.databaseUrl }));
          const t = await createTenant(first, { balance: 1_000 });
          // A bind for each node: both send, and share one rate.
          await connector(first, {
            name: 'paced',
            type: 'SMPP',
            host: '127.0.0.1',
            port: smsc.port,
            systemId: 'tern',
            password: 'secret',
            tps: 50,
            binds: nodes,
            window: 20,
          });
          await route(first, { name: 'paced', priority: 1, match: { prefix: '336710' }, connectors: [{ connector: 'paced' }] });
          for (const s of servers) await routedTo(s, '33671000005', 'paced');
          await eventually(async () => (await smsc.state()).bound === nodes, 20_000, 'a bind per node');
          await campaign(
            first,
            t,
            Array.from({ length: 1_100 }, (_, i) => `336710${String(i).padStart(5, '0')}`),
          );
          await eventually(async () => (await smsc.state()).arrivals.length >= 1_100, 60_000, 'all submitted');
          const { arrivals } = await smsc.state();
          const rates = perSecond(arrivals);
          assert.ok(rates.length >= 19, `${rates.length} full seconds`);
          const mean = rates.reduce((s, r) => s + r, 0) / rates.length;
          process.stdout.write(`# tps 50 on ${nodes} node(s): ${mean.toFixed(1)} a second on average: ${rates.join(' ')}\n`);
          // The rate holds in every sliding second at the price of a slot of it (a twentieth; two across nodes) when the
          // rate is what limits the connector: 47.6 and 45.5 at most. A loaded machine's pauses take some more.
          assert.ok(mean >= (nodes > 1 ? 38 : 42) && mean <= 50, `mean ${mean.toFixed(1)}/s over ${rates.length} s: ${rates.join(' ')}`);
          // Submits go in batches (10 here); a pause of either thread (the SMSC stamps arrivals in one of this process's)
          // can move a batch into the next second as it arrives: 40 then 60 was seen at load 20. Twice the rate, what a
          // limiter that let seconds overlap would show, is far beyond.
          assert.ok(Math.max(...rates) <= 60, `never above 50 in a second, give or take a batch: ${rates.join(' ')}`);
          assert.equal(arrivals.length, 1_100, 'each once');
          assert.equal(new Set(arrivals.map((a) => a.connection)).size, nodes, 'every node sent through its bind');
        } finally {
          for (const s of servers.reverse()) await s.stop();
          await smsc.close();
        }
      },
    );
  }

  for (const dialect of ['sqlite', 'postgres'] as const) {
    const nodes = dialect === 'sqlite' ? 1 : 2;
    test(
      `tps 20 holds in every sliding second at the SMSC, a backlog starting late in a clock second included [${dialect}]`,
      { skip: dialect === 'postgres' && !process.env.TERN_TEST_DATABASE_URL ? 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' : false },
      async () => {
        const smsc = await ThreadSmsc.start();
        const first = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
        const servers: TestServer[] = [first];
        try {
          if (nodes > 1) servers.push(await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY, TERN_DATABASE_URL: first.app.config.databaseUrl }));
          const t = await createTenant(first, { balance: 1_000 });
          await connector(first, {
            name: 'sliding',
            type: 'SMPP',
            host: '127.0.0.1',
            port: smsc.port,
            systemId: 'tern',
            password: 'secret',
            tps: 20,
            binds: nodes,
            window: 20,
          });
          await route(first, { name: 'sliding', priority: 1, match: { prefix: '336720' }, connectors: [{ connector: 'sliding' }] });
          for (const s of servers) await routedTo(s, '33672000005', 'sliding');
          await eventually(async () => (await smsc.state()).bound === nodes, 20_000, 'a bind per node');
          // The backlog comes 700 ms into a clock second: counted per clock second, a second's worth goes at once, and
          // another at the start of the next second, 300 ms later.
          await new Promise((r) => setTimeout(r, 1_700 - (Date.now() % 1_000)));
          await campaign(
            first,
            t,
            Array.from({ length: 200 }, (_, i) => `336720${String(i).padStart(5, '0')}`),
          );
          await eventually(async () => (await smsc.state()).arrivals.length >= 200, 60_000, 'all submitted');
          const { arrivals, stalledMs } = await smsc.state();
          const busiest = busiestWindow(arrivals, 1_000);
          // The limiter grants a second's units as soon as a slot allows, so its bursts come a second and a slot (1.05 s)
          // apart; the SMSC stamps arrivals in a thread of this same process, and a pause of either thread of more than a
          // slot puts two bursts into one stamped second (31 and 40 were seen, at load 4 and 20). Within 800 ms, two of
          // its bursts never fall — unless stamped 250 ms apart from where they went — while a limiter counting clock
          // seconds, with a backlog arriving 700 ms into one, puts 40 within 300 ms. A loaded machine that does not run
          // the SMSC's thread for a while has it read two bursts at once: those read just after are counted only where
          // all the time they may have come in lies within the window (busiestCertainWindow), as it does when the
          // thread ran throughout.
          const tight = busiestCertainWindow(arrivals, 800);
          const stamped = busiestWindow(arrivals, 800);
          const spanMs = Math.max(...arrivals.map((a) => a.at)) - Math.min(...arrivals.map((a) => a.at));
          const rate = (arrivals.length - 1) / (spanMs / 1000);
          process.stdout.write(
            `# tps 20 on ${nodes} node(s): ${busiest.count} in the busiest sliding second, ${tight.count} certainly within 800 ms (${stamped.count} as read; the SMSC's thread not run for ${stalledMs} ms in all), ${rate.toFixed(1)} a second on average over ${(spanMs / 1000).toFixed(1)} s\n`,
          );
          assert.ok(tight.count <= 25, `${tight.count} submits within 800 ms from ${new Date(tight.from).toISOString()} (${stamped.count} as read)`);
          assert.ok(rate >= 10, `${rate.toFixed(1)} a second`);
          assert.equal(arrivals.length, 200, 'each once');
        } finally {
          for (const s of servers.reverse()) await s.stop();
          await smsc.close();
        }
      },
    );
  }
});
