import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideReceipt, hourOf, isUnreachedCall, retryableFailure, VOICE_CALL_ATTEMPTS } from '../../src/domain/delivery.ts';

test('a busy or unanswered call is placed again until the attempts are spent, then refunded', () => {
  for (const detail of ['BUSY', 'NO_ANSWER']) {
    for (let placed = 1; placed < VOICE_CALL_ATTEMPTS; placed++) {
      assert.deepEqual(decideReceipt({ type: 'VOICE' }, { status: 'UNDELIVERED', detail }, placed), { kind: 'retry' });
    }
    assert.deepEqual(decideReceipt({ type: 'VOICE' }, { status: 'UNDELIVERED', detail }, VOICE_CALL_ATTEMPTS), { kind: 'status', refund: true });
    assert.deepEqual(decideReceipt({ type: 'VOICE' }, { status: 'UNDELIVERED', detail }, 1, 1), { kind: 'status', refund: true });
  }
});

test('refused by the operator is refunded; delivered, read or lost after the operator keeps its charge', () => {
  for (const type of ['SMS', 'RCS', 'VOICE']) {
    assert.deepEqual(decideReceipt({ type }, { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' }, 1), { kind: 'status', refund: true });
    assert.deepEqual(decideReceipt({ type }, { status: 'DELIVERED' }, 1), { kind: 'status', refund: false });
  }
  assert.deepEqual(
    decideReceipt({ type: 'SMS' }, { status: 'UNDELIVERED', detail: 'BUSY' }, 1),
    { kind: 'status', refund: false },
    'only calls are placed again',
  );
  assert.deepEqual(decideReceipt({ type: 'RCS' }, { status: 'READ' }, 1), { kind: 'status', refund: false });
  assert.deepEqual(decideReceipt({ type: 'VOICE' }, { status: 'UNDELIVERED', detail: 'EXPIRED' }, 1), { kind: 'status', refund: false });
  assert.equal(isUnreachedCall('VOICE', 'UNDELIVERED', null), false);
});

test('a failed delivery is worth another operator for the network’s reasons, not the number’s', () => {
  for (const detail of [null, undefined, 'OPERATOR_ERROR', 'NETWORK_ERROR', 'REJECTED']) assert.equal(retryableFailure(detail), true, String(detail));
  for (const detail of ['INVALID_PHONE_NUMBER', 'ABSENT_SUBSCRIBER', 'EXPIRED', 'BLACKLISTED', 'BUSY', 'NO_ANSWER', 'DELETED'])
    assert.equal(retryableFailure(detail), false, detail);
});

test('delivery counters are kept per hour', () => {
  const t = Date.parse('2026-12-07T18:59:59.999Z');
  assert.equal(hourOf(t), Date.parse('2026-12-07T18:00:00Z'));
  assert.equal(hourOf(Date.parse('2026-12-07T19:00:00Z')), Date.parse('2026-12-07T19:00:00Z'));
});
