import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { DISPATCH_QUEUE, LeasedQueue, WEBHOOK_QUEUE } from '../../src/store/queue.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

async function enqueue(store: Store, rows: Array<{ id: string; due: number }>): Promise<void> {
  await store.db
    .insertInto('dispatch_queue')
    .values(rows.map((r) => ({ message_id: r.id, due_at: r.due, attempts: 0, claimed_by: null, lease_until: null, lane: 0, rank: r.due })))
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
    assert.deepEqual((await qb.claim({ now, limit: 10, leaseMs: 1_000, claimant: 'node-b' })).map((r) => r.message_id), ['m3']);
    assert.deepEqual(await qb.claim({ now, limit: 10, leaseMs: 1_000 }), [], 'leased rows are not claimed twice');
    assert.equal(await qa.nextDue(now), now + 5_000, 'the next row falls due later');
    const taken = await qb.claim({ now: now + 1_001, limit: 10, leaseMs: 1_000, claimant: 'node-b' });
    assert.deepEqual(taken.map((r) => r.message_id).sort(), ['m1', 'm2', 'm3'], 'a lease that ran out is taken over');
    assert.equal(await qa.nextDue(now + 1_001), now + 5_000);
    await a.db.deleteFrom('dispatch_queue').execute();
    assert.equal(await qa.nextDue(now), null);
  });

  test('concurrent claims of two nodes never share a row', async () => {
    const now = 2_000_000;
    await enqueue(a, Array.from({ length: 400 }, (_, i) => ({ id: `c${String(i).padStart(3, '0')}`, due: now - i })));
    const qa = new LeasedQueue<{ message_id: string }>(a, DISPATCH_QUEUE);
    const qb = new LeasedQueue<{ message_id: string }>(b, DISPATCH_QUEUE);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? qa : qb).claim({ now, limit: 60, leaseMs: 60_000, claimant: `n${i}` })),
    );
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
    await a.db.insertInto('webhook_deliveries').values([row('w1', 'PENDING'), row('w2', 'DELIVERED'), row('w3', 'FAILED')]).execute();
    const q = new LeasedQueue<{ id: string }>(a, WEBHOOK_QUEUE);
    assert.deepEqual((await q.claim({ now, limit: 10, leaseMs: 1_000 })).map((r) => r.id), ['w1']);
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
      const offB = b.signals.on('webhooks', () => heardByB.push('webhooks'));
      const offA = a.signals.on('webhooks', () => heardByA.push('webhooks'));
      await inTransaction(a, (trx) => a.signals.raise(trx, 'webhooks'));
      const deadline = Date.now() + 5_000;
      while (heardByB.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(heardByB, ['webhooks']);
      assert.deepEqual(heardByA, ['webhooks'], 'node A was woken once, in process, not again by its own notification');
      offA();
      offB();
    });
  }
});
