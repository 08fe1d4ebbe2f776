import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { CompiledQuery, type KyselyPlugin, sql } from 'kysely';
import { Dispatch } from '../../../src/core/messaging/dispatch.ts';
import type { MessagingService } from '../../../src/core/messaging/service.ts';
import type { Router } from '../../../src/core/ports.ts';
import { LOW_LANE } from '../../../src/domain/fair-queue.ts';
import type { Db, Store } from '../../../src/store/db.ts';
import { rescheduleMessages } from '../../../src/store/campaigns.ts';
import { enqueueDispatch, recordDispatch } from '../../../src/store/dispatch.ts';
import { forEachDialect } from '../../support/server.ts';
import { twoNodesForSuite } from '../../support/stores.ts';

/** The dispatch's claims alone: they touch the queue, nothing of the messages or the routes. */
const dispatchOn = (store: Store) => new Dispatch(store, {} as MessagingService, {} as Router, { warn() {} }, { nodeId: 'node-a', batchSize: 10 });

const ids = (rows: Array<{ message_id: string }>) => rows.map((r) => r.message_id);

forEachDialect('dispatch: messages not due yet wait apart from the ready ones', (dialect) => {
  const nodes = twoNodesForSuite(dialect);
  const now = 1_800_000_000_000;
  const later = now + 60_000;

  beforeEach(async () => {
    await nodes.a.db.deleteFrom('dispatch_queue').execute();
  });

  const queue = (rows: Array<{ id: string; due: number; rank: number }>, at = now) =>
    enqueueDispatch(
      nodes.a.db,
      rows.map((r) => ({ messageId: r.id, dueAt: r.due, lane: LOW_LANE, rank: r.rank })),
      at,
    );

  const waiting = async (id: string) =>
    (await nodes.a.db.selectFrom('dispatch_queue').select('waiting').where('message_id', '=', id).executeTakeFirstOrThrow()).waiting;

  it('claims a message scheduled for later once it is due, at the front of its lane as it was ranked', async () => {
    // Scheduled messages rank where the lane stood when they were queued: ahead of what was queued after them.
    await queue([
      { id: 'scheduled', due: later, rank: now },
      { id: 'first', due: now, rank: now + 5 },
      { id: 'second', due: now, rank: now + 10 },
    ]);
    assert.equal(await waiting('scheduled'), 1);
    assert.equal(await waiting('first'), 0);
    const d = dispatchOn(nodes.a);
    assert.deepEqual(ids(await d.claim(now)), ['first', 'second']);
    assert.equal(await d.nextDue(now), later, 'the dispatcher is told when the waiting one falls due');
    await queue([{ id: 'third', due: later, rank: now + 20 }], later);
    assert.deepEqual(ids(await d.claim(later)), ['scheduled', 'third']);
    assert.equal(await waiting('scheduled'), 0);
  });

  it('puts a message retried later back to wait, and claims it at its new time with its rank', async () => {
    await queue([
      { id: 'retried', due: now, rank: now },
      { id: 'other', due: now, rank: now + 5 },
    ]);
    const d = dispatchOn(nodes.a);
    const [claim] = await d.claim(now);
    assert.equal(claim?.message_id, 'retried');
    await recordDispatch(
      nodes.a,
      { claimant: claim.claimed_by!, leaseUntil: claim.lease_until! },
      {
        submitted: [],
        retries: [{ id: 'retried', dueAt: now + 1_000, attempts: 1, waitingOn: null }],
        done: [],
      },
    );
    assert.equal(await waiting('retried'), 1);
    // `other` was claimed with it; its lease runs out, and at the retry's time both are claimed, in rank order.
    assert.deepEqual(ids(await d.claim(now + 500)), []);
    assert.deepEqual(ids(await d.claim(now + 61_000)), ['retried', 'other']);
  });

  it('makes a message moved to a later time wait again, though it was ready at its old one', async () => {
    await queue([{ id: 'moved', due: now, rank: now }]);
    assert.equal(await waiting('moved'), 0);
    assert.equal(await rescheduleMessages(nodes.a.db, ['moved'], later, now), 1);
    assert.equal(await waiting('moved'), 1);
    const d = dispatchOn(nodes.a);
    assert.deepEqual(ids(await d.claim(now)), []);
    assert.deepEqual(ids(await d.claim(later)), ['moved']);
  });

  it('claims rows queued before waiting was recorded (the column’s default) once they are due', async () => {
    await sql`insert into dispatch_queue (message_id, due_at, attempts, lane, rank) values ('old-due', ${now - 1}, 0, 1, ${now}), ('old-later', ${later}, 0, 1, ${now})`.execute(
      nodes.a.db,
    );
    const d = dispatchOn(nodes.a);
    assert.deepEqual(ids(await d.claim(now)), ['old-due']);
    assert.deepEqual(ids(await d.claim(later)), ['old-later']);
  });

  const WAITING = 3_000;
  const queueWaiting = async () => {
    // A campaign scheduled for tomorrow, at the front of the lane, and one message due now behind it.
    for (let i = 0; i < WAITING; i += 500) {
      await queue(Array.from({ length: 500 }, (_, j) => ({ id: `tomorrow-${i + j}`, due: now + 86_400_000, rank: now })));
    }
    await queue([{ id: 'due', due: now, rank: now + 1 }]);
  };

  if (dialect === 'sqlite') {
    it('picks what it claims from the ready rows’ index, never reading the waiting ones (SQLite’s plan)', async () => {
      await queueWaiting();
      const picks: string[] = [];
      const store = nodes.a;
      // Each statement the claim runs, kept with its parameters, then asked for its plan.
      const capture: KyselyPlugin = {
        transformQuery: (args) => {
          const q = store.db.getExecutor().compileQuery(args.node, args.queryId);
          if (/^\s*update "dispatch_queue" set "lease_until"/i.test(q.sql)) picks.push(JSON.stringify([q.sql, q.parameters]));
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      const d = dispatchOn({ ...store, db: store.db.withPlugin(capture) } as Store);
      assert.deepEqual(ids(await d.claim(now)), ['due']);
      assert.ok(picks.length > 0, 'the claims were seen');
      for (const p of picks) {
        const [text, parameters] = JSON.parse(p) as [string, unknown[]];
        const plan = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, parameters));
        const details = plan.rows.map((r) => r.detail).join('\n');
        assert.match(details, /dispatch_queue USING (COVERING )?INDEX dispatch_queue_ready \(lane=\?/, details);
      }
    });
  } else {
    it('reads none of the waiting rows to claim the ready one (rows read, counted by PostgreSQL)', async () => {
      await queueWaiting();
      // As autovacuum would have: without statistics, PostgreSQL's plans for a table this small read all of it.
      await sql`analyze dispatch_queue`.execute(nodes.a.db);
      const read = async (tx: Db) => {
        const r = await sql<{ n: string }>`select coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as n
          from pg_stat_xact_user_tables where relid = 'dispatch_queue'::regclass`.execute(tx);
        return Number(r.rows[0]?.n ?? 0);
      };
      await nodes.a.db.transaction().execute(async (tx) => {
        const d = dispatchOn({ ...nodes.a, db: tx } as Store);
        const before = await read(tx);
        assert.deepEqual(ids(await d.claim(now)), ['due']);
        const rowsRead = (await read(tx)) - before;
        assert.ok(rowsRead < 50, `${rowsRead} rows read with ${WAITING} waiting`);
      });
    });
  }
});
