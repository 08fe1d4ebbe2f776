import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePdu, encodePdu, SmppStatus, type Pdu } from '../../../src/protocols/smpp/pdu.ts';
import { decodeSubmit, type DecodeSubmitResult } from '../../../src/protocols/smpp/submit.ts';

const now = new Date('2026-05-01T12:00:00Z');

function submitPdu(fields: Record<string, unknown>): Pdu {
  const d = decodePdu(encodePdu('submit_sm', 1, 0, { destination_addr: '33600000000', ...fields }));
  if (!d.ok) throw new Error(d.reason);
  return d.pdu;
}

function ok(r: DecodeSubmitResult) {
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.submit;
}

function refused(r: DecodeSubmitResult): number {
  assert.equal(r.ok, false);
  return r.ok ? 0 : r.status;
}

describe('decodeSubmit', () => {
  it("reads Kannel's defaults: esm_class 3 and registered_delivery 0x11", () => {
    const pdu = submitPdu({ esm_class: 3, registered_delivery: 0x11, short_message: Buffer.from('hi') });
    const s = ok(decodeSubmit(pdu, now));
    assert.equal(s.fields.esmClass, 3);
    assert.equal(s.fields.receiptRequested, true);
    assert.equal(s.fields.receiptOnFailureOnly, false);
    assert.equal(s.fields.intermediateNotification, true);
    assert.equal(s.concat, undefined);
    assert.deepEqual(s.payload, Buffer.from('hi'));
  });

  it('reads receipt requests from registered_delivery bits 0–1 only', () => {
    const flags = (rd: number) => {
      const f = ok(decodeSubmit(submitPdu({ registered_delivery: rd }), now)).fields;
      return [f.receiptRequested, f.receiptOnFailureOnly, f.intermediateNotification];
    };
    assert.deepEqual(flags(0), [false, false, false]);
    assert.deepEqual(flags(1), [true, false, false]);
    assert.deepEqual(flags(2), [true, true, false]);
    assert.deepEqual(flags(3), [false, false, false]);
    assert.deepEqual(flags(0x10), [false, false, true]);
  });

  it('strips an 8-bit or 16-bit concatenation UDH and reports the reference', () => {
    const s8 = ok(decodeSubmit(submitPdu({ esm_class: 0x43, short_message: Buffer.from([5, 0, 3, 0xaa, 2, 1, 0x41, 0x42]) }), now));
    assert.deepEqual(s8.concat, { ref: 0xaa, total: 2, seq: 1 });
    assert.deepEqual(s8.payload, Buffer.from('AB'));
    const s16 = ok(decodeSubmit(submitPdu({ esm_class: 0x40, short_message: Buffer.from([6, 8, 4, 0x12, 0x34, 3, 3, 0x43]) }), now));
    assert.deepEqual(s16.concat, { ref: 0x1234, total: 3, seq: 3 });
    assert.deepEqual(s16.payload, Buffer.from('C'));
  });

  it('keeps a UDH without concatenation out of the text, and treats a 1-part concatenation as plain', () => {
    const withPorts = submitPdu({ esm_class: 0x40, short_message: Buffer.from([4, 4, 2, 0x0b, 0x84, 0x41]) });
    const port = ok(decodeSubmit(withPorts, now));
    assert.equal(port.concat, undefined);
    assert.deepEqual(port.payload, Buffer.from('A'));
    const onePart = submitPdu({ esm_class: 0x40, short_message: Buffer.from([5, 0, 3, 1, 1, 1, 0x41]) });
    const single = ok(decodeSubmit(onePart, now));
    assert.equal(single.concat, undefined);
  });

  it('reads sar_* TLVs, and refuses an incomplete or impossible set', () => {
    const s = ok(
      decodeSubmit(
        submitPdu({
          short_message: Buffer.from('x'),
          sar_msg_ref_num: 999,
          sar_total_segments: 4,
          sar_segment_seqnum: 4,
        }),
        now,
      ),
    );
    assert.deepEqual(s.concat, { ref: 999, total: 4, seq: 4 });
    assert.equal(refused(decodeSubmit(submitPdu({ sar_msg_ref_num: 1, sar_total_segments: 2 }), now)), SmppStatus.ESME_RMISSINGOPTPARAM);
    assert.equal(refused(decodeSubmit(submitPdu({ sar_msg_ref_num: 1, sar_total_segments: 2, sar_segment_seqnum: 3 }), now)), SmppStatus.ESME_RINVOPTPARAMVAL);
  });

  it('takes message_payload, and refuses it together with a short_message', () => {
    const payload = Buffer.alloc(300, 0x62);
    assert.deepEqual(ok(decodeSubmit(submitPdu({ message_payload: payload }), now)).payload, payload);
    assert.equal(refused(decodeSubmit(submitPdu({ message_payload: payload, short_message: Buffer.from('a') }), now)), SmppStatus.ESME_RINVMSGLEN);
  });

  it('refuses a UDH that runs past the message', () => {
    assert.equal(refused(decodeSubmit(submitPdu({ esm_class: 0x40, short_message: Buffer.from([9, 0, 3, 1, 2]) }), now)), SmppStatus.ESME_RINVMSGLEN);
  });

  it('parses schedule and validity times, and refuses bad ones with their own statuses', () => {
    const s = ok(decodeSubmit(submitPdu({ schedule_delivery_time: '260502120000000+', validity_period: '000001000000000R' }), now));
    assert.deepEqual(s.fields.scheduleAt, new Date('2026-05-02T12:00:00Z'));
    assert.deepEqual(s.fields.validUntil, new Date('2026-05-02T12:00:00Z'));
    assert.equal(ok(decodeSubmit(submitPdu({}), now)).fields.scheduleAt, null);
    assert.equal(refused(decodeSubmit(submitPdu({ schedule_delivery_time: '261302120000000+' }), now)), SmppStatus.ESME_RINVSCHED);
    const badValidity = submitPdu({ validity_period: 'tomorrow-please!' });
    assert.equal(refused(decodeSubmit(badValidity, now)), SmppStatus.ESME_RINVEXPIRY);
  });
});
