/**
 * SMS text measured: GSM 03.38 (default alphabet + extension table) or UCS-2, length, part counting and splitting.
 * Pure, free of Node's APIs (the console counts with it too) and on the hot path: every table is built once at
 * module load. The byte forms SMPP carries are in text.ts.
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

export const ESC = 0x1b;

// GSM 03.38 default alphabet, indexed by septet. 0x1B is the escape to the extension table, not a character.
const GSM_BASIC: readonly string[] = [
  '@',
  '£',
  '$',
  '¥',
  'è',
  'é',
  'ù',
  'ì',
  'ò',
  'Ç',
  '\n',
  'Ø',
  'ø',
  '\r',
  'Å',
  'å',
  'Δ',
  '_',
  'Φ',
  'Γ',
  'Λ',
  'Ω',
  'Π',
  'Ψ',
  'Σ',
  'Θ',
  'Ξ',
  '',
  'Æ',
  'æ',
  'ß',
  'É',
  ' ',
  '!',
  '"',
  '#',
  '¤',
  '%',
  '&',
  "'",
  '(',
  ')',
  '*',
  '+',
  ',',
  '-',
  '.',
  '/',
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  ':',
  ';',
  '<',
  '=',
  '>',
  '?',
  '¡',
  'A',
  'B',
  'C',
  'D',
  'E',
  'F',
  'G',
  'H',
  'I',
  'J',
  'K',
  'L',
  'M',
  'N',
  'O',
  'P',
  'Q',
  'R',
  'S',
  'T',
  'U',
  'V',
  'W',
  'X',
  'Y',
  'Z',
  'Ä',
  'Ö',
  'Ñ',
  'Ü',
  '§',
  '¿',
  'a',
  'b',
  'c',
  'd',
  'e',
  'f',
  'g',
  'h',
  'i',
  'j',
  'k',
  'l',
  'm',
  'n',
  'o',
  'p',
  'q',
  'r',
  's',
  't',
  'u',
  'v',
  'w',
  'x',
  'y',
  'z',
  'ä',
  'ö',
  'ñ',
  'ü',
  'à',
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
export const SEPTETS = new Uint8Array(0x10000);
/** UTF-16 code unit → its septet (in the basic or the extension table, as SEPTETS says). */
export const SEPTET_OF = new Uint8Array(0x10000);
/** Septet → character, for decoding (0x1B and codes ≥ 0x80 are handled apart). */
export const BASIC_CHAR: string[] = [...GSM_BASIC];
/** Septet after ESC → character. Codes without an extension character show the basic one (3GPP 23.038 §6.2.1.1). */
export const EXTENSION_CHAR: string[] = [...GSM_BASIC];

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

export function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

export function isLowSurrogate(unit: number): boolean {
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
