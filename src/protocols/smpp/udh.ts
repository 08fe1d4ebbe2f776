/**
 * User Data Header (3GPP 23.040 §9.2.3.24) for concatenated SMS, and splitting a text into SMPP short_messages.
 */
import { analyseText, encodeSmppText, TextError, type TextEncoding } from '../../domain/text.ts';

const IE_CONCAT_8BIT = 0x00;
const IE_CONCAT_16BIT = 0x08;
const MAX_CONCAT_PARTS = 255;

export interface ConcatInfo {
  ref: number;
  total: number;
  seq: number;
  wide16bit: boolean;
}

export interface ParsedUdh {
  /** Octets the header takes at the start of the user data, its length octet included. */
  headerLength: number;
  concat?: ConcatInfo;
  /** A concatenation IE was there but numbered impossibly (total or sequence 0, sequence past the total). */
  invalidConcat?: true;
}

export class UdhError extends Error {
  override readonly name = 'UdhError';
}

export interface SmppPart {
  udh?: Buffer;
  bytes: Buffer;
  dataCoding: 0 | 8;
}

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
}

/**
 * A whole UDH (length octet first) holding one concatenation IE: 8-bit reference (IE 0x00, 6 octets) or
 * 16-bit reference (IE 0x08, 7 octets).
 */
export function buildConcatUdh(ref: number, total: number, seq: number, wide16bit = false): Buffer {
  checkInteger('Concatenation reference', ref, 0, wide16bit ? 0xffff : 0xff);
  checkInteger('Part total', total, 1, MAX_CONCAT_PARTS);
  checkInteger('Part sequence', seq, 1, total);
  if (wide16bit) return Buffer.from([0x06, IE_CONCAT_16BIT, 0x04, ref >>> 8, ref & 0xff, total, seq]);
  return Buffer.from([0x05, IE_CONCAT_8BIT, 0x03, ref, total, seq]);
}

/**
 * Reads the UDH at the start of `buf` (user data with UDHI set). Other IEs are skipped; a concatenation IE whose
 * total or sequence is 0, or whose sequence exceeds the total, is ignored as 23.040 says, and flagged
 * (`invalidConcat`) for readers that refuse it. Throws `UdhError` when
 * the header or an IE runs past its bounds, or a concatenation IE has the wrong length.
 */
export function parseUdh(buf: Uint8Array): ParsedUdh {
  if (buf.length === 0) throw new UdhError('UDH is empty: no header length octet');
  const udhl = buf[0]!;
  const headerLength = udhl + 1;
  if (headerLength > buf.length) {
    throw new UdhError(`UDH length ${udhl} runs past the ${buf.length - 1} octets that follow it`);
  }
  const result: ParsedUdh = { headerLength };
  let i = 1;
  while (i < headerLength) {
    if (i + 2 > headerLength) throw new UdhError(`Truncated information element at offset ${i}`);
    const iei = buf[i]!;
    const iedl = buf[i + 1]!;
    const data = i + 2;
    if (data + iedl > headerLength) {
      throw new UdhError(`Information element 0x${iei.toString(16)} at offset ${i} runs past the header`);
    }
    if (iei === IE_CONCAT_8BIT || iei === IE_CONCAT_16BIT) {
      const wide16bit = iei === IE_CONCAT_16BIT;
      const expected = wide16bit ? 4 : 3;
      if (iedl !== expected) {
        throw new UdhError(`Concatenation IE 0x0${iei} has length ${iedl}, expected ${expected}`);
      }
      const ref = wide16bit ? (buf[data]! << 8) | buf[data + 1]! : buf[data]!;
      const total = buf[data + expected - 2]!;
      const seq = buf[data + expected - 1]!;
      // The last valid occurrence wins (23.040 §9.2.3.24: repeated IEs, the last one is used).
      if (total > 0 && seq > 0 && seq <= total) result.concat = { ref, total, seq, wide16bit };
      else result.invalidConcat = true;
    }
    i = data + iedl;
  }
  return result;
}

/**
 * The short_messages that carry a text over SMPP: one without UDH when it fits a single part, else one per
 * `analyseText` part with an 8-bit-reference concatenation UDH (`ref` is reduced to its low 8 bits). `encoding`
 * forces one; undefined picks as `analyseText` does. Throws `TextError` for GSM7 forced on non-GSM text or for more
 * than 255 parts (the UDH cannot number them).
 */
export function splitForSmpp(text: string, encoding: TextEncoding | undefined, ref: number): SmppPart[] {
  const analysis = analyseText(text, encoding);
  if (analysis.messagePartCount === 1) {
    const { dataCoding, bytes } = encodeSmppText(text, analysis.encoding);
    return [{ bytes, dataCoding }];
  }
  const total = analysis.messagePartCount;
  if (total > MAX_CONCAT_PARTS) {
    throw new TextError('TOO_MANY_PARTS', `Text needs ${total} parts; a concatenated SMS has at most ${MAX_CONCAT_PARTS}`);
  }
  const ref8 = ref & 0xff;
  return analysis.parts.map((part, index) => {
    const { dataCoding, bytes } = encodeSmppText(part, analysis.encoding);
    return { udh: buildConcatUdh(ref8, total, index + 1), bytes, dataCoding };
  });
}
