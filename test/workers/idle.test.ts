// An idle node costs (almost) nothing: its workers sleep until work is written or falls due, so only its heartbeat
// (one statement a round of 5 s) and a slow safety poll (every 30 s) reach the database. Counted in statements, which a
// slow machine does not change much, rather than in time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

/** Wide of what an idle node runs in 6 s (a heartbeat or two, a safety look at worst); polls a second would pass it. */
const AT_MOST = 9;

forEachDialect('an idle node', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  /** Statements the node runs while the test waits `ms`, after the passes of whatever came before have ended. */
  async function statementsWhileIdle(ms: number): Promise<number> {
    await sleep(2_000);
    const from = server.app.store.statements.count;
    await sleep(ms);
    return server.app.store.statements.count - from;
  }

  test('a fresh node runs a handful of statements in 6 s', async () => {
    const n = await statementsWhileIdle(6_000);
    process.stdout.write(`# ${dialect}: ${n} statements in 6 s, fresh\n`);
    assert.ok(n <= AT_MOST, `${n} statements in 6 s`);
  });

  test('after a message went through, the node is as idle as before', async () => {
    const t = await createTenant(server, { balance: 10 });
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'once' } } });
    assert.equal(sent.status, 201, sent.text);
    await eventually(async () => {
      const m = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: t.key });
      return m.body.status?.value === 'DELIVERED' ? true : undefined;
    }, 15_000, 'the message delivered');
    const n = await statementsWhileIdle(6_000);
    process.stdout.write(`# ${dialect}: ${n} statements in 6 s, after a message\n`);
    assert.ok(n <= AT_MOST, `${n} statements in 6 s`);
  });
});
