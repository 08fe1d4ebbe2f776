import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readDeliverSm } from '../../../src/protocols/smpp/deliver.ts';
import { decodePdu, encodePdu, type Pdu, SmppStatus } from '../../../src/protocols/smpp/pdu.ts';

function deliver(fields: Record<string, unknown>): Pdu {
  const d = decodePdu(encodePdu('deliver_sm', 7, 0, { source_addr: '33612345678', destination_addr: '36111', data_coding: 0, ...fields }));
  assert.ok(d.ok);
  return d.pdu;
}

const receiptText = 'id:0A1B2C sub:001 dlvrd:001 submit date:2611241200 done date:2611241201 stat:DELIVRD err:000 text:Hello';

describe('readDeliverSm', () => {
  it('reads a receipt from its TLVs first', () => {
    const r = readDeliverSm(deliver({ esm_class: 0x04, short_message: Buffer.from(receiptText), receipted_message_id: 'ff', message_state: 5 }));
    assert.deepEqual(r, { kind: 'receipt', id: 'ff', stat: 'UNDELIV', err: '000', doneDate: new Date('2026-11-24T12:01:00Z') });
  });

  it('reads a receipt from its text alone, and an intermediate notification as one', () => {
    const r = readDeliverSm(deliver({ esm_class: 0x04, short_message: Buffer.from(receiptText) }));
    assert.equal(r.kind, 'receipt');
    if (r.kind === 'receipt') assert.deepEqual([r.id, r.stat], ['0A1B2C', 'DELIVRD']);
    const i = readDeliverSm(deliver({ esm_class: 0x20, short_message: Buffer.from(receiptText.replace('DELIVRD', 'ENROUTE')) }));
    assert.equal(i.kind === 'receipt' && i.stat, 'ENROUTE');
  });

  it('refuses a receipt without an id or a state, with the status to answer', () => {
    assert.deepEqual(readDeliverSm(deliver({ esm_class: 0x04, short_message: Buffer.from('stat:DELIVRD') })), {
      kind: 'invalid',
      status: SmppStatus.ESME_RINVMSGID,
      reason: 'a receipt without the id of the message it reports on',
    });
    assert.equal(readDeliverSm(deliver({ esm_class: 0x04, short_message: Buffer.from('id:12 sub:001') })).kind, 'invalid');
  });

  it('reads an MO, and one part of a long MO with its UDH', () => {
    const mo = readDeliverSm(deliver({ esm_class: 0, data_coding: 8, short_message: Buffer.from('00480069', 'hex') }));
    assert.ok(mo.kind === 'mo');
    assert.deepEqual(
      [mo.source.addr, mo.destination.addr, mo.dataCoding, mo.payload.toString('hex'), mo.concat],
      ['33612345678', '36111', 8, '00480069', undefined],
    );
    const part = readDeliverSm(deliver({ esm_class: 0x40, short_message: Buffer.concat([Buffer.from([5, 0, 3, 9, 2, 1]), Buffer.from('Hi')]) }));
    assert.ok(part.kind === 'mo');
    assert.deepEqual(part.concat, { ref: 9, total: 2, seq: 1 });
    assert.equal(part.payload.toString(), 'Hi');
  });

  it('never throws on any deliver_sm body', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 60 }), (body, esm, tlv) => {
        const head = Buffer.alloc(16);
        const bytes = Buffer.concat([head, Buffer.from(body), Buffer.from(tlv)]);
        bytes.writeUInt32BE(bytes.length, 0);
        bytes.writeUInt32BE(0x00000005, 4);
        bytes.writeUInt32BE(1, 12);
        const d = decodePdu(bytes);
        if (!d.ok) return;
        d.pdu.fields.esm_class = esm;
        const r = readDeliverSm(d.pdu);
        assert.ok(['receipt', 'mo', 'invalid'].includes(r.kind));
      }),
      { seed: 5, numRuns: 3_000 },
    );
  });
});
