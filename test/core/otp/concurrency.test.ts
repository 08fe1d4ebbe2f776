// One pending code per number, whatever the concurrency: requests for one number at the same moment — on one node, or
// spread over two nodes sharing PostgreSQL — send one code; the others are refused inside the cooldown, and nothing
// of theirs is stored or charged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

forEachDialect('one-time passwords under concurrency', (dialect) => {
  let nodes: TestServer[];
  before(async () => {
    const first = await startTestServer(dialect);
    nodes = [first];
    if (dialect === 'postgres') nodes.push(await startTestServer(dialect, { TERN_DATABASE_URL: first.app.config.databaseUrl }));
  });
  after(async () => {
    for (const n of nodes.reverse()) await n.stop();
  });

  test('requests for one number at once send one code; the others are refused and leave nothing behind', async () => {
    const server = nodes[0]!;
    const t = await createTenant(server, { balance: 10 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(nodes[i % nodes.length]!, 'POST', '/sms/v1/otp', { key: t.key, body: { recipient: { to: '33612349901' } } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, ...Array(11).fill(429)], answers.map((a) => a.text).join('\n'));
    for (const a of answers.filter((x) => x.status === 429)) assert.match(a.body.detail, /^recipient\.to: a code was sent to this number/);

    const db = server.app.store.db;
    const otps = await db.selectFrom('otps').selectAll().where('recipient', '=', '33612349901').execute();
    assert.equal(otps.length, 1);
    assert.equal(otps[0]!.sends, 1);
    const messages = await db.selectFrom('messages').select(['id', 'charged']).where('recipient', '=', '33612349901').execute();
    assert.deepEqual(
      messages.map((m) => m.id),
      [otps[0]!.last_message_id],
      'only the message of the code that was sent',
    );
    const sends = await db.selectFrom('otp_sends').selectAll().where('recipient', '=', '33612349901').execute();
    assert.equal(sends.length, 1);
  });
});
