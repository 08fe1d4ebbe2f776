// An idle node costs (almost) nothing: its workers sleep until work is written or falls due, so only its heartbeat
// (one statement a round of 5 s) and a slow safety poll (every 30 s) reach the database. Counted in statements, which a
// slow machine does not change much, rather than in time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
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
    await eventually(
      async () => {
        const m = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: t.key });
        return m.body.status?.value === 'DELIVERED' ? true : undefined;
      },
      15_000,
      'the message delivered',
    );
    const n = await statementsWhileIdle(6_000);
    process.stdout.write(`# ${dialect}: ${n} statements in 6 s, after a message\n`);
    assert.ok(n <= AT_MOST, `${n} statements in 6 s`);
  });
});

// Retries of deliveries to an endpoint that keeps failing fall due at scattered milliseconds (backoff with jitter);
// the sender looks for them on a one-second grid, so its claims do not follow the number of retries.
forEachDialect('retries of webhooks that keep failing', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver(() => 500);
    server = await startTestServer(dialect, { TERN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s' });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('cost a few statements a second, not one claim per retry', async () => {
    const t = await createTenant(server, { balance: 100 });
    const messages = 40;
    for (let i = 0; i < messages; i++) {
      const sent = await request(server, 'POST', '/sms/v1/messages', {
        key: t.key,
        body: { recipient: { to: `336123450${String(i).padStart(2, '0')}` }, body: { text: 'retry me' }, callbackUrlStatus: `${receiver.url}/status` },
      });
      assert.equal(sent.status, 201, sent.text);
    }
    // Every message's first delivery has failed once: the retries are under way, about one a second each.
    await eventually(
      () => (new Set(receiver.requests.map((r) => r.json?.messageId)).size >= messages ? true : undefined),
      20_000,
      'a first attempt for every message',
    );
    await sleep(1_500);
    const attemptsBefore = receiver.requests.length;
    const from = server.app.store.statements.count;
    await sleep(4_000);
    const statements = server.app.store.statements.count - from;
    const attempts = receiver.requests.length - attemptsBefore;
    process.stdout.write(`# ${dialect}: ${attempts} attempts, ${statements} statements in 4 s\n`);
    assert.ok(attempts >= messages, `only ${attempts} attempts in 4 s`);
    // Each pass: a claim and the settling of what it sent (an update and the attempts' rows, in a transaction or two).
    assert.ok(statements < attempts, `${statements} statements for ${attempts} attempts`);
  });
});
