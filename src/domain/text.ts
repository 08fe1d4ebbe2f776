/**
 * SMS text codec: the byte forms SMPP carries (GSM-7 septets, packed or not, and UCS-2). Measuring a text (encoding,
 * length, parts) is in text-length.ts, re-exported here.
 */
import { BASIC_CHAR, ESC, EXTENSION_CHAR, isHighSurrogate, isLowSurrogate, SEPTET_OF, SEPTETS, type TextEncoding } from './text-length.ts';

export {
  analyseText,
  exceedsPartLimit,
  gsm7Length,
  isGsm7,
  MAX_MESSAGE_PARTS,
  nonGsm7Characters,
  PART_LIMITS,
  type TextAnalysis,
  type TextEncoding,
  TextError,
  type TextErrorCode,
} from './text-length.ts';

const QUESTION_MARK = 0x3f;

/**
 * GSM-7 as SMPP data_coding 0 carries it: one septet per octet, extension characters as 0x1B + code.
 * Characters outside GSM-7 become '?' (a surrogate pair gives one '?'); check with `isGsm7` first when that matters.
 */
export function encodeGsm7(text: string): Buffer {
  const out = Buffer.allocUnsafe(text.length * 2);
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const w = SEPTETS[unit]!;
    if (w === 1) {
      out[o++] = SEPTET_OF[unit]!;
    } else if (w === 2) {
      out[o++] = ESC;
      out[o++] = SEPTET_OF[unit]!;
    } else {
      out[o++] = QUESTION_MARK;
      if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(i + 1))) i++;
    }
  }
  return out.subarray(0, o);
}

/** Unpacked GSM-7 (one septet per octet). Octets ≥ 0x80 become '?'; a lone trailing ESC is dropped. */
export function decodeGsm7(buf: Uint8Array): string {
  let text = '';
  for (let i = 0; i < buf.length; i++) {
    const code = buf[i]!;
    if (code === ESC) {
      if (i + 1 >= buf.length) break;
      const next = buf[++i]!;
      text += next < 0x80 ? EXTENSION_CHAR[next]! : '?';
    } else {
      text += code < 0x80 ? BASIC_CHAR[code]! : '?';
    }
  }
  return text;
}

/**
 * Packs septets (one per octet, low 7 bits used) into octets, least significant bit first as 3GPP 23.038 §6.1.2.1.
 * `fillBits` (0–6) zero bits come first, to align the text on a septet boundary after a UDH.
 */
export function packSeptets(septets: Uint8Array, fillBits = 0): Buffer {
  checkFillBits(fillBits);
  const totalBits = fillBits + septets.length * 7;
  const out = Buffer.alloc(Math.ceil(totalBits / 8));
  let bit = fillBits;
  for (let i = 0; i < septets.length; i++) {
    const value = septets[i]! & 0x7f;
    const byte = bit >>> 3;
    const shift = bit & 7;
    out[byte] |= (value << shift) & 0xff;
    if (shift > 1) out[byte + 1] |= value >>> (8 - shift);
    bit += 7;
  }
  return out;
}

/** Reverse of `packSeptets`: reads `count` septets after `fillBits` leading bits, one per output octet. */
export function unpackSeptets(buf: Uint8Array, count: number, fillBits = 0): Buffer {
  checkFillBits(fillBits);
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`Septet count must be a non-negative integer, got ${count}`);
  const available = Math.floor((buf.length * 8 - fillBits) / 7);
  if (count > available) {
    throw new RangeError(`${buf.length} octets with ${fillBits} fill bits hold ${Math.max(available, 0)} septets, not ${count}`);
  }
  const out = Buffer.allocUnsafe(count);
  let bit = fillBits;
  for (let i = 0; i < count; i++) {
    const byte = bit >>> 3;
    const shift = bit & 7;
    let value = buf[byte]! >>> shift;
    if (shift > 1) value |= buf[byte + 1]! << (8 - shift);
    out[i] = value & 0x7f;
    bit += 7;
  }
  return out;
}

function checkFillBits(fillBits: number): void {
  if (!Number.isInteger(fillBits) || fillBits < 0 || fillBits > 6) {
    throw new RangeError(`Fill bits must be an integer from 0 to 6, got ${fillBits}`);
  }
}

/** UCS-2 big-endian, as data_coding 8 carries it; surrogate pairs are kept as they are (UTF-16). */
export function encodeUcs2(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

/** Big-endian UTF-16 to text; a trailing odd octet is dropped. The input is not modified. */
export function decodeUcs2(buf: Uint8Array): string {
  const even = buf.length & ~1;
  const copy = Buffer.allocUnsafe(even);
  copy.set(buf.subarray(0, even));
  return copy.swap16().toString('utf16le');
}

function decodeLatin1(buf: Uint8Array): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
}

type Alphabet = 'GSM7' | 'LATIN1' | 'UCS2';

/**
 * Which alphabet an SMPP data_coding value means. 0x00–0x0F are SMPP 3.4's own values; above that the octet is the
 * 3GPP 23.038 data coding scheme (general, message waiting and message class groups), read for its alphabet bits.
 */
function alphabetOf(dataCoding: number): Alphabet {
  switch (dataCoding) {
    case 0x00:
      return 'GSM7';
    case 0x01: // IA5: ASCII is a subset of Latin-1, and some peers send Latin-1 under this label anyway
    case 0x02: // octet unspecified (8-bit binary)
    case 0x03: // Latin-1
    case 0x04: // octet unspecified (8-bit binary)
      return 'LATIN1';
    case 0x08:
      return 'UCS2';
  }
  if (dataCoding >= 0x10 && dataCoding <= 0x7f) {
    const bits = (dataCoding >>> 2) & 0x03;
    return bits === 1 ? 'LATIN1' : bits === 2 ? 'UCS2' : 'GSM7';
  }
  if (dataCoding >= 0xe0 && dataCoding <= 0xef) return 'UCS2';
  if (dataCoding >= 0xf0 && dataCoding <= 0xff) return dataCoding & 0x04 ? 'LATIN1' : 'GSM7';
  return 'GSM7';
}

/**
 * short_message octets (without UDH) to text. data_coding 0 GSM-7 unpacked, 1 IA5, 3 Latin-1, 8 UCS-2 big-endian,
 * 2 and 4 (binary) as Latin-1 so nothing is lost; 3GPP 23.038 coding groups by their alphabet; anything else as
 * GSM-7 unpacked.
 */
export function decodeSmppText(buf: Uint8Array, dataCoding: number): string {
  switch (alphabetOf(dataCoding)) {
    case 'LATIN1':
      return decodeLatin1(buf);
    case 'UCS2':
      return decodeUcs2(buf);
    case 'GSM7':
      return decodeGsm7(buf);
  }
}

/** Text to short_message octets and the data_coding that labels them (0 SMSC default = GSM-7, 8 UCS-2). */
export function encodeSmppText(text: string, encoding: TextEncoding): { dataCoding: 0 | 8; bytes: Buffer } {
  return encoding === 'GSM7' ? { dataCoding: 0, bytes: encodeGsm7(text) } : { dataCoding: 8, bytes: encodeUcs2(text) };
}
