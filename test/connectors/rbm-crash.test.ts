import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/db.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { FakeRbm } from '../support/rbm.ts';
import { createTenant, forEachDialect, freshDatabase, request } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const AGENT = 'crash_test_agent';
const CLIENT_TOKEN = 'rbm-crash-client-token';
const MESSAGES = 12;

forEachDialect('kill -9 between RBM taking messages and Tern recording it', (dialect) => {
  let fake: FakeRbm;
  const nodes: TernProcess[] = [];
  before(async () => {
    // RBM takes each message at once and answers 15 s later: the kill lands with every answer still on its way.
    fake = await new FakeRbm({ agentId: AGENT, clientToken: CLIENT_TOKEN, answerDelayMs: 15_000 }).start();
  });
  after(async () => {
    for (const n of nodes) await n.kill();
    await fake.close();
  });

  test('after the restart each message is submitted again under the same messageId, answered ALREADY_EXISTS, and RBM has it once', async () => {
    const database = await freshDatabase(dialect);
    const port = await freePort();
    const env = { TERN_SECRET_KEY: 'rbm-crash-secret-key-0123456789abcdef', TERN_DISPATCH_LEASE_SECONDS: '2' };
    const reader = await openStore(database.url, 'test-reader');
    try {
      const first = await startTernProcess(database.url, port, env);
      nodes.push(first);
      const c = await request(first, 'POST', '/admin/v1/connectors', {
        key: first.adminKey,
        body: { name: 'rbm', type: 'RBM', agentId: AGENT, baseUrl: fake.url, serviceAccountKey: fake.serviceAccountKey(), webhookClientToken: CLIENT_TOKEN },
      });
      assert.equal(c.status, 201, c.text);
      const r = await request(first, 'POST', '/admin/v1/routes', {
        key: first.adminKey,
        body: { name: 'rcs', priority: 1, match: { type: 'RCS' }, connectors: [{ connector: 'rbm' }] },
      });
      assert.equal(r.status, 201, r.text);
      await eventually(
        async () => (await request(first, 'GET', `/admin/v1/connectors/${c.body.connectorId}`, { key: first.adminKey })).body.live?.state === 'UP',
        15_000,
        'the connector UP',
      );
      const t = await createTenant(first, { type: 'RCS', balance: 10, channel: { defaultFromField: AGENT } });

      const sent = await Promise.all(
        Array.from({ length: MESSAGES }, (_, i) =>
          request(first, 'POST', '/rcs/v1/messages', {
            key: t.key,
            body: { recipient: { to: `3361234${String(i).padStart(4, '0')}` }, body: { type: 'TEXT', text: `crash ${i}` } },
          }),
        ),
      );
      for (const s of sent) assert.equal(s.status, 201, s.text);
      const ids: string[] = sent.map((s) => s.body.messageId);
      await eventually(() => fake.agentMessages.length === MESSAGES, 30_000, 'every message taken by RBM');
      await first.kill();
      // Repeats are counted from here: a claim that lapses on a busy machine is submitted again, and refused again.
      const before = fake.log.length;

      // On a busy machine an answer may come back before the last message is taken: those are recorded, not repeated.
      const placed = await reader.db.selectFrom('messages').select(['id']).where('id', 'in', ids).where('connector', 'is not', null).execute();
      const unrecorded = MESSAGES - placed.length;
      assert.ok(unrecorded > 0, 'the kill came with outcomes not recorded');
      process.stdout.write(`# ${dialect}: ${unrecorded} of ${MESSAGES} messages taken by RBM with their outcome unrecorded at the kill\n`);

      const second = await startTernProcess(database.url, port, env);
      nodes.push(second);
      assert.ok((await fake.verifyWebhook(`${second.url}/connectors/rbm/events`)).verified);
      const refusedAsRepeats = () => fake.log.slice(before).filter((l) => l.method === 'POST' && l.path.endsWith('/agentMessages') && l.status === 409).length;
      await eventually(() => refusedAsRepeats() >= unrecorded, 180_000, 'every message not recorded submitted again and answered ALREADY_EXISTS').catch(
        async (err) => {
          const rows = await reader.db.selectFrom('messages').select(['status', 'connector', 'attempts']).where('id', 'in', ids).execute();
          const queue = await reader.db.selectFrom('dispatch_queue').selectAll().where('message_id', 'in', ids).execute();
          throw new Error(
            `${(err as Error).message}: RBM log ${JSON.stringify(fake.log.slice(-20))}; messages ${JSON.stringify(rows)}; queue ${JSON.stringify(queue.slice(0, 3))}`,
          );
        },
      );
      await eventually(
        async () =>
          (await reader.db.selectFrom('messages').select(['status']).where('id', 'in', ids).where('status', '=', 'ENROUTE').execute()).length === MESSAGES,
        30_000,
        'every message ENROUTE, taken',
      );
      assert.equal(fake.agentMessages.length, MESSAGES, 'RBM has each message once');
      assert.deepEqual(fake.agentMessages.map((m) => m.messageId).sort(), [...ids].sort(), 'under the message’s own id');

      for (const m of fake.agentMessages) assert.equal(await fake.userEvent('DELIVERED', m), 200);
      await eventually(
        async () =>
          (await reader.db.selectFrom('messages').select(['status']).where('id', 'in', ids).where('status', '=', 'DELIVERED').execute()).length === MESSAGES,
        30_000,
        'every message DELIVERED',
      );
      const state = await request(second, 'GET', `/admin/v1/connectors/${c.body.connectorId}`, { key: second.adminKey });
      assert.ok(refusedAsRepeats() >= unrecorded);
      assert.equal(state.body.live.repeatsRecognised, refusedAsRepeats(), 'each repeat recognised and counted');
      await second.stop();
    } finally {
      await reader.close();
      await database.cleanup();
    }
  });
});
