import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { MessagingService } from '../../../src/core/messaging/service.ts';
import { WebhookOutbox } from '../../../src/core/webhooks/outbox.ts';
import { uuidv7 } from '../../../src/domain/ids.ts';
import type { Db, Store } from '../../../src/store/db.ts';
import { insertDeliveries, type WebhookDeliveryRow } from '../../../src/store/webhooks.ts';
import { WebhookHttpClient } from '../../../src/doors/webhooks/http-client.ts';
import { WebhookSender } from '../../../src/doors/webhooks/sender.ts';
import pino from 'pino';
import { startReceiver } from '../../support/receiver.ts';
import { eventually } from '../../support/wait.ts';
import { forEachDialect } from '../../support/server.ts';
import { twoNodesForSuite } from '../../support/stores.ts';

const BUSY = 'http://busy.test';
const BACKLOG = 400;

let n = 0;
/** A pending delivery to `origin` (null: written before origins were recorded), due at `due`. */
function delivery(origin: string | null, due: number, over: Partial<WebhookDeliveryRow> = {}): WebhookDeliveryRow {
  const i = ++n;
  return {
    id: `msg_${uuidv7(due).replace(/-/g, '')}`,
    event_id: `ev-${i}`,
    message_id: `msg-${i}`,
    organisation_id: 'org-1',
    channel_id: 'ch-1',
    kind: 'STATUS',
    method: 'POST',
    url: `${origin ?? 'http://legacy.test'}/hook`,
    origin,
    payload: '{}',
    state: 'PENDING',
    attempts: 0,
    next_attempt_at: due,
    lease_until: null,
    last_http_status: null,
    last_error: null,
    created_at: due,
    updated_at: due,
    delivered_at: null,
    ...over,
  };
}

const outboxOn = (store: Store) => new WebhookOutbox(store, {} as MessagingService, () => 'http://tern.test', [1_000]);

