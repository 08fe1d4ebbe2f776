import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MESSAGE_STATUSES } from '../../../src/domain/status.ts';
import { messageStateOf, receiptErrorCode, receiptStatOf, receiptWanted, smppAddressOf } from '../../../src/doors/smpp/status.ts';

describe('SMPP view of message statuses', () => {
  it('gives every final status its receipt stat, and none while on the way or for READ', () => {
    const table = MESSAGE_STATUSES.map((s) => [s, receiptStatOf(s, null)]);
    assert.deepEqual(table, [
      ['SCHEDULED', null],
      ['ENROUTE', null],
      ['DELIVERED', 'DELIVRD'],
      ['UNDELIVERABLE', 'REJECTD'],
      ['UNDELIVERED', 'UNDELIV'],
      ['READ', null],
      ['CANCELLED', 'DELETED'],
    ]);
    assert.equal(receiptStatOf('UNDELIVERED', 'EXPIRED'), 'EXPIRED');
    assert.equal(receiptStatOf('UNDELIVERED', 'OPERATOR_ERROR'), 'UNDELIV');
    assert.equal(receiptStatOf('UNDELIVERABLE', 'EXPIRED'), 'REJECTD');
  });

  it('maps every status to a message_state (SMPP 3.4 §5.2.28)', () => {
    assert.deepEqual(
      MESSAGE_STATUSES.map((s) => messageStateOf(s, null)),
      [1, 1, 2, 8, 5, 2, 4],
    );
    assert.equal(messageStateOf('UNDELIVERED', 'EXPIRED'), 3);
  });

  it('reads registered_delivery bits 0–1: 1 every outcome, 2 failures only, 0 and 3 none', () => {
    for (const stat of ['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'DELETED'] as const) {
      assert.equal(receiptWanted(0, stat), false, `0 ${stat}`);
      assert.equal(receiptWanted(1, stat), true, `1 ${stat}`);
      assert.equal(receiptWanted(2, stat), stat !== 'DELIVRD', `2 ${stat}`);
      assert.equal(receiptWanted(3, stat), false, `3 ${stat}`);
      // Kannel's 0x11: a receipt plus intermediate notifications.
      assert.equal(receiptWanted(0x11, stat), true, `0x11 ${stat}`);
      assert.equal(receiptWanted(0x12, stat), stat !== 'DELIVRD', `0x12 ${stat}`);
      assert.equal(receiptWanted(0x10, stat), false, `0x10 ${stat}`);
    }
  });

  it('gives err 000 on delivery and a distinct code per failure detail', () => {
    assert.equal(receiptErrorCode('DELIVRD', null), 0);
    assert.equal(receiptErrorCode('DELIVRD', 'EXPIRED'), 0);
    const details = ['EXPIRED', 'OPERATOR_ERROR', 'REJECTED', 'NOT_ROUTABLE', 'INVALID_PHONE_NUMBER', 'BLACKLISTED', 'INSUFFICIENT_CREDIT'];
    const codes = details.map((d) => receiptErrorCode('UNDELIV', d));
    assert.equal(new Set(codes).size, details.length);
    assert.ok(codes.every((c) => c > 0 && c < 1000));
    assert.equal(receiptErrorCode('UNDELIV', null), 99);
    assert.equal(receiptErrorCode('REJECTD', 'SOMETHING_NEW'), 99);
  });

  it('chooses TON/NPI for the addresses of a deliver_sm', () => {
    assert.deepEqual(smppAddressOf('33612345678'), { addr: '33612345678', ton: 1, npi: 1 });
    assert.deepEqual(smppAddressOf('1234567'), { addr: '1234567', ton: 1, npi: 1 });
    assert.deepEqual(smppAddressOf('36180'), { addr: '36180', ton: 3, npi: 0 });
    assert.deepEqual(smppAddressOf('ACME'), { addr: 'ACME', ton: 5, npi: 0 });
    assert.deepEqual(smppAddressOf('+3361234'), { addr: '+3361234', ton: 5, npi: 0 });
    assert.deepEqual(smppAddressOf(''), { addr: '', ton: 5, npi: 0 });
  });
});
