import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 10 base62 characters: about 59 bits, drawn without bias, so a code cannot be guessed or walked. */
export const SHORT_CODE_LENGTH = 10;
const CODE = new RegExp(`^[0-9A-Za-z]{${SHORT_CODE_LENGTH}}$`);
/** An http(s) URL up to the next space; punctuation that usually ends a sentence is left out of it. */
const URL_IN_TEXT = /https?:\/\/[^\s<>"]+/gi;
const TRAILING = /[.,;:!?)\]}'»]+$/;

export function newShortCode(): string {
  let out = '';
  while (out.length < SHORT_CODE_LENGTH) {
    for (const b of randomBytes(16)) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (b < 248 && out.length < SHORT_CODE_LENGTH) out += BASE62[b % 62];
    }
  }
  return out;
}

export function isShortCode(value: string): boolean {
  return CODE.test(value);
}

export interface ShortenedLink {
  code: string;
  url: string;
}

/**
 * Replaces each http(s) URL of `text` longer than its short link by `base` + a new code; answers the new text and
 * the links made, in order. A URL repeated in the text gets one link.
 */
export function shortenUrls(text: string, base: string, newCode: () => string = newShortCode): { text: string; links: ShortenedLink[] } {
  const links: ShortenedLink[] = [];
  const byUrl = new Map<string, string>();
  const shortLength = base.length + SHORT_CODE_LENGTH;
  const out = text.replace(URL_IN_TEXT, (match) => {
    const url = match.replace(TRAILING, '');
    const rest = match.slice(url.length);
    if (url.length <= shortLength || url.startsWith(base)) return match;
    let code = byUrl.get(url);
    if (code === undefined) {
      code = newCode();
      byUrl.set(url, code);
      links.push({ code, url });
    }
    return `${base}${code}${rest}`;
  });
  return { text: out, links };
}
