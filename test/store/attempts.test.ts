import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { insertAttempts, listAttempts, type MessageAttemptRow, settleAttempts } from '../../src/store/attempts.ts';
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
});
