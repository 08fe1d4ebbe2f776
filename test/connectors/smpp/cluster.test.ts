import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { admin, connector, route, routedTo } from '../../support/connectors.ts';
import { freePort, startTernProcess } from '../../support/process.ts';
import { createTenant, freshDatabase, request, startTestServer } from '../../support/server.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { eventually } from '../../support/wait.ts';
import { allFinal, live, SECRET_KEY } from './support.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('SMPP binds across a cluster [postgres]', { skip }, () => {
  test('binds are spread over the nodes, a dead node’s are taken over, and a node without one leaves its messages to the others', async () => {
    const smsc = await TestSmsc.start();
    const database = await freshDatabase('postgres');
    const env = { TERN_SECRET_KEY: SECRET_KEY, TERN_DISPATCH_LEASE_SECONDS: '2' };
    const first = await startTernProcess(database.url, await freePort(), env);
    const second = await startTestServer('postgres', { ...env, TERN_DATABASE_URL: database.url });
    try {
      const t = await createTenant(second, { balance: 100, channel: { fromFieldList: ['Tern'] } });
      const id = await connector(second, {
        name: 'shared',
        type: 'SMPP',
        host: '127.0.0.1',
        port: smsc.port,
        systemId: 'tern',
        password: 'secret',
        binds: 2,
        reconnectMinSeconds: 1,
        reconnectMaxSeconds: 2,
      });
      // With a failover: a node without a bind must leave messages to the node with one, not fail them over.
      await route(second, {
        name: 'shared',
        priority: 1,
        match: { prefix: '33' },
        connectors: [{ connector: 'shared' }],
        failover: [{ connector: 'simulator' }],
      });
      await routedTo(second, '33612345678', 'shared');
      await routedTo(first, '33612345678', 'shared');
      // One bind on each node.
      await eventually(
        async () => smsc.bound.length === 2 && (await live(second, id)).binds === 1 && (await live(first, id)).binds === 1,
        20_000,
        'one bind per node',
      );

      // The first node dies without a word: its bind is taken over once its lease runs out.
      await first.kill();
      const died = Date.now();
      await eventually(async () => (await live(second, id)).binds === 2 && smsc.bound.length === 2, 40_000, 'both binds on the surviving node');
      process.stdout.write(`# bind taken over ${Date.now() - died} ms after the node died\n`);
      const ids = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const r = await request(second, 'POST', '/sms/v1/messages', {
            key: t.key,
            body: { recipient: { to: `336123${String(i).padStart(5, '0')}` }, body: { text: `After ${i}` }, from: 'Tern' },
          });
          assert.equal(r.status, 201, r.text);
          return r.body.messageId as string;
        }),
      );
      assert.ok((await allFinal(second, ids)).every((r) => r.status === 'DELIVERED'));
      assert.equal((await admin(second, 'PATCH', `/admin/v1/connectors/${id}`, { binds: 1 })).status, 200);

      // With one bind for two nodes, the node without it is STANDBY and its messages go through the other.
      const third = await startTestServer('postgres', { ...env, TERN_DATABASE_URL: database.url });
      try {
        await eventually(
          async () => {
            const states = [(await live(second, id)).state, (await live(third, id)).state].sort();
            return states[0] === 'STANDBY' && states[1] === 'UP';
          },
          30_000,
          'one node UP, the other STANDBY',
        );
        const sent = await Promise.all(
          [second, third].flatMap((node) =>
            Array.from({ length: 10 }, async (_, i) => {
              const r = await request(node, 'POST', '/sms/v1/messages', {
                key: t.key,
                body: { recipient: { to: `336124${String(i).padStart(5, '0')}` }, body: { text: `Standby ${node.url} ${i}` }, from: 'Tern' },
              });
              assert.equal(r.status, 201, r.text);
              return r.body.messageId as string;
            }),
          ),
        );
        const rows = await allFinal(second, sent, 30_000);
        assert.ok(
          rows.every((r) => r.status === 'DELIVERED' && r.connector === 'shared'),
          JSON.stringify(rows.filter((r) => r.status !== 'DELIVERED' || r.connector !== 'shared')),
        );
        assert.equal(smsc.bound.length, 1, 'one bind in all');
      } finally {
        await third.stop();
      }
    } finally {
      await first.kill();
      await second.stop();
      await smsc.close();
      await database.cleanup();
    }
  });
});
