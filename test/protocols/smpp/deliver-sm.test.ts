import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeGsm7, decodeUcs2 } from '../../../src/domain/text.ts';
import { buildMoDeliverSms, buildReceiptDeliverSm } from '../../../src/protocols/smpp/deliver-sm.ts';
import { decodePdu, encodePdu } from '../../../src/protocols/smpp/pdu.ts';

describe('buildReceiptDeliverSm', () => {
  it('builds an esm_class 0x04 deliver_sm with receipt text and TLVs that encode and decode', () => {
    const fields = buildReceiptDeliverSm({
      messageId: 'abc-123',
      source: '33612345678',
      destination: 'ACME',
      stat: 'UNDELIV',
      err: 12,
      submitDate: new Date('2026-01-02T03:04:05Z'),
      doneDate: new Date('2026-01-02T03:09:00Z'),
      text: 'Prix: 5 € — merci',
      sub: 2,
    });
    assert.equal(fields.esm_class, 0x04);
    assert.equal(fields.data_coding, 0);
    assert.deepEqual([fields.source_addr_ton, fields.source_addr_npi, fields.source_addr], [1, 1, '33612345678']);
    assert.deepEqual([fields.dest_addr_ton, fields.dest_addr_npi, fields.destination_addr], [5, 0, 'ACME']);
    assert.equal(fields.receipted_message_id, 'abc-123');
    assert.equal(fields.message_state, 5);
    // '—' is not GSM: it becomes '?', the rest stays.
    assert.equal(
      decodeGsm7(fields.short_message),
      'id:abc-123 sub:002 dlvrd:000 submit date:2601020304 done date:2601020309 stat:UNDELIV err:012 ' + 'text:Prix: 5 € ? merci',
    );
    const d = decodePdu(encodePdu('deliver_sm', 3, 0, fields));
    assert.ok(d.ok);
    assert.equal(d.ok && d.pdu.fields['receipted_message_id'], 'abc-123');
    assert.equal(d.ok && d.pdu.fields['message_state'], 5);
    assert.deepEqual(d.ok && d.pdu.fields['short_message'], fields.short_message);
  });

  it('keeps explicit addresses as given', () => {
    const f = buildReceiptDeliverSm({
      messageId: 'x',
      source: { addr: '0612345678', ton: 2, npi: 1 },
      destination: { addr: '36111', ton: 3, npi: 0 },
      stat: 'DELIVRD',
      submitDate: new Date(),
      doneDate: new Date(),
    });
    assert.deepEqual([f.source_addr_ton, f.source_addr, f.dest_addr_ton, f.destination_addr], [2, '0612345678', 3, '36111']);
  });
});

describe('buildMoDeliverSms', () => {
  it('sends a short text as one plain deliver_sm', () => {
    const [one, ...rest] = buildMoDeliverSms({ source: '33612345678', destination: '36111', text: 'STOP', ref: 1 });
    assert.equal(rest.length, 0);
    assert.equal(one!.esm_class, 0);
    assert.equal(one!.data_coding, 0);
    assert.equal(decodeGsm7(one!.short_message), 'STOP');
  });

  it('splits a long UCS-2 text into parts with a concatenation UDH', () => {
    const text = 'Réponse 😀 '.repeat(10); // 110 UTF-16 units: two UCS-2 parts
    const parts = buildMoDeliverSms({ source: '33612345678', destination: '36111', text, ref: 0x1ff });
    assert.equal(parts.length, 2);
    let joined = '';
    parts.forEach((p, i) => {
      assert.equal(p.esm_class, 0x40);
      assert.equal(p.data_coding, 8);
      assert.deepEqual([...p.short_message.subarray(0, 6)], [5, 0, 3, 0xff, 2, i + 1]);
      assert.ok(p.short_message.length <= 140);
      joined += decodeUcs2(p.short_message.subarray(6));
    });
    assert.equal(joined, text);
  });
});
