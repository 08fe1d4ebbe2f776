// Drill: one organisation with webhooks to 2,000 origins (a receiver each), another with one receiver, on a Tern
// process with small socket caps: the sockets Tern holds stay within the caps, read from /proc; every delivery is
// received; the other organisation's webhooks keep coming.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { freePort, startTernProcess, type TernProcess } from '../../support/process.ts';
import { createTenant, forEachDialect, freshDatabase, request } from '../../support/server.ts';
import { connectionsTo, total } from '../../support/sockets.ts';
import { eventually } from '../../support/wait.ts';

const ORIGINS = 2_000;
const SOCKETS = 100;
const SOCKETS_PER_ORGANISATION = 40;

interface Receivers {
  ports: number[];
  /** Message ids whose status webhook was received, with when (the first). */
  received: Map<string, number>;
  close(): Promise<void>;
}

/** `count` webhook receivers on 127.0.0.1, one origin each, answering 200 after `delayMs`. */
async function receivers(count: number, delayMs: number): Promise<Receivers> {
  const received = new Map<string, number>();
  const servers: Server[] = [];
  for (let i = 0; i < count; i += 200) {
    servers.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(200, count - i) }, async () => {
          const server = createServer((req, res) => {
            const chunks: Buffer[] = [];
            req.on('data', (c: Buffer) => chunks.push(c));
            req.on('end', () => {
              const body = JSON.parse(Buffer.concat(chunks).toString()) as { messageId?: string };
              if (body.messageId && !received.has(body.messageId)) received.set(body.messageId, Date.now());
              setTimeout(() => res.writeHead(200).end('ok'), delayMs);
            });
          });
          server.keepAliveTimeout = 30_000;
          await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
          return server;
        }),
      )),
    );
  }
  return {
    ports: servers.map((s) => (s.address() as AddressInfo).port),
    received,
    async close() {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

forEachDialect('drill: an organisation with webhooks to 2,000 origins', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test('Tern’s sockets stay within the caps, every delivery succeeds, and another organisation’s webhooks keep flowing', async () => {
    const many = await receivers(ORIGINS, 100);
    cleanups.push(() => many.close());
    const own = await receivers(1, 0);
    cleanups.push(() => own.close());
    const database = await freshDatabase(dialect);
    cleanups.push(() => database.cleanup());
    const tern: TernProcess = await startTernProcess(database.url, await freePort(), {
      TERN_WEBHOOK_SOCKETS: String(SOCKETS),
      TERN_WEBHOOK_SOCKETS_PER_ORGANISATION: String(SOCKETS_PER_ORGANISATION),
      TERN_WEBHOOK_CONNECTIONS: '4',
      TERN_SIMULATOR_RECEIPT_LATENCY_MS: '5',
    });
    cleanups.push(() => tern.stop());
    const pid = tern.child.pid!;
    const big = await createTenant(tern, { name: 'Many receivers', balance: 1_000 });
    const small = await createTenant(tern, {
      name: 'One receiver',
      balance: 100,
      channel: { defaultCallbackUrlStatus: `http://127.0.0.1:${own.ports[0]}/status` },
    });

    const manyPorts = new Set(many.ports);
    const ownPorts = new Set(own.ports);
    const allPorts = new Set([...manyPorts, ...ownPorts]);
    let mostMany = 0;
    let mostAll = 0;
    const look = () => {
      const counts = connectionsTo(allPorts, pid);
      mostMany = Math.max(mostMany, total(counts, manyPorts));
      mostAll = Math.max(mostAll, total(counts));
    };
    const watch = setInterval(look, 50);
    cleanups.push(async () => clearInterval(watch));

    // The big organisation: one message to each origin, sixteen sends at a time.
    const started = Date.now();
    const bigIds: string[] = [];
    let next = 0;
    const flood = Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < ORIGINS) {
          const i = next++;
          const r = await request(tern, 'POST', '/sms/v1/messages', {
            key: big.key,
            // Numbers ending in 5: delivered by the simulator (those ending in 0001 to 0004 are its failures).
            body: {
              recipient: { to: `3361${String(i).padStart(6, '0')}5` },
              body: { text: `origin ${i}` },
              callbackUrlStatus: `http://127.0.0.1:${many.ports[i]}/status`,
            },
          });
          assert.equal(r.status, 201, r.text);
          bigIds.push(r.body.messageId);
        }
      }),
    );
    // The other organisation sends while the flood's webhooks go out: when each was sent, to time its webhook.
    await eventually(() => many.received.size >= 200, 60_000, 'the flood’s webhooks under way');
    const sentAt = new Map<string, number>();
    for (let i = 0; i < 50; i++) {
      const r = await request(tern, 'POST', '/sms/v1/messages', {
        key: small.key,
        body: { recipient: { to: `3362${String(i).padStart(6, '0')}5` }, body: { text: `own ${i}` } },
      });
      assert.equal(r.status, 201, r.text);
      sentAt.set(r.body.messageId, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    await flood;
    await eventually(() => own.received.size >= sentAt.size, 60_000, 'the other organisation’s webhooks');
    await eventually(() => many.received.size >= ORIGINS, 180_000, `${ORIGINS} webhooks received (${many.received.size} so far)`);
    look();
    clearInterval(watch);

    const waits = [...sentAt].map(([id, at]) => own.received.get(id)! - at).sort((a, b) => a - b);
    const metrics = await (await fetch(`${tern.url}/metrics`)).text();
    const gauge = /^tern_webhook_sockets (\d+)/m.exec(metrics)?.[1];
    process.stdout.write(
      `# ${ORIGINS} origins [${dialect}]: all received ${((Date.now() - started) / 1000).toFixed(1)} s after the first send; ` +
        `Tern's sockets to them ${mostMany} at most (cap ${SOCKETS_PER_ORGANISATION}), to every receiver ${mostAll} (cap ${SOCKETS}); tern_webhook_sockets ${gauge}\n` +
        `# the other organisation's webhooks meanwhile: ${waits.length}, from send to receipt p50 ${percentile(waits, 50)} ms, p99 ${percentile(waits, 99)} ms, max ${waits.at(-1)} ms\n`,
    );
    assert.ok(mostMany <= SOCKETS_PER_ORGANISATION, `${mostMany} sockets to the big organisation's receivers at once`);
    assert.ok(mostAll <= SOCKETS, `${mostAll} sockets to receivers at once`);
    assert.ok(mostMany >= SOCKETS_PER_ORGANISATION / 2, `its share used (${mostMany})`);
    assert.deepEqual(
      bigIds.filter((id) => !many.received.has(id)),
      [],
      'every delivery of the big organisation received',
    );
    assert.deepEqual(
      [...sentAt.keys()].filter((id) => !own.received.has(id)),
      [],
      'every delivery of the other received',
    );
    assert.ok(waits.at(-1)! < 30_000, `each of the other's webhooks within 30 s (the slowest ${waits.at(-1)} ms)`);
    const deliveries = await request(tern, 'GET', '/commons/v1/webhooks/deliveries?searchBy[status]=FAILED', { key: big.key });
    assert.equal(deliveries.status, 200);
    assert.equal(deliveries.body.items.length, 0, 'none failed');
  });
});
