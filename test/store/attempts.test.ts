import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { uuidv7 } from '../../src/domain/ids.ts';
import { smsRow } from '../support/message-rows.ts';
import { countOutcomes, insertAttempts, listAttempts, type MessageAttemptRow, qualityTotals, settleAttempts, settleEarly } from '../../src/store/attempts.ts';
import type { Channel } from '../../src/store/channels.ts';
import { inTransaction, type Store } from '../../src/store/db.ts';
import { recordDispatch, type DispatchOutcomes } from '../../src/store/dispatch.ts';
import { insertMessages } from '../../src/store/messages.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodesForSuite } from '../support/stores.ts';

type Receipt = { messageId: string; connector: string; outcome: string; detail: string | null; at: number };

/** What receipts do to placements, one after the other: each ends the open placement of its message and connector. */
function model(rows: MessageAttemptRow[], receipts: Receipt[]): { rows: MessageAttemptRow[]; ended: string[] } {
  const out = rows.map((r) => ({ ...r }));
  const ended: string[] = [];
  for (const s of receipts) {
    for (const r of out) {
      if (r.message_id !== s.messageId || r.connector !== s.connector || r.outcome !== null) continue;
      Object.assign(r, { outcome: s.outcome, detail: s.detail, ended_at: s.at });
      ended.push(`${r.message_id}|${r.connector}|${r.network}|${r.placed_at}|${s.outcome}|${s.at}`);
    }
  }
  return { rows: out, ended: ended.sort() };
}

