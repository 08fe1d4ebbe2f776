/**
 * Text of the legacy HTTP 1.6 interface. Its documented charset is ISO-8859-15: PHP clients send `caf%E9` for
 * "café" and `%A4` for "€". Clients written since send UTF-8, and `classe_msg=9` (Unicode) is UTF-8 by definition.
 * So a value is read as UTF-8 when the request says so (`charset=UTF-8`, `classe_msg=9`) or when its bytes are valid
 * UTF-8 with at least one multi-byte sequence; otherwise as ISO-8859-15.
 */
import { CoreError, fail } from '../../core/errors.ts';
import { unstorableText } from '../../domain/text-safety.ts';

/** Where ISO-8859-15 differs from Latin-1. */
const ISO_8859_15: Readonly<Record<number, string>> = {
  0xa4: '€',
  0xa6: 'Š',
  0xa8: 'š',
  0xb4: 'Ž',
  0xb8: 'ž',
  0xbc: 'Œ',
  0xbd: 'œ',
  0xbe: 'Ÿ',
  // Not ISO-8859-15 (a control character there), but the manual's character table lists %80 for "€" too.
  0x80: '€',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as ISO-8859-15 text. */
export function decodeIso885915(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += ISO_8859_15[b] ?? String.fromCharCode(b);
  return out;
}

/** Bytes as UTF-8 text, or null when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** How the values of a request are read. */
export type Charset =
  /** UTF-8 when the bytes are valid UTF-8 with a multi-byte sequence, else ISO-8859-15. */
  | 'auto'
  /** UTF-8; other bytes are an error. */
  | 'utf-8'
  | 'iso-8859-15'
  | 'iso-8859-1';

/** A charset name (a `charset` parameter, or the one of a Content-Type) as one Tern reads, or null when unknown. */
export function charsetNamed(name: string): Exclude<Charset, 'auto'> | null {
  const n = name.trim().toLowerCase().replace(/^"|"$/g, '');
  if (n === 'utf-8' || n === 'utf8') return 'utf-8';
  if (['iso-8859-15', 'iso8859-15', 'iso_8859-15', 'latin9', 'latin-9'].includes(n)) return 'iso-8859-15';
  if (['iso-8859-1', 'iso8859-1', 'iso_8859-1', 'latin1', 'latin-1'].includes(n)) return 'iso-8859-1';
  return null;
}

/**
 * One value's bytes as text. `field` names it in errors: bytes that are not UTF-8 where UTF-8 is required, and text
 * no store can keep (a NUL character).
 */
export function decodeValue(bytes: Uint8Array, charset: Charset, field: string, why = 'the request says UTF-8'): string {
  let text: string;
  if (charset === 'iso-8859-1') text = Buffer.from(bytes).toString('latin1');
  else if (charset === 'iso-8859-15') text = decodeIso885915(bytes);
  else if (charset === 'utf-8') {
    text = decodeUtf8(bytes) ?? fail('INVALID_REQUEST', `is not valid UTF-8 (${why})`, field);
  } else {
    const multiByte = bytes.some((b) => b >= 0x80);
    text = (multiByte ? decodeUtf8(bytes) : null) ?? decodeIso885915(bytes);
  }
  const problem = unstorableText(text);
  if (problem) fail('INVALID_REQUEST', problem, field);
  return text;
}

/** One `name=value` of a query string or form, still as bytes. */
export interface RawPair {
  name: Uint8Array;
  value: Uint8Array;
}

const PERCENT = 0x25;
const PLUS = 0x2b;
const SPACE = 0x20;

function hexDigit(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

/** `+` is a space and `%XX` a byte; a `%` not followed by two hex digits stands for itself. */
export function percentDecode(input: Uint8Array): Uint8Array {
  const out = new Uint8Array(input.length);
  let n = 0;
  for (let i = 0; i < input.length; i++) {
    const b = input[i]!;
    if (b === PLUS) out[n++] = SPACE;
    else if (b === PERCENT && i + 2 < input.length && hexDigit(input[i + 1]!) >= 0 && hexDigit(input[i + 2]!) >= 0) {
      out[n++] = hexDigit(input[i + 1]!) * 16 + hexDigit(input[i + 2]!);
      i += 2;
    } else out[n++] = b;
  }
  return out.subarray(0, n);
}

/** The pairs of an `application/x-www-form-urlencoded` text (a query string or a form body), in order. */
export function parseUrlEncoded(input: Uint8Array): RawPair[] {
  const out: RawPair[] = [];
  let start = 0;
  for (let i = 0; i <= input.length; i++) {
    if (i < input.length && input[i] !== 0x26) continue;
    const piece = input.subarray(start, i);
    start = i + 1;
    if (piece.length === 0) continue;
    const eq = piece.indexOf(0x3d);
    out.push(
      eq < 0
        ? { name: percentDecode(piece), value: new Uint8Array(0) }
        : { name: percentDecode(piece.subarray(0, eq)), value: percentDecode(piece.subarray(eq + 1)) },
    );
  }
  return out;
}

/** The bytes of an ASCII parameter's value (`charset`, `classe_msg`), as text. */
export function asciiOf(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('latin1');
}

/**
 * How a request's values are read: a `charset` parameter wins (UTF-8, ISO-8859-15 or ISO-8859-1; any other is an
 * error), then `classe_msg=9` (UTF-8), then `fallback` (a Content-Type's charset), else `auto`.
 */
export function requestCharset(params: { charset?: string; classe_msg?: string }, fallback: Charset = 'auto'): { charset: Charset; why: string } {
  const declared = params.charset?.trim();
  if (declared) {
    const named = charsetNamed(declared);
    if (!named) throw new CoreError('INVALID_REQUEST', `must be UTF-8, ISO-8859-15 or ISO-8859-1, got "${declared.slice(0, 40)}"`, 'charset');
    return { charset: named, why: `charset=${declared}` };
  }
  if (params.classe_msg?.trim() === '9') return { charset: 'utf-8', why: 'classe_msg=9 is Unicode text, sent in UTF-8' };
  return { charset: fallback, why: 'the Content-Type says UTF-8' };
}

/** The charsets an answer is written in. */
export type AnswerCharset = Exclude<Charset, 'auto'>;

/** The byte of each character ISO-8859-15 places where Latin-1 has another. */
const ISO_8859_15_BYTES: ReadonlyMap<string, number> = new Map(
  Object.entries(ISO_8859_15)
    .filter(([b]) => Number(b) >= 0xa0)
    .map(([b, c]) => [c, Number(b)]),
);
/** The Latin-1 characters ISO-8859-15 replaced: they have no byte there. */
const NOT_IN_ISO_8859_15 = new Set(Object.keys(ISO_8859_15).map((b) => String.fromCharCode(Number(b))));

/**
 * Text as the bytes of `charset`. A character the charset has no byte for becomes `?`, as the legacy API does for
 * text it cannot carry; a surrogate pair (an emoji) is one character, one `?`.
 */
export function encodeText(text: string, charset: AnswerCharset): Buffer {
  if (charset === 'utf-8') return Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (charset === 'iso-8859-15') {
      const special = ISO_8859_15_BYTES.get(ch);
      if (special !== undefined) out.push(special);
      else out.push(code <= 0xff && !NOT_IN_ISO_8859_15.has(ch) ? code : 0x3f);
    } else out.push(code <= 0xff ? code : 0x3f);
  }
  return Buffer.from(out);
}

/** The name of a charset in a Content-Type. */
export function charsetLabel(charset: AnswerCharset): string {
  return charset === 'utf-8' ? 'utf-8' : charset.toUpperCase();
}

/**
 * The charset of an answer: the request's `charset` parameter (an unknown one gets UTF-8, with the error that names
 * it), else the charset its form's Content-Type declares, else the operation's own.
 */
export function answerCharset(declared: string | undefined, contentType: AnswerCharset | null, operation: AnswerCharset): AnswerCharset {
  const named = declared?.trim() ? charsetNamed(declared) : undefined;
  if (named !== undefined) return named ?? 'utf-8';
  return contentType ?? operation;
}
