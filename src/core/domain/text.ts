/**
 * SMS text codec: GSM 03.38 (default alphabet + extension table) or UCS-2, part counting and splitting, and the
 * byte forms SMPP carries. Pure and on the hot path: every table is built once at module load.
 */

export type TextEncoding = 'GSM7' | 'UNICODE';

export interface TextAnalysis {
  encoding: TextEncoding;
  /** Septets for GSM7 (extension characters count 2), UTF-16 code units for UNICODE. */
  length: number;
  messagePartCount: number;
  /** The exact substring carried by each part; their concatenation is the text. */
  parts: string[];
}

export type TextErrorCode = 'NOT_GSM7' | 'UNKNOWN_ENCODING' | 'TOO_MANY_PARTS';

/** Bad text or options from a client: the API answers it with a 400. */
export class TextError extends Error {
  override readonly name = 'TextError';
  readonly code: TextErrorCode;

  constructor(code: TextErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const MAX_MESSAGE_PARTS = 10;

/** Units per part: a lone message, and each part of a concatenated one (the 6-octet concat UDH takes the rest). */
export const PART_LIMITS: Readonly<Record<TextEncoding, { single: number; multi: number }>> = {
  GSM7: { single: 160, multi: 153 },
  UNICODE: { single: 70, multi: 67 },
};

const GSM7_SINGLE = PART_LIMITS.GSM7.single;
const GSM7_MULTI = PART_LIMITS.GSM7.multi;
const UCS2_SINGLE = PART_LIMITS.UNICODE.single;
const UCS2_MULTI = PART_LIMITS.UNICODE.multi;

const ESC = 0x1b;
const QUESTION_MARK = 0x3f;

// GSM 03.38 default alphabet, indexed by septet. 0x1B is the escape to the extension table, not a character.
const GSM_BASIC: readonly string[] = [
  '@', '£', '$', '¥', 'è', 'é', 'ù', 'ì', 'ò', 'Ç', '\n', 'Ø', 'ø', '\r', 'Å', 'å',
  'Δ', '_', 'Φ', 'Γ', 'Λ', 'Ω', 'Π', 'Ψ', 'Σ', 'Θ', 'Ξ', '', 'Æ', 'æ', 'ß', 'É',
  ' ', '!', '"', '#', '¤', '%', '&', "'", '(', ')', '*', '+', ',', '-', '.', '/',
  '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', ';', '<', '=', '>', '?',
  '¡', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O',
  'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'Ä', 'Ö', 'Ñ', 'Ü', '§',
  '¿', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
  'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'ä', 'ö', 'ñ', 'ü', 'à',
];

// Extension table: septet after ESC → character.
const GSM_EXTENSION: ReadonlyArray<readonly [number, string]> = [
  [0x0a, '\f'],
  [0x14, '^'],
  [0x28, '{'],
  [0x29, '}'],
  [0x2f, '\\'],
  [0x3c, '['],
  [0x3d, '~'],
  [0x3e, ']'],
  [0x40, '|'],
  [0x65, '€'],
];

/** UTF-16 code unit → septets it takes in GSM-7 (1 or 2); 0 when the unit is not in GSM-7. */
const SEPTETS = new Uint8Array(0x10000);
/** UTF-16 code unit → its septet (in the basic or the extension table, as SEPTETS says). */
const SEPTET_OF = new Uint8Array(0x10000);
/** Septet → character, for decoding (0x1B and codes ≥ 0x80 are handled apart). */
const BASIC_CHAR: string[] = [...GSM_BASIC];
/** Septet after ESC → character. Codes without an extension character show the basic one (3GPP 23.038 §6.2.1.1). */
const EXTENSION_CHAR: string[] = [...GSM_BASIC];

for (let code = 0; code < 0x80; code++) {
  if (code === ESC) continue;
  const unit = GSM_BASIC[code]!.charCodeAt(0);
  SEPTETS[unit] = 1;
  SEPTET_OF[unit] = code;
}
for (const [code, char] of GSM_EXTENSION) {
  const unit = char.charCodeAt(0);
  SEPTETS[unit] = 2;
  SEPTET_OF[unit] = code;
  EXTENSION_CHAR[code] = char;
}
// ESC ESC is reserved for a further extension table; 23.038 says to show a space meanwhile.
EXTENSION_CHAR[ESC] = ' ';

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Septets the text takes in GSM-7, or -1 when some character is not in GSM-7. */
export function gsm7Length(text: string): number {
  let septets = 0;
  for (let i = 0; i < text.length; i++) {
    const w = SEPTETS[text.charCodeAt(i)]!;
    if (w === 0) return -1;
    septets += w;
  }
  return septets;
}

export function isGsm7(text: string): boolean {
  return gsm7Length(text) >= 0;
}

/** The distinct characters (whole code points) of the text that GSM-7 cannot carry, in order of appearance. */
export function nonGsm7Characters(text: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (SEPTETS[unit] !== 0) continue;
    if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(i + 1))) {
      found.add(text.slice(i, i + 2));
      i++;
    } else {
      found.add(text[i]!);
    }
  }
  return [...found];
}

