import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { DISPATCH_QUEUE, LeasedQueue, WEBHOOK_QUEUE } from '../../src/store/queue.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

async function enqueue(store: Store, rows: Array<{ id: string; due: number }>): Promise<void> {
  await store.db
    .insertInto('dispatch_queue')
    .values(rows.map((r) => ({ message_id: r.id, due_at: r.due, attempts: 0, claimed_by: null, lease_until: null, lane: 0, rank: r.due, waiting: 0 })))
    .execute();
}

forEachDialect('leased queue', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  before(async () => ({ a, b, cleanup } = await twoNodes(dialect)));
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('claims due rows once, oldest first, records the claimant, and gives them up when the lease runs out', async () => {
    const now = 1_000_000;
    await enqueue(a, [
      { id: 'm3', due: now - 10 },
      { id: 'm1', due: now - 30 },
      { id: 'm2', due: now - 20 },
      { id: 'later', due: now + 5_000 },
    ]);
    const qa = new LeasedQueue<{ message_id: string; claimed_by: string }>(a, DISPATCH_QUEUE);
    const qb = new LeasedQueue<{ message_id: string }>(b, DISPATCH_QUEUE);
    const first = await qa.claim({ now, limit: 2, leaseMs: 1_000, claimant: 'node-a' });
    assert.deepEqual(first.map((r) => r.message_id).sort(), ['m1', 'm2']);
    assert.ok(first.every((r) => r.claimed_by === 'node-a'));
    assert.deepEqual(
      (await qb.claim({ now, limit: 10, leaseMs: 1_000, claimant: 'node-b' })).map((r) => r.message_id),
      ['m3'],
    );
    assert.deepEqual(await qb.claim({ now, limit: 10, leaseMs: 1_000 }), [], 'leased rows are not claimed twice');
    assert.equal(await qa.nextDue(now), now + 5_000, 'the next row falls due later');
    const taken = await qb.claim({ now: now + 1_001, limit: 10, leaseMs: 1_000, claimant: 'node-b' });
    assert.deepEqual(taken.map((r) => r.message_id).sort(), ['m1', 'm2', 'm3'], 'a lease that ran out is taken over');
    assert.equal(await qa.nextDue(now + 1_001), now + 5_000);
    await a.db.deleteFrom('dispatch_queue').execute();
    assert.equal(await qa.nextDue(now), null);
  });

  test('a claim says when the earliest row it left falls due, in the same look', async () => {
    const now = 1_500_000;
    await enqueue(a, [
      { id: 'd1', due: now - 20 },
      { id: 'd2', due: now - 10 },
      { id: 'd3', due: now + 3_000 },
      { id: 'd4', due: now + 9_000 },
    ]);
    const qa = new LeasedQueue<{ message_id: string; claimed_by: string | null; tern_next_due?: unknown }>(a, DISPATCH_QUEUE);
    const full = await qa.claimWithNextDue({ now, limit: 1, leaseMs: 60_000, claimant: 'node-a' });
    assert.deepEqual(
      full.rows.map((r) => r.message_id),
      ['d1'],
    );
    assert.equal(full.nextDue, now, 'a full batch: more may be due now');
    const rest = await qa.claimWithNextDue({ now, limit: 10, leaseMs: 60_000, claimant: 'node-a' });
    assert.deepEqual(
      rest.rows.map((r) => r.message_id),
      ['d2'],
      'the rows just claimed are not claimed again',
    );
    assert.equal(rest.rows[0]!.claimed_by, 'node-a');
    assert.ok(!('tern_next_due' in rest.rows[0]!), 'rows carry only their own columns');
    assert.equal(rest.nextDue, now + 3_000, 'the rows it claimed are not the next ones due');
    const none = await qa.claimWithNextDue({ now, limit: 10, leaseMs: 60_000 });
    assert.deepEqual(none, { rows: [], nextDue: now + 3_000 });
    const narrowed = await qa.claimWithNextDue({ now: now + 4_000, limit: 10, leaseMs: 60_000, where: sql`message_id <> 'd3'` });
    assert.deepEqual(narrowed, { rows: [], nextDue: now + 9_000 }, 'the claim’s narrowing applies to the next due too');
    await a.db.deleteFrom('dispatch_queue').execute();
    assert.deepEqual(await qa.claimWithNextDue({ now, limit: 10, leaseMs: 60_000 }), { rows: [], nextDue: null });
  });

  test('concurrent claims of two nodes never share a row', async () => {
    const now = 2_000_000;
    await enqueue(
      a,
      Array.from({ length: 400 }, (_, i) => ({ id: `c${String(i).padStart(3, '0')}`, due: now - i })),
    );
    const qa = new LeasedQueue<{ message_id: string }>(a, DISPATCH_QUEUE);
    const qb = new LeasedQueue<{ message_id: string }>(b, DISPATCH_QUEUE);
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? qa : qb).claim({ now, limit: 60, leaseMs: 60_000, claimant: `n${i}` })));
    const ids = claims.flat().map((r) => r.message_id);
    assert.equal(new Set(ids).size, ids.length, 'no row claimed twice');
    assert.ok(ids.length >= 240 && ids.length <= 400, `claimed ${ids.length}`);
    await a.db.deleteFrom('dispatch_queue').execute();
  });

  test('a queue may add its own readiness (webhook deliveries: PENDING only)', async () => {
    const now = 3_000_000;
    const row = (id: string, state: string) => ({
      id,
      event_id: id,
      message_id: id,
      organisation_id: 'o',
      channel_id: 'c',
      kind: 'STATUS',
      method: 'POST',
      url: 'http://127.0.0.1/',
      payload: '{}',
      state,
      attempts: 0,
      next_attempt_at: now - 1,
      lease_until: null,
      last_http_status: null,
      last_error: null,
      created_at: now,
      updated_at: now,
      delivered_at: null,
    });
    await a.db
      .insertInto('webhook_deliveries')
      .values([row('w1', 'PENDING'), row('w2', 'DELIVERED'), row('w3', 'FAILED')])
      .execute();
    const q = new LeasedQueue<{ id: string }>(a, WEBHOOK_QUEUE);
    assert.deepEqual(
      (await q.claim({ now, limit: 10, leaseMs: 1_000 })).map((r) => r.id),
      ['w1'],
    );
  });

  test('workers are woken after the commit of a transaction that wrote work, never for one rolled back', async () => {
    const woken: string[] = [];
    const off = a.signals.on('dispatch', () => woken.push('dispatch'));
    await inTransaction(a, async (trx) => {
      await a.signals.raise(trx, 'dispatch');
      await a.signals.raise(trx, 'dispatch');
      assert.deepEqual(woken, [], 'not before the commit');
    });
    assert.deepEqual(woken, ['dispatch'], 'once per transaction, after it committed');
    await assert.rejects(
      inTransaction(a, async (trx) => {
        await a.signals.raise(trx, 'dispatch');
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(woken, ['dispatch']);
    await assert.rejects(
      a.db.transaction().execute((trx) => a.signals.raise(trx, 'dispatch')),
      /not opened by inTransaction/,
      'a raise in a transaction whose commit is not followed is refused loudly',
    );
    off();
  });

  if (dialect === 'postgres') {
    test('PostgreSQL: another node hears the wake-up when the transaction commits; a node ignores its own', async () => {
      const heardByB: string[] = [];
      const heardByA: string[] = [];
      const offB = b.signals.on('dispatch', () => heardByB.push('dispatch'));
      const offA = a.signals.on('dispatch', () => heardByA.push('dispatch'));
      await inTransaction(a, (trx) => a.signals.raise(trx, 'dispatch'));
      const deadline = Date.now() + 5_000;
      while (heardByB.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(heardByB, ['dispatch']);
      assert.deepEqual(heardByA, ['dispatch'], 'node A was woken once, in process, not again by its own notification');
      offA();
      offB();
    });

    test('PostgreSQL: work a node serves itself (webhooks, connector records) wakes only that node, unless every node is asked', async () => {
      const heardByB: string[] = [];
      const heardByA: string[] = [];
      const offs = (['webhooks', 'connector-records', 'dispatch'] as const).flatMap((s) => [
        b.signals.on(s, () => heardByB.push(s)),
        a.signals.on(s, () => heardByA.push(s)),
      ]);
      await inTransaction(a, async (trx) => {
        await a.signals.raise(trx, 'webhooks');
        await a.signals.raise(trx, 'connector-records');
      });
      // A later notification, to know that anything sent before it has arrived.
      await inTransaction(a, (trx) => a.signals.raise(trx, 'dispatch'));
      const deadline = Date.now() + 5_000;
      while (!heardByB.includes('dispatch') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(heardByB, ['dispatch'], 'the other node was not told of the work node A serves');
      assert.deepEqual(heardByA, ['webhooks', 'connector-records', 'dispatch']);
      heardByB.length = 0;
      await a.signals.raise(a.db, 'webhooks', true);
      const until = Date.now() + 5_000;
      while (heardByB.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(heardByB, ['webhooks'], 'a node leaving hands its queues over to every node');
      for (const off of offs) off();
    });
  }
});
