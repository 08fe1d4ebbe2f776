import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideReceipt, isUnreachedCall, VOICE_CALL_ATTEMPTS } from '../../../src/core/domain/delivery.ts';

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
  assert.deepEqual(decideReceipt({ type: 'SMS' }, { status: 'UNDELIVERED', detail: 'BUSY' }, 1), { kind: 'status', refund: false }, 'only calls are placed again');
  assert.deepEqual(decideReceipt({ type: 'RCS' }, { status: 'READ' }, 1), { kind: 'status', refund: false });
  assert.deepEqual(decideReceipt({ type: 'VOICE' }, { status: 'UNDELIVERED', detail: 'EXPIRED' }, 1), { kind: 'status', refund: false });
  assert.equal(isUnreachedCall('VOICE', 'UNDELIVERED', null), false);
});
