// A rate held in every sliding second (an operator connection's tps), for one node and for two sharing a database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { slidingRetryAt, SLIDING_SLOT_MS, SLIDING_SLOTS, spanSlots } from '../../src/domain/sliding-second.ts';
import { SlidingSecondLimiter } from '../../src/core/sliding-rate.ts';
import type { Store } from '../../src/store/db.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

/** The most grants in any second [t, t + 1000), t ranging over the grant times. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + 1_000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

test('slidingRetryAt: when enough of the oldest slots have left the span', () => {
  // 20 a second; 12 taken in slot 100, 8 in slot 110: full until slot 100 leaves the span (a second and a slot).
  const slots = [
    { slot: 100, count: 12 },
    { slot: 110, count: 8 },
  ];
  assert.equal(spanSlots(), SLIDING_SLOTS + 1);
  assert.equal(slidingRetryAt(slots, 115, 1, 20), (100 + SLIDING_SLOTS + 1) * SLIDING_SLOT_MS);
  assert.equal(slidingRetryAt(slots, 115, 13, 20), (110 + SLIDING_SLOTS + 1) * SLIDING_SLOT_MS, 'thirteen need both slots gone');
  assert.equal(slidingRetryAt(slots, 115, 1, 20, spanSlots(1)), (100 + SLIDING_SLOTS + 2) * SLIDING_SLOT_MS, 'a span a slot longer');
  assert.equal(slidingRetryAt(slots, 115, 21, 20), 116 * SLIDING_SLOT_MS, 'more than the rate never fits: the next slot');
  assert.equal(
    slidingRetryAt([{ slot: 50, count: 20 }, ...slots], 115, 1, 20),
    (100 + SLIDING_SLOTS + 1) * SLIDING_SLOT_MS,
    'slots out of the span do not count',
  );
});

forEachDialect('a rate held in every sliding second', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  before(async () => ({ a, b, cleanup } = await twoNodes(dialect)));
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('a second’s worth at the end of a clock second leaves nothing for the start of the next', async () => {
    let now = 1_000_000_950;
    const limiter = new SlidingSecondLimiter(a, () => now, 100);
    for (let i = 0; i < 20; i++) assert.ok((await limiter.take('op:edge', 1, 20)).ok, `unit ${i}`);
    const refused = await limiter.take('op:edge', 1, 20);
    assert.equal(refused.ok, false);
    now = 1_000_001_000; // a new clock second: a fixed window would give 20 more here
    const next = await limiter.take('op:edge', 1, 20);
    assert.equal(next.ok, false, 'still within a second of the first 20');
    // Once the slot of the first 20 has left the span (a second and a slot later, and a slot more across nodes),
    // less the 100 ms a take waits for units about to free up.
    const freeAt = 1_000_001_950 + (dialect === 'postgres' ? 2 : 1) * SLIDING_SLOT_MS;
    assert.equal(!next.ok && next.retryAt, freeAt - 100);
    now = freeAt;
    assert.ok((await limiter.take('op:edge', 1, 20)).ok);
    assert.equal((await limiter.take('op:big', 21, 20)).ok, false, 'more than the rate at once is refused');
  });

  test(`${dialect === 'postgres' ? 'two nodes' : 'one node'} taking as fast as allowed for 10 s: no second holds more than the rate, and most of it is used`, async () => {
    let now = 2_000_000_000;
    const clock = () => now;
    const nodes =
      dialect === 'postgres' ? [new SlidingSecondLimiter(a, clock, 0), new SlidingSecondLimiter(b, clock, 0)] : [new SlidingSecondLimiter(a, clock, 0)];
    const grants: number[] = [];
    // The clock moves in uneven steps (1 to 17 ms); every node tries a few units (1 to 3 parts) at each step.
    let step = 0;
    while (now < 2_000_010_000) {
      for (const [i, node] of nodes.entries()) {
        for (let k = 0; k < 3; k++) {
          const parts = 1 + ((step + i + k) % 3);
          const r = await node.take('op:steady', parts, 50);
          if (r.ok) for (let p = 0; p < parts; p++) grants.push(now);
        }
      }
      now += 1 + ((step * 7) % 17);
      step++;
    }
    const busiest = busiestSecond(grants);
    const mean = grants.length / 10;
    assert.ok(busiest <= 50, `${busiest} in the busiest second, for a rate of 50`);
    // Within a second and a slot: at most a twentieth lost, and on several nodes what they hold when a slot ends.
    assert.ok(mean >= (dialect === 'postgres' ? 40 : 46), `${mean.toFixed(1)} a second on average`);
  });
});
