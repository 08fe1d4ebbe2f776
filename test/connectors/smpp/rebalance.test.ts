// Binds moved between nodes when a node comes back: the node giving a bind up stops submitting on it and closes it
// only once its submits are answered, so nothing on it is sent again; and whatever is sent again (an answer that
// never came) is counted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { counter } from '../../cluster/drill-support.ts';
import { createTenant, freshDatabase, request, startTestServer, type TestServer } from '../../support/server.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { eventually, sleep } from '../../support/wait.ts';
import { allFinal, live, SECRET_KEY, smppOperator } from './support.ts';
import { connector, route, routedTo } from '../../support/connectors.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('SMPP binds rebalanced when a node comes back [postgres]', { skip }, () => {
  test('the bind handed over is drained first: every submit answered once, nothing sent twice, no outcome unknown', async () => {
    // Slow answers, and windows never full: each bind has submits waiting for their answers when it is handed over,
    // and an unbind would go out at once, ahead of their answers.
    const smsc = await TestSmsc.start({ answerDelayMs: 1_000, redeliverReceipts: true });
    const database = await freshDatabase('postgres');
    const env = { TERN_SECRET_KEY: SECRET_KEY, TERN_DATABASE_URL: database.url };
    const first = await startTestServer('postgres', env);
    const servers: TestServer[] = [first];
    try {
      const t = await createTenant(first, { balance: 1_000, channel: { fromFieldList: ['Tern'] } });
      const id = await connector(first, {
        name: 'moving',
        type: 'SMPP',
        host: '127.0.0.1',
        port: smsc.port,
        systemId: 'tern',
        password: 'secret',
        binds: 2,
        window: 20,
        reconnectMinSeconds: 1,
        reconnectMaxSeconds: 2,
      });
      await route(first, { name: 'moving', priority: 1, match: { prefix: '33' }, connectors: [{ connector: 'moving' }] });
      await routedTo(first, '33612345678', 'moving');
      await eventually(async () => (await live(first, id)).binds === 2 && smsc.bound.length === 2, 20_000, 'both binds on the first node');

      // A steady stream through the first node, while the second one starts and takes a bind from it.
      const ids: string[] = [];
      let sending = true;
      const stream = (async () => {
        for (let i = 0; sending; i++) {
          const r = await request(first, 'POST', '/sms/v1/messages', {
            key: t.key,
            body: { recipient: { to: `336200${String(i).padStart(5, '0')}` }, body: { text: `Stream ${i}` }, from: 'Tern' },
          });
          assert.equal(r.status, 201, r.text);
          ids.push(r.body.messageId);
          await sleep(40);
        }
      })();
      await sleep(1_000);
      const second = await startTestServer('postgres', env);
      servers.push(second);
      await eventually(async () => (await live(first, id)).binds === 1 && (await live(second, id)).binds === 1, 30_000, 'a bind on each node');
      await sleep(1_000);
      sending = false;
      await stream;

      const rows = await allFinal(first, ids, 60_000);
      assert.ok(
        rows.every((r) => r.status === 'DELIVERED'),
        JSON.stringify(rows.filter((r) => r.status !== 'DELIVERED').slice(0, 3)),
      );
      const twice = [...smsc.accepted()].filter(([, n]) => n > 1);
      process.stdout.write(`# ${ids.length} messages through a bind handover: ${twice.length} sent twice, ${smsc.bound.length} binds at the end\n`);
      assert.deepEqual(twice, [], 'no submit reached the SMSC twice');
      assert.equal((await live(first, id)).unknownOutcomes, 0, 'no submit lost its answer');
      assert.equal(await counter(first, 'tern_fenced_total', ['when="after_send"']), 0);
      assert.equal(smsc.bound.length, 2, 'two binds in all');
    } finally {
      for (const s of servers.reverse()) await s.stop();
      await smsc.close();
      await database.cleanup();
    }
  });
});

describe('SMPP submits sent again are counted as repeats', () => {
  test('a connection dropped with submits in its window: each submit without an answer counts in tern_fenced_total{when="after_send"}', async () => {
    const server = await startTestServer('sqlite', { TERN_SECRET_KEY: SECRET_KEY });
    try {
      const t = await createTenant(server, { balance: 1_000, channel: { fromFieldList: ['Tern'] } });
      const op = await smppOperator(server, 'drops', '33657', { window: 4 }, { dropAfter: 4, answerDelayMs: 50 });
      try {
        const ids = await Promise.all(
          Array.from({ length: 12 }, async (_, i) => {
            const r = await request(server, 'POST', '/sms/v1/messages', {
              key: t.key,
              body: { recipient: { to: op.number(i + 10) }, body: { text: `Dropped ${i}` }, from: 'Tern' },
            });
            assert.equal(r.status, 201, r.text);
            return r.body.messageId as string;
          }),
        );
        const rows = await allFinal(server, ids, 30_000);
        assert.ok(rows.every((r) => r.status === 'DELIVERED'));
        const twice = [...op.smsc.accepted().values()].filter((n) => n > 1).length;
        const unknown = (await live(server, op.connectorId)).unknownOutcomes as number;
        const repeats = await counter(server, 'tern_fenced_total', ['queue="dispatch"', 'when="after_send"']);
        process.stdout.write(`# connection dropped: ${twice} submits reached the SMSC twice, ${unknown} outcomes unknown, ${repeats} counted as repeats\n`);
        assert.ok(twice >= 1, 'the submits taken before the drop arrived again');
        assert.equal(repeats, unknown, 'every submit whose answer never came is counted as a repeat');
        assert.ok(repeats >= twice, `every repeat the SMSC saw is counted (${twice} seen, ${repeats} counted)`);
      } finally {
        await op.smsc.close();
      }
    } finally {
      await server.stop();
    }
  });
});
