import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Expiry } from '../../src/core/messaging/expiry.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, forEachDialect, freshDatabase, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

const FINAL = ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE'];
// Slow enough that kills land between submits, their records and their receipts.
const ENV = { TERN_SIMULATOR_SUBMIT_LATENCY_MS: '40', TERN_SIMULATOR_RECEIPT_LATENCY_MS: '200', TERN_DISPATCH_LEASE_SECONDS: '2' };

/** Mixed traffic: deliverable, rejected by the operator (…0002, refunded), and scheduled a second ahead. */
function mixed(i: number): Record<string, unknown> {
  const to = i % 8 === 0 ? `3367${String(i).padStart(3, '0')}0002` : `3367${String(i).padStart(6, '0')}5`;
  return { recipient: { to }, body: { text: `drill ${i}` }, ...(i % 5 === 0 && { sentDate: new Date(Date.now() + 1_000).toISOString() }) };
}

forEachDialect('crash drill: kill -9 in a loop under mixed traffic', (dialect) => {
  let reader: Store;
  let database: { url: string; cleanup(): Promise<void> };
  const nodes: TernProcess[] = [];
  before(async () => {
    database = await freshDatabase(dialect);
  });
  after(async () => {
    for (const n of nodes) await n.kill();
    await reader?.close();
    await database.cleanup();
  });

  test('every 201 is stored, every message ends final, refunds exactly once where due, balance = ledger, nothing sent twice', async () => {
    const port = await freePort();
    let node = await startTernProcess(database.url, port, ENV);
    nodes.push(node);
    reader = await openStore(database.url, 'drill-reader');
    const t = await createTenant(node, { balance: 1_000 });
    const accepted: string[] = [];
    let n = 0;
    for (let round = 0; round < 4; round++) {
      const sends = Array.from({ length: 60 }, () => {
        const i = n++;
        return request(node, 'POST', '/sms/v1/messages', { key: t.key, body: mixed(i) }).then(
          (r) => {
            if (r.status === 201) accepted.push(r.body.messageId);
          },
          () => undefined,
        );
      });
      // The kill lands while sends, submits and receipts are in flight.
      await sleep(150 + round * 100);
      await node.kill();
      await Promise.all(sends);
      node = await startTernProcess(database.url, port, ENV);
      nodes.push(node);
    }
    const db = reader.db;
    const open = () => db.selectFrom('messages').select(['id', 'status']).where('status', 'not in', FINAL).execute();
    await eventually(async () => ((await open()).length === 0 ? true : undefined), 60_000, 'every message final');
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'status', 'status_detail', 'charged', 'recipient'])
      .where('organisation_id', '=', t.organisationId)
      .execute();
    const stored = new Set(rows.map((r) => r.id));
    assert.deepEqual(
      accepted.filter((id) => !stored.has(id)),
      [],
      'every 201 is in the database',
    );
    for (const r of rows) {
      if (r.recipient.endsWith('0002')) assert.deepEqual([r.status, r.status_detail, Number(r.charged)], ['UNDELIVERABLE', 'REJECTED', 0], r.id);
      else assert.equal(r.status, 'DELIVERED', r.id);
    }
    const ledger = await db.selectFrom('ledger').select(['kind', 'amount', 'message_id']).where('organisation_id', '=', t.organisationId).execute();
    const refunds = ledger.filter((l) => l.kind === 'REFUND');
    const rejected = rows
      .filter((r) => r.status === 'UNDELIVERABLE')
      .map((r) => r.id)
      .sort();
    assert.deepEqual(refunds.map((l) => l.message_id).sort(), rejected, 'one refund for each rejected message, none twice');
    const org = await db.selectFrom('organisations').select('balance').where('id', '=', t.organisationId).executeTakeFirstOrThrow();
    assert.equal(
      Number(org.balance),
      ledger.reduce((s, l) => s + Number(l.amount), 0),
      'balance = ledger',
    );
    const carrier = await db.selectFrom('connector_records').select(['key', 'data']).where('connector', '=', 'simulator').execute();
    const twice = carrier.filter((c) => (JSON.parse(c.data) as { accepted?: boolean; duplicates?: number }).accepted && !String(c.key).includes(':')).length;
    assert.equal(twice, rows.filter((r) => r.status === 'DELIVERED').length, 'one placement each at the operator');
    process.stdout.write(`# ${dialect}: ${accepted.length} accepted over 4 kills, ${rejected.length} refunded\n`);
    await node.stop();
  });
});

forEachDialect('messages nothing owns', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  test('a message on its way with no queue row and no placement is put back on the queue and ends final', async () => {
    const t = await createTenant(server, { balance: 10 });
    const r = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33670000002' }, body: { text: 'orphan' }, sentDate: new Date(Date.now() + 3_600_000).toISOString() },
    });
    assert.equal(r.status, 201, r.text);
    const id = r.body.messageId as string;
    // What a crash of an older version could leave: ENROUTE, never placed, off the queue.
    const db = server.app.store.db;
    await db
      .updateTable('messages')
      .set({ status: 'ENROUTE', accepted_at: Date.now() - 600_000 })
      .where('id', '=', id)
      .execute();
    await db.deleteFrom('dispatch_queue').where('message_id', '=', id).execute();
    const expiry = new Expiry(server.app.store, server.app.services.messaging, {});
    assert.equal(await expiry.rescue(Date.now()), 1);
    assert.equal(await expiry.rescue(Date.now()), 0, 'not twice');
    const done = await eventually(
      async () => {
        const m = await db.selectFrom('messages').select(['status', 'status_detail', 'charged']).where('id', '=', id).executeTakeFirstOrThrow();
        return FINAL.includes(m.status) ? m : undefined;
      },
      15_000,
      'final',
    );
    assert.deepEqual([done.status, done.status_detail, Number(done.charged)], ['UNDELIVERABLE', 'REJECTED', 0]);
  });

  test('a scheduled message with no queue row is put back on the queue for its time, not sent before it', async () => {
    const t = await createTenant(server, { balance: 10 });
    const r = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33670000015' }, body: { text: 'later' }, sentDate: new Date(Date.now() + 3_600_000).toISOString() },
    });
    assert.equal(r.status, 201, r.text);
    const id = r.body.messageId as string;
    const db = server.app.store.db;
    await db
      .updateTable('messages')
      .set({ accepted_at: Date.now() - 600_000 })
      .where('id', '=', id)
      .execute();
    await db.deleteFrom('dispatch_queue').where('message_id', '=', id).execute();
    const expiry = new Expiry(server.app.store, server.app.services.messaging, {});
    assert.equal(await expiry.rescue(Date.now()), 1);
    const queued = await db.selectFrom('dispatch_queue').select('due_at').where('message_id', '=', id).executeTakeFirstOrThrow();
    const m = await db.selectFrom('messages').select(['status', 'send_at']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(queued.due_at), Number(m.send_at), 'queued for its time');
    assert.ok(Number(m.send_at) > Date.now() + 3_000_000);
    assert.equal(m.status, 'SCHEDULED');
  });
});
