// A dispatch pass's outcomes are written with its messages locked in id order, the order a change of status locks
// them in: on PostgreSQL the placements' update takes its rows in the order its join reads them, and two
// transactions taking the same messages in opposite orders deadlock (seen in the benchmarks' server log).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { uuidv7 } from '../../src/core/domain/ids.ts';
import { outboundMessageRow } from '../../src/core/messaging/message-row.ts';
import type { Channel } from '../../src/store/channels.ts';
import type { Store } from '../../src/store/db.ts';
import { recordDispatch } from '../../src/store/dispatch.ts';
import { insertMessages, lockMessages } from '../../src/store/messages.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';
import { eventually } from '../support/wait.ts';

forEachDialect('dispatch record lock order', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  // Hash joins, which read the messages as stored rather than in the order of the ids given.
  before(async () => ({ a, b, cleanup } = await twoNodes(dialect, '-c enable_nestloop=off -c enable_mergejoin=off')));
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('placements lock their messages in id order, whatever order the update reads them in', async (t) => {
    if (dialect === 'sqlite') return t.skip('SQLite: one writer at a time, no two transactions hold locks at once');
    const now = Date.now();
    const [first, second] = [uuidv7(now), uuidv7(now)].sort();
    const channel = { id: 'ch-lock', organisationId: 'org-lock' } as Channel;
    const row = (id: string) =>
      outboundMessageRow({
        id, channel, type: 'SMS', recipient: '33650000005', sender: null, body: { text: 'x' }, units: 1, length: 1, price: 0,
        priceKind: 'SMS', refClient: null, callbackUrlStatus: null, callbackUrlMo: null, now, sendAt: now, validityUntil: null,
        country: 'FR', network: null, source: 'test',
      });
    // Stored in the other order than their ids: a scan of the table reads the second one first.
    await insertMessages(a.db, [row(second!)]);
    await insertMessages(a.db, [row(first!)]);

    // A change of status holds the first message (it locks them in id order; the second would come next).
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const statusChange = b.db.transaction().execute(async (trx) => {
      await lockMessages(trx, 'postgres', [first!]);
      holding();
      await released;
    });
    await held;
    const placed = (id: string) => ({ id, upstreamId: `up-${id}`, connector: 'sim', route: 'r', parts: 1, cost: 0, charged: 0, day: '2026-11-28' });
    const record = recordDispatch(a, { claimant: 'node-a', leaseUntil: now + 60_000 }, { submitted: [placed(second!), placed(first!)], retries: [], done: [] });
    await eventually(async () => {
      const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(b.db);
      return waiting.rows[0]!.n === 1;
    }, 10_000, 'the record to wait for the first message');
    // The record waits for the first message: it must not hold the second meanwhile (the change of status would
    // wait for it next, while the record waits for the first: a deadlock).
    const secondFree = await b.db.transaction().execute(async (trx) => {
      try {
        await sql`select id from messages where id = ${second!} for no key update nowait`.execute(trx);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === '55P03') return false;
        throw err;
      }
    });
    release();
    await statusChange;
    await record;
    assert.equal(secondFree, true, 'the record locked the second message while it waited for the first');
    const rows = await a.db.selectFrom('messages').select(['id', 'upstream_id']).orderBy('id').execute();
    assert.deepEqual(rows, [
      { id: first, upstream_id: `up-${first}` },
      { id: second, upstream_id: `up-${second}` },
    ]);
  });
});
