import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSmppText, encodeGsm7 } from '../../../src/domain/text.ts';
import { buildSubmitSms, type LongMessageMode, type OutboundSmsOptions, splitUnits } from '../../../src/protocols/smpp/outbound.ts';
import { decodePdu, encodePdu } from '../../../src/protocols/smpp/pdu.ts';
import { decodeSubmit } from '../../../src/protocols/smpp/submit.ts';

const options = (over: Partial<OutboundSmsOptions> = {}): OutboundSmsOptions => ({
  serviceType: '',
  source: { addr: 'Tern', ton: 5, npi: 0 },
  destination: { addr: '33612345678', ton: 1, npi: 1 },
  textDataCoding: 0,
  forceUnicode: false,
  longMessages: 'UDH8',
  registeredDelivery: 1,
  validityPeriod: '',
  reference: 0x1234,
  ...over,
});

/** Encodes the PDUs, decodes them as an SMSC would (Tern's own server-side decoder), and joins the text back. */
function roundTrip(fields: Array<Record<string, unknown>>): { text: string; octets: number[]; refs: Set<number>; seqs: number[]; codings: Set<number> } {
  const decoded = fields.map((f) => {
    const d = decodePdu(encodePdu('submit_sm', 1, 0, f));
    assert.ok(d.ok);
    const s = decodeSubmit(d.pdu, new Date());
    assert.ok(s.ok, !s.ok ? s.reason : '');
    return { s: s.submit, raw: d.pdu };
  });
  return {
    text: decoded.map((d) => decodeSmppText(d.s.payload, d.s.fields.dataCoding)).join(''),
    octets: decoded.map((d) => (d.raw.fields.short_message as Buffer).length),
    refs: new Set(decoded.map((d) => d.s.concat?.ref ?? -1)),
    seqs: decoded.map((d) => d.s.concat?.seq ?? 0),
    codings: new Set(decoded.map((d) => d.s.fields.dataCoding)),
  };
}

describe('buildSubmitSms', () => {
  it('sends a short GSM text in one submit_sm, data_coding 0, with the addresses and flags asked for', () => {
    const [f, ...rest] = buildSubmitSms('Hello [world] €', options());
    assert.equal(rest.length, 0);
    assert.deepEqual(f!.short_message, encodeGsm7('Hello [world] €'));
    assert.equal(f!.data_coding, 0);
    assert.equal(f!.esm_class, 0);
    assert.equal(f!.source_addr_ton, 5);
    assert.equal(f!.dest_addr_ton, 1);
    assert.equal(f!.registered_delivery, 1);
  });

  it('uses UCS-2 for what the operator’s alphabet cannot carry, and when the message asks for it', () => {
    assert.equal(buildSubmitSms('Zażółć', options())[0]!.data_coding, 8);
    assert.equal(buildSubmitSms('Hello', options({ forceUnicode: true }))[0]!.data_coding, 8);
    assert.equal(buildSubmitSms('Café', options({ textDataCoding: 3 }))[0]!.data_coding, 3);
    assert.deepEqual(buildSubmitSms('Café', options({ textDataCoding: 3 }))[0]!.short_message, Buffer.from('Café', 'latin1'));
    assert.equal(buildSubmitSms('Prix: 5 €', options({ textDataCoding: 3 }))[0]!.data_coding, 8, '€ is not in Latin-1');
    assert.equal(buildSubmitSms('Café', options({ textDataCoding: 1 }))[0]!.data_coding, 8, 'é is not in IA5');
  });

  it('splits 161 GSM characters in two 8-bit UDH parts of 153 and 8, and puts the whole text in message_payload when asked', () => {
    const text = 'a'.repeat(161);
    const parts = buildSubmitSms(text, options());
    assert.equal(parts.length, 2);
    assert.deepEqual((parts[0]!.short_message as Buffer).subarray(0, 6), Buffer.from([5, 0, 3, 0x34, 2, 1]));
    assert.equal((parts[0]!.short_message as Buffer).length, 6 + 153);
    const [payload, ...none] = buildSubmitSms(text, options({ longMessages: 'PAYLOAD' }));
    assert.equal(none.length, 0);
    assert.equal((payload!.short_message as Buffer).length, 0);
    assert.deepEqual(payload!.message_payload, encodeGsm7(text));
  });

  it('never splits an escape pair or a surrogate pair', () => {
    const gsm = splitUnits('a'.repeat(152) + '€b', { width: (u) => (u === 0x20ac ? 2 : 1) }, 153);
    assert.deepEqual(
      gsm.map((p) => p.length),
      [152, 2],
    );
    const ucs = splitUnits('a'.repeat(66) + '😀b', { width: () => 1 }, 67);
    assert.deepEqual(ucs, ['a'.repeat(66), '😀b']);
  });

  it('round-trips any text in every long-message mode and alphabet, within 140 octets a part', () => {
    const char = fc.oneof(
      fc.constantFrom(...'abcXYZ 019@£$¥èéùìòÇØøÅåΔ_ΦΓ{}[]~|€^\\\n'),
      fc.constantFrom(...'àâçœÿ¿¡ß'),
      fc.constantFrom('😀', '中', 'Ж', 'ą'),
    );
    fc.assert(
      fc.property(
        fc.array(char, { minLength: 0, maxLength: 700 }).map((a) => a.join('')),
        fc.constantFrom<LongMessageMode>('UDH8', 'UDH16', 'SAR', 'PAYLOAD'),
        fc.constantFrom<0 | 1 | 3>(0, 1, 3),
        fc.integer({ min: 0, max: 0xffff }),
        (text, mode, coding, reference) => {
          const fields = buildSubmitSms(text, options({ longMessages: mode, textDataCoding: coding, reference }));
          const r = roundTrip(fields);
          assert.equal(r.text, text);
          assert.equal(r.codings.size, 1, 'one alphabet for all parts');
          if (fields.length > 1) {
            assert.ok(
              r.octets.every((n) => n <= 140),
              `parts within 140 octets: ${r.octets.join(',')}`,
            );
            assert.equal(r.refs.size, 1);
            assert.deepEqual(
              r.seqs,
              fields.map((_, i) => i + 1),
            );
          }
          if (mode === 'PAYLOAD') assert.equal(fields.length, 1);
        },
      ),
      { seed: 2026, numRuns: 400 },
    );
  });
});
