import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FairQueue, HIGH_LANE, laneOf, LOW_LANE, lowLaneReserve } from '../../src/domain/fair-queue.ts';

test('lanes: OTP and TRANSACTIONAL go first, MARKETING keeps a share of every batch', () => {
  assert.equal(laneOf('OTP'), HIGH_LANE);
  assert.equal(laneOf('TRANSACTIONAL'), HIGH_LANE);
  assert.equal(laneOf('MARKETING'), LOW_LANE);
  assert.equal(lowLaneReserve(500), 50, 'a full high lane leaves a tenth of a batch to the low one');
  assert.equal(lowLaneReserve(5), 1);
  assert.equal(lowLaneReserve(1), 1);
});

test('ranks: a tenant queueing a flood does not push back another tenant queueing a moment later', () => {
  const q = new FairQueue(1);
  const now = 1_000_000;
  const flood = Array.from({ length: 100_000 }, () => q.rank('big', now, now));
  assert.equal(flood[0], now);
  assert.equal(flood.at(-1), now + 99_999);
  // The dispatcher has sent the first 500 of the flood.
  q.served(flood[499]!);
  const other = q.rank('small', now + 5_000, now + 5_000);
  assert.equal(flood.filter((r) => r < other).length, 499, 'ranks right behind what is being sent, ahead of the rest');
  assert.equal(q.rank('small', now + 5_000, now + 5_000), other + 1, 'its own next message comes one step later');
});

test('ranks: before the first claim the clock stands in; a message scheduled for later takes no turn', () => {
  const q = new FairQueue(1);
  assert.equal(q.rank('a', 5_000, 1_000), 1_000);
  assert.equal(q.rank('a', 1_000, 1_000), 1_000, 'the scheduled one spaced nothing');
  assert.equal(q.rank('a', 1_000, 1_000), 1_001);
});