function describeCharacter(char: string): string {
  const cp = char.codePointAt(0)!;
  return `'${char}' (U+${cp.toString(16).toUpperCase().padStart(4, '0')})`;
}

/**
 * Encoding, length and parts of a text. GSM7 when every character is in GSM 03.38, else UNICODE (UCS-2);
 * `force` imposes one (GSM7 on a text it cannot carry throws `TextError` NOT_GSM7). An extension character's
 * escape pair and a surrogate pair are never split across parts, so such a part carries one unit less.
 * Does not enforce MAX_MESSAGE_PARTS: see `exceedsPartLimit`.
 */
export function analyseText(text: string, force?: TextEncoding): TextAnalysis {
  if (force !== undefined && force !== 'GSM7' && force !== 'UNICODE') {
    throw new TextError('UNKNOWN_ENCODING', `Unknown encoding '${String(force)}': expected GSM7 or UNICODE`);
  }
  if (force !== 'UNICODE') {
    const septets = gsm7Length(text);
    if (septets >= 0) return analyseGsm7(text, septets);
    if (force === 'GSM7') {
      const chars = nonGsm7Characters(text);
      const shown = chars.slice(0, 5).map(describeCharacter).join(', ');
      const more = chars.length > 5 ? ` and ${chars.length - 5} more` : '';
      throw new TextError('NOT_GSM7', `Text cannot be encoded in GSM7: ${shown}${more} not in the GSM 03.38 alphabet`);
    }
  }
  return analyseUcs2(text);
}

function analyseGsm7(text: string, septets: number): TextAnalysis {
  if (septets <= GSM7_SINGLE) {
    return { encoding: 'GSM7', length: septets, messagePartCount: 1, parts: [text] };
  }
  const parts: string[] = [];
  let start = 0;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const w = SEPTETS[text.charCodeAt(i)]!;
    if (used + w > GSM7_MULTI) {
      parts.push(text.slice(start, i));
      start = i;
      used = 0;
    }
    used += w;
  }
  parts.push(text.slice(start));
  return { encoding: 'GSM7', length: septets, messagePartCount: parts.length, parts };
}

function analyseUcs2(text: string): TextAnalysis {
  const n = text.length;
  if (n <= UCS2_SINGLE) {
    return { encoding: 'UNICODE', length: n, messagePartCount: 1, parts: [text] };
  }
  const parts: string[] = [];
  let start = 0;
  while (n - start > UCS2_MULTI) {
    let end = start + UCS2_MULTI;
    if (isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end--;
    parts.push(text.slice(start, end));
    start = end;
  }
  parts.push(text.slice(start));
  return { encoding: 'UNICODE', length: n, messagePartCount: parts.length, parts };
}

export function exceedsPartLimit(analysis: Pick<TextAnalysis, 'messagePartCount'>): boolean {
  return analysis.messagePartCount > MAX_MESSAGE_PARTS;
}

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