forEachDialect('webhook outbox: claims that leave a busy origin out', (dialect) => {
  const nodes = twoNodesForSuite(dialect);
  const now = Date.now();

  it('claims every other origin’s due deliveries (and those without an origin), none of the busy one’s, and says when the next falls due', async () => {
    const store = nodes.a;
    const backlog = Array.from({ length: BACKLOG }, (_, i) => delivery(BUSY, now - 60_000 + i));
    const other = delivery('http://other.test', now - 1_000);
    const sameMessageLater = delivery('http://other.test', now - 500, { message_id: other.message_id });
    const legacy = delivery(null, now - 2_000);
    const third = delivery('http://third.test', now - 30_000);
    const inFlight = delivery('http://third.test', now - 40_000, { lease_until: now + 60_000 });
    // Due long after the suite: a later test on the same tables must not find it due.
    const retry = delivery('http://third.test', now + 600_000);
    const done = delivery('http://done.test', now - 3_000, { state: 'DELIVERED' });
    await store.db.transaction().execute((tx) => insertDeliveries(tx, [...backlog, other, sameMessageLater, legacy, third, inFlight, retry, done]));

    const outbox = outboxOn(store);
    const first = await outbox.claimWithNextDue(now, 100, 60_000, [BUSY]);
    const byDue = (rows: WebhookDeliveryRow[]) => [...rows].sort((x, y) => Number(x.next_attempt_at) - Number(y.next_attempt_at)).map((r) => r.id);
    assert.deepEqual(byDue(first.rows), [third.id, legacy.id, other.id], 'every due one; the later one of a message waits for the earlier');
    assert.equal(first.nextDue, retry.next_attempt_at, 'the next due is the retry, not what waits for the busy origin');
    assert.ok(first.rows.every((r) => Number(r.lease_until) === now + 60_000));

    const again = await outbox.claimWithNextDue(now, 100, 60_000, [BUSY]);
    assert.deepEqual(again.rows, [], 'what was claimed is leased');

    const all = await outbox.claimWithNextDue(now, 1_000, 60_000);
    assert.equal(all.rows.length, BACKLOG, 'with nothing skipped, the busy origin’s backlog is claimed as before');
  });

  it('leaves out the deliveries of organisations whose share is full, with busy origins or without, and claims them once they are not', async () => {
    const store = nodes.a;
    const big = Array.from({ length: 30 }, (_, i) => delivery(`http://big-${i}.test`, now - 50_000 + i, { organisation_id: 'org-big' }));
    const small = [
      delivery('http://small.test', now - 100, { organisation_id: 'org-small' }),
      delivery('http://big-0.test', now - 90, { organisation_id: 'org-small' }),
    ];
    await store.db.transaction().execute((tx) => insertDeliveries(tx, [...big, ...small]));
    const outbox = outboxOn(store);
    const ids = (rows: WebhookDeliveryRow[]) => rows.map((r) => r.id).sort();
    const plain = await outbox.claimWithNextDue(now, 100, 60_000, [], ['org-big']);
    assert.deepEqual(ids(plain.rows), ids(small), 'only the other organisation’s, its delivery to an origin the busy one uses too included');
    await store.db
      .updateTable('webhook_deliveries')
      .set({ lease_until: null })
      .where(
        'id',
        'in',
        small.map((d) => d.id),
      )
      .execute();
    const withOrigins = await outbox.claimWithNextDue(now, 100, 60_000, ['http://nowhere.test'], ['org-big']);
    assert.deepEqual(ids(withOrigins.rows), ids(small), 'likewise when origins are skipped too');
    const later = await outbox.claimWithNextDue(now, 100, 60_000);
    assert.deepEqual(ids(later.rows), ids(big), 'claimed once the organisation is no longer left out');
  });

  it('claims at most a batch, from the origins due first, and asks to be called again while more is due', async () => {
    const store = nodes.b;
    const origins = Array.from({ length: 60 }, (_, i) => `http://o${String(i).padStart(2, '0')}.test`);
    await store.db
      .transaction()
      .execute((tx) =>
        insertDeliveries(tx, [
          ...origins.map((o, i) => delivery(o, now - 10_000 + i)),
          ...Array.from({ length: 20 }, (_, i) => delivery(BUSY, now - 20_000 + i)),
        ]),
      );
    const outbox = outboxOn(store);
    const claimed: string[] = [];
    for (let pass = 0; pass < 10; pass++) {
      const r = await outbox.claimWithNextDue(now, 25, 60_000, [BUSY]);
      claimed.push(...r.rows.map((d) => d.origin!).sort());
      if (r.nextDue !== now) break;
    }
    assert.deepEqual(claimed, origins, 'every origin’s delivery, oldest first, over passes');
  });

  it('with more origins pending than a claim looks at, claims look at the next ones each time, and come back soon for them', async () => {
    const store = nodes.b;
    const t = Date.now();
    // Origins with deliveries pending but none due (retries), then origins with one due: the first claim looks at the
    // first 500 origins alone, none of which has anything due.
    const waiting = Array.from({ length: 520 }, (_, i) => delivery(`http://a${String(i).padStart(4, '0')}.test`, t + 600_000));
    const due = Array.from({ length: 30 }, (_, i) => delivery(`http://b${String(i).padStart(4, '0')}.test`, t - 1_000 + i));
    await store.db.transaction().execute((tx) => insertDeliveries(tx, [...waiting, ...due]));
    const outbox = outboxOn(store);
    const first = await outbox.claimWithNextDue(t, 100, 60_000, [BUSY]);
    assert.deepEqual(first.rows, []);
    assert.ok(first.nextDue !== null && first.nextDue <= t + 250, 'it comes back soon for the origins it did not look at');
    const second = await outbox.claimWithNextDue(t, 100, 60_000, [BUSY]);
    assert.deepEqual(second.rows.map((d) => d.id).sort(), due.map((d) => d.id).sort());
    assert.ok(second.nextDue !== null && second.nextDue <= t + 250, 'and for those it looked at before, from the first again');
    await store.db
      .deleteFrom('webhook_deliveries')
      .where(
        'id',
        'in',
        [...waiting, ...due].map((d) => d.id),
      )
      .execute();
  });

  it('a sender whose queue for a hanging receiver is full goes on sending to the others, claiming around it', async () => {
    const store = nodes.b;
    const hanging = await startReceiver(() => 'hang');
    const fine = await startReceiver(() => 200);
    const messaging = {
      channel: async () => ({ id: 'ch-1', webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', webhookSecretPrevious: null }),
    } as unknown as MessagingService;
    const outbox = new WebhookOutbox(store, messaging, () => 'http://tern.test', [60_000]);
    const client = new WebhookHttpClient({ allowPrivate: true, timeoutMs: 30_000, maxConcurrentPerHost: 2 });
    const sender = new WebhookSender(outbox, client, messaging, pino({ level: 'silent' }), { leaseMs: 60_000, maxHeldPerOrigin: 4, claimBatch: 4 });
    const t = Date.now();
    // The hanging receiver's deliveries are due first: a claim in due order alone would take nothing else.
    const stuck = Array.from({ length: 30 }, (_, i) => delivery(hanging.origin, t - 50_000 + i, { url: `${hanging.origin}/h` }));
    const others = Array.from({ length: 6 }, (_, i) => delivery(fine.origin, t - 1_000 + i, { url: `${fine.origin}/f` }));
    await store.db.transaction().execute((tx) => insertDeliveries(tx, [...stuck, ...others]));
    sender.start();
    try {
      await eventually(() => (fine.delivered().length === others.length ? true : undefined), 10_000, 'the other receiver has every delivery');
      assert.ok(hanging.hanging <= 2, 'the hanging receiver holds its connections only');
      const left = await store.db.selectFrom('webhook_deliveries').select('id').where('origin', '=', hanging.origin).where('lease_until', 'is', null).execute();
      assert.ok(left.length >= stuck.length - 8, `the hanging receiver's deliveries wait in the table (${left.length} of ${stuck.length})`);
    } finally {
      await hanging.close();
      await sender.stop();
      await client.close();
      await fine.close();
      await store.db.deleteFrom('webhook_deliveries').where('origin', 'in', [hanging.origin, fine.origin]).execute();
    }
  });

  if (dialect === 'postgres') {
    it('reads none of the busy origin’s backlog to claim the others’ (rows read, counted by PostgreSQL)', async () => {
      const store = nodes.a;
      const read = async (tx: Db) => {
        const r = await sql<{ n: string }>`select coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as n
          from pg_stat_xact_user_tables where relid = 'webhook_deliveries'::regclass`.execute(tx);
        return Number(r.rows[0]?.n ?? 0);
      };
      const slow = 'http://slow.test';
      const backlog = 2_000;
      await store.db
        .transaction()
        .execute((tx) =>
          insertDeliveries(tx, [...Array.from({ length: backlog }, (_, i) => delivery(slow, now - 90_000 + i)), delivery('http://fresh.test', now - 100)]),
        );
      // As autovacuum would have: without statistics, PostgreSQL's plans for a table this small read all of it.
      await sql`analyze webhook_deliveries`.execute(store.db);
      await store.db.transaction().execute(async (tx) => {
        const outbox = outboxOn({ ...store, db: tx } as Store);
        const before = await read(tx);
        const r = await outbox.claimWithNextDue(now, 100, 60_000, [BUSY, slow]);
        const rowsRead = (await read(tx)) - before;
        assert.deepEqual(
          r.rows.map((d) => d.origin),
          ['http://fresh.test'],
        );
        // What it reads is a few rows for each origin with deliveries pending (the earlier tests' sixty-odd).
        assert.ok(rowsRead < 400, `${rowsRead} rows read with ${backlog} due to the busy origin`);
      });
    });
  }
});
