// A dispatch pass's outcomes are written with its messages locked in id order, the order a change of status locks
// them in: on PostgreSQL the placements' update takes its rows in the order its join reads them, and two
// transactions taking the same messages in opposite orders deadlock (seen in the benchmarks' server log).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uuidv7 } from '../../src/domain/ids.ts';
import { smsRow } from '../support/message-rows.ts';
import type { Channel } from '../../src/store/channels.ts';
import { recordDispatch } from '../../src/store/dispatch.ts';
import { insertMessages, lockMessages } from '../../src/store/messages.ts';
import { holdLocks, rowIsFree, someoneWaitsForALock } from '../support/row-locks.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodesForSuite } from '../support/stores.ts';

forEachDialect('dispatch record lock order', (dialect) => {
  // Hash joins, which read the messages as stored rather than in the order of the ids given.
  const nodes = twoNodesForSuite(dialect, '-c enable_nestloop=off -c enable_mergejoin=off');

  test('placements lock their messages in id order, whatever order the update reads them in', async (t) => {
    if (dialect === 'sqlite') return t.skip('SQLite: one writer at a time, no two transactions hold locks at once');
    const { a, b } = nodes;
    const now = Date.now();
    const [first, second] = [uuidv7(now), uuidv7(now)].sort();
    const channel = { id: 'ch-lock', organisationId: 'org-lock' } as Channel;
    const row = (id: string) => smsRow({ id, channel, recipient: '33650000005', now });
    // Stored in the other order than their ids: a scan of the table reads the second one first.
    await insertMessages(a.db, [row(second!)]);
    await insertMessages(a.db, [row(first!)]);

    // A change of status holds the first message (it locks them in id order; the second would come next).
    const statusChange = await holdLocks(b, (trx) => lockMessages(trx, 'postgres', [first!]));
    const placed = (id: string) => ({
      id,
      upstreamId: `up-${id}`,
      connector: 'sim',
      route: 'r',
      parts: 1,
      cost: 0,
      charged: 0,
      chargedOnce: 0,
      day: '2026-11-28',
      organisationId: 'org',
      country: 'FR',
      attempt: 1,
      placedAt: now,
      network: 'FR',
    });
    const record = recordDispatch(a, { claimant: 'node-a', leaseUntil: now + 60_000 }, { submitted: [placed(second!), placed(first!)], retries: [], done: [] });
    await someoneWaitsForALock(b, 'the record to wait for the first message');
    // The record waits for the first message: it must not hold the second meanwhile (the change of status would
    // wait for it next, while the record waits for the first: a deadlock).
    const secondFree = await rowIsFree(b, 'messages', second!);
    await statusChange.release();
    await record;
    assert.equal(secondFree, true, 'the record locked the second message while it waited for the first');
    const rows = await a.db.selectFrom('messages').select(['id', 'upstream_id']).orderBy('id').execute();
    assert.deepEqual(rows, [
      { id: first, upstream_id: `up-${first}` },
      { id: second, upstream_id: `up-${second}` },
    ]);
  });
});
