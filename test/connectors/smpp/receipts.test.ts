import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partRecords, receiptEvents, receiptOutcome } from '../../../src/connectors/smpp/receipts.ts';
import { HarnessContext } from '../harness.ts';

const at = 1_800_000_000_000;

describe('SMPP receipts', () => {
  it('read each stat as a final status with its reason, or as not final', () => {
    assert.deepEqual(receiptOutcome('DELIVRD'), { status: 'DELIVERED', detail: null });
    assert.deepEqual(receiptOutcome('EXPIRED'), { status: 'UNDELIVERED', detail: 'EXPIRED' });
    assert.deepEqual(receiptOutcome('REJECTD'), { status: 'UNDELIVERABLE', detail: 'REJECTED' });
    assert.deepEqual(receiptOutcome('UNDELIV'), { status: 'UNDELIVERED', detail: 'OPERATOR_ERROR' });
    assert.deepEqual(receiptOutcome('FAILED'), { status: 'UNDELIVERED', detail: 'OPERATOR_ERROR' });
    for (const s of ['ACCEPTD', 'ENROUTE', 'BUFFRED']) assert.equal(receiptOutcome(s), null, s);
  });

  it('go to the core as they are when their id is no part of a long message', async () => {
    const ctx = new HarnessContext('op');
    const events = await receiptEvents(ctx, 'op', [{ id: '42', status: 'DELIVERED', detail: null, at }]);
    assert.deepEqual(events, [{ kind: 'receipt', connector: 'op', upstreamId: '42', status: 'DELIVERED', detail: null, at }]);
  });

  it('of a long message decide once every part is DELIVERED, under its first part’s id', async () => {
    const ctx = new HarnessContext('op');
    await ctx.records.put(partRecords(['a1', 'a2', 'a3']));
    assert.deepEqual(await receiptEvents(ctx, 'op', [{ id: 'a2', status: 'DELIVERED', detail: null, at }]), []);
    assert.deepEqual(await receiptEvents(ctx, 'op', [{ id: 'a3', status: 'DELIVERED', detail: null, at: at + 5 }]), []);
    const done = await receiptEvents(ctx, 'op', [{ id: 'a1', status: 'DELIVERED', detail: null, at: at + 1 }]);
    assert.deepEqual(done, [{ kind: 'receipt', connector: 'op', upstreamId: 'a1', status: 'DELIVERED', detail: null, at: at + 5 }]);
  });

  it('of a long message fail it at the first failed part, the worst failure winning', async () => {
    const ctx = new HarnessContext('op');
    await ctx.records.put(partRecords(['b1', 'b2']));
    const events = await receiptEvents(ctx, 'op', [
      { id: 'b2', status: 'UNDELIVERED', detail: 'EXPIRED', at },
      { id: 'b1', status: 'UNDELIVERABLE', detail: 'REJECTED', at },
    ]);
    assert.deepEqual(events, [{ kind: 'receipt', connector: 'op', upstreamId: 'b1', status: 'UNDELIVERABLE', detail: 'REJECTED', at }]);
  });
});