forEachDialect('placements ended by receipts', (dialect) => {
  const stores = twoNodesForSuite(dialect);

  test('a batch of receipts ends placements as the same receipts one after the other would', async () => {
    const connectors = ['op-a', 'op-b', 'op-c'];
    // A message's placements: through distinct connectors, those before its last one ended already.
    const placements = fc.array(fc.subarray(connectors, { minLength: 1 }), { minLength: 1, maxLength: 12 });
    const receipt = (messages: number) =>
      fc.record({
        message: fc.nat({ max: messages }), // one more than there are: a receipt for a placement not recorded
        connector: fc.constantFrom(...connectors),
        outcome: fc.constantFrom('DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE'),
        detail: fc.constantFrom(null, 'OPERATOR_ERROR', 'a "quoted", {braced} \\ detail'),
        at: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
      });
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        placements.chain((p) => fc.tuple(fc.constant(p), fc.array(receipt(p.length), { maxLength: 40 }))),
        async ([messages, drawn]) => {
          const prefix = `settle-${round++}`;
          const rows: MessageAttemptRow[] = messages.flatMap((through, m) =>
            through.map((connector, i) => ({
              message_id: `${prefix}-${m}`,
              attempt: i + 1,
              connector,
              route: 'fr',
              upstream_id: `${prefix}-${m}-${i}`,
              network: `208${m}`,
              cost: 10_000,
              placed_at: 1_700_000_000_000 + m * 1000 + i,
              outcome: i < through.length - 1 ? 'UNDELIVERED' : null,
              detail: i < through.length - 1 ? 'NETWORK_ERROR' : null,
              ended_at: i < through.length - 1 ? 1_700_000_000_500 + m * 1000 + i : null,
            })),
          );
          const receipts: Receipt[] = drawn.map((d) => ({
            messageId: `${prefix}-${d.message}`,
            connector: d.connector,
            outcome: d.outcome,
            detail: d.detail,
            at: d.at,
          }));
          await insertAttempts(stores.a.db, rows);
          const settled = await settleAttempts(stores.a.db, receipts);
          const expected = model(rows, receipts);
          assert.deepEqual(settled.map((s) => `${s.messageId}|${s.connector}|${s.network}|${s.placedAt}|${s.outcome}|${s.at}`).sort(), expected.ended);
          for (let m = 0; m < messages.length; m++) {
            const id = `${prefix}-${m}`;
            assert.deepEqual(
              await listAttempts(stores.a.db, id),
              expected.rows.filter((r) => r.message_id === id),
            );
          }
          // Repeated, they end nothing more.
          assert.deepEqual(await settleAttempts(stores.a.db, receipts), []);
        },
      ),
      { seed: 4711, numRuns: 60 },
    );
  });

  test('a receipt that comes before its placement is recorded ends it once recorded, counted once', async () => {
    const store = stores.a;
    const now = Date.now();
    const channel = { id: 'ch-early', organisationId: 'org-early' } as Channel;
    const ids = Array.from({ length: 5 }, () => uuidv7(now));
    await insertMessages(
      store.db,
      ids.map((id) => smsRow({ id, channel, recipient: '33650000012', text: 'early', price: 45_000, now })),
    );
    const [early, other, repeated, rerouted, legacy] = ids as [string, string, string, string, string];
    // What the receipt path does with a batch of final receipts (carrier-events.ts).
    const receive = (receipts: Receipt[]) =>
      inTransaction(store, async (trx) => {
        const settled = await settleAttempts(trx, receipts);
        const ended = new Set(settled.map((x) => `${x.messageId}|${x.connector}`));
        settled.push(
          ...(await settleEarly(
            trx,
            receipts.filter((r) => !ended.has(`${r.messageId}|${r.connector}`)),
          )),
        );
        await countOutcomes(trx, settled);
        return settled;
      });
    const placed = (id: string, connector: string, attempt: number, at: number): DispatchOutcomes['submitted'][number] => ({
      id,
      upstreamId: `up-${id}-${attempt}`,
      connector,
      route: 'fr',
      parts: 1,
      cost: 10_000,
      charged: attempt === 1 ? 45_000 : 0,
      chargedOnce: 45_000,
      day: '2026-12-07',
      organisationId: 'org-early',
      country: 'FR',
      attempt,
      ...(attempt > 1 && { again: true }),
      placedAt: at,
      network: '20801',
    });
    const record = (s: Store, submitted: DispatchOutcomes['submitted']) =>
      recordDispatch(s, { claimant: 'node-a', leaseUntil: now + 60_000 }, { submitted, retries: [], done: [] });
    const counters = async () => new Map((await qualityTotals(store.db, now - 7_200_000)).map((q) => [q.connector, [q.delivered, q.failed, q.deliveredMs]]));

    // Placed earlier: the re-routed one through op-a (ended UNDELIVERED), and one before placements were recorded.
    await record(store, [placed(rerouted, 'op-a', 1, now)]);
    assert.equal((await receive([{ messageId: rerouted, connector: 'op-a', outcome: 'UNDELIVERED', detail: 'OPERATOR_ERROR', at: now + 10 }])).length, 1);
    await store.db.updateTable('messages').set({ upstream_id: 'up-legacy', attempts: 1 }).where('id', '=', legacy).execute();
    assert.deepEqual(await counters(), new Map([['op-a', [0, 1, 0]]]));

    // Receipts ahead of their placements: nothing counted yet.
    const receipts: Receipt[] = [
      { messageId: early, connector: 'op-b', outcome: 'DELIVERED', detail: null, at: now + 100 },
      { messageId: other, connector: 'op-c', outcome: 'DELIVERED', detail: null, at: now + 100 },
      { messageId: repeated, connector: 'op-b', outcome: 'UNDELIVERED', detail: 'NETWORK_ERROR', at: now + 100 },
      { messageId: rerouted, connector: 'op-b', outcome: 'DELIVERED', detail: null, at: now + 100 },
      { messageId: legacy, connector: 'op-b', outcome: 'DELIVERED', detail: null, at: now + 100 },
    ];
    assert.deepEqual(await receive(receipts), []);
    assert.deepEqual(await counters(), new Map([['op-a', [0, 1, 0]]]));
    // Repeated before the placement is recorded: still one.
    assert.deepEqual(await receive(receipts.slice(0, 3)), []);

    // The placements recorded (by another node): each ended by its receipt and counted, once; the one reported by
    // another connector than it was placed with is left open; the legacy one has no placement to end.
    await record(stores.b, [
      placed(early, 'op-b', 1, now + 50),
      placed(other, 'op-b', 1, now + 50),
      placed(repeated, 'op-b', 1, now + 50),
      placed(rerouted, 'op-b', 2, now + 50),
    ]);
    assert.deepEqual(
      await counters(),
      new Map([
        ['op-a', [0, 1, 0]],
        ['op-b', [2, 1, 2 * 50]],
      ]),
    );
    const ended = async (id: string) =>
      (await listAttempts(store.db, id)).map((a) => [
        a.attempt,
        a.connector,
        a.route,
        a.network,
        a.cost,
        a.placed_at - now,
        a.outcome,
        a.ended_at === null ? null : a.ended_at - now,
      ]);
    assert.deepEqual(await ended(early), [[1, 'op-b', 'fr', '20801', 10_000, 50, 'DELIVERED', 100]]);
    assert.deepEqual(await ended(other), [[1, 'op-b', 'fr', '20801', 10_000, 50, null, null]]);
    assert.deepEqual(await ended(rerouted), [
      [1, 'op-a', 'fr', '20801', 10_000, 0, 'UNDELIVERED', 10],
      [2, 'op-b', 'fr', '20801', 10_000, 50, 'DELIVERED', 100],
    ]);
    assert.deepEqual(await ended(legacy), []);

    // The same receipts again end nothing, count nothing.
    assert.deepEqual(await receive(receipts), []);
    assert.equal((await counters()).get('op-b')![0], 2);
  });
});
