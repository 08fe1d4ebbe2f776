import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SmppConnector } from '../../../src/connectors/smpp/connector.ts';
import { partRecords, receiptEvents, receiptOutcome } from '../../../src/connectors/smpp/receipts.ts';
import { parseSmppSettings } from '../../../src/connectors/smpp/settings.ts';
import type { ReceiptEvent, SubmitResult } from '../../../src/core/ports.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { eventually } from '../../support/wait.ts';
import { HarnessContext, outbound } from '../harness.ts';

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

  it('name their message when this node submitted it, and go by their id otherwise', async () => {
    const ctx = new HarnessContext('op');
    const here = new Map([['42', 'message-42']]);
    const events = await receiptEvents(
      ctx,
      'op',
      [
        { id: '42', status: 'DELIVERED', detail: null, at },
        { id: '43', status: 'UNDELIVERED', detail: 'EXPIRED', at },
      ],
      (id) => here.get(id),
    );
    assert.deepEqual(events, [
      { kind: 'receipt', connector: 'op', messageId: 'message-42', upstreamId: '42', status: 'DELIVERED', detail: null, at },
      { kind: 'receipt', connector: 'op', upstreamId: '43', status: 'UNDELIVERED', detail: 'EXPIRED', at },
    ]);
  });

  it('that follow the submit’s answer name their message; a long message’s go by its first part', async () => {
    // A receipt right behind its answer reaches the core before the placement is recorded: by its id alone it would
    // match nothing yet and be kept in the database to be matched again.
    const smsc = await TestSmsc.start({ receipts: 'after' });
    const connector = new SmppConnector(
      'op',
      parseSmppSettings({ host: '127.0.0.1', port: smsc.port, systemId: 'tern', binds: 1 }, (f, r) => {
        throw new Error(`${f}: ${r}`);
      }),
      'secret',
    );
    const ctx = new HarnessContext('op');
    try {
      await connector.start(ctx);
      await eventually(() => ctx.states.at(-1) === 'UP', 5_000, 'bound');
      const short = outbound('33612345678');
      const long = outbound('33612345679', { body: { text: 'A long one. '.repeat(20) } });
      const results = (await connector.submit([short, long])) as Array<SubmitResult & { upstreamId: string }>;
      assert.ok(results.every((r) => r.ok));
      const receipts = await eventually(
        () => {
          const got = ctx.events.filter((e): e is ReceiptEvent => e.kind === 'receipt');
          return got.length >= 2 ? got : undefined;
        },
        5_000,
        'both receipts',
      );
      const of = (upstreamId: string) => receipts.find((e) => e.upstreamId === upstreamId);
      assert.equal(of(results[0]!.upstreamId)?.messageId, short.id);
      assert.equal(of(results[1]!.upstreamId)?.messageId, undefined);
      assert.equal(of(results[1]!.upstreamId)?.status, 'DELIVERED');
    } finally {
      await connector.stop();
      await smsc.close();
    }
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
