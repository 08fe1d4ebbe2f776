/**
 * Guards against traffic pumping (messages sent to numbers whose operators share the revenue with the fraudster):
 * which destination countries an organisation may send to, and how many one-time passwords may go to one range of
 * numbers in a window. Pure rules; the use case (src/core/fraud) applies them at accept.
 */
import { checkCountry } from './locale.ts';

/** Every destination country (an organisation's own list may say so). */
export const ANY_COUNTRY = '*';

/** Which destination countries an organisation may send to: any, or only these. */
export type CountryPolicy = { any: true } | { any: false; countries: ReadonlySet<string> };

/**
 * The countries an organisation may send to: its own list when it has one (`*` for any); else, when it has a default
 * country, that country and the server's list; else no guard at all (null), so traffic of organisations that never
 * said where they are is not blocked.
 */
export function countryPolicy(own: readonly string[] | null, defaultCountry: string | null, serverList: readonly string[]): CountryPolicy | null {
  if (own !== null) return own.includes(ANY_COUNTRY) ? { any: true } : { any: false, countries: new Set(own) };
  if (defaultCountry === null) return null;
  return { any: false, countries: new Set([defaultCountry, ...serverList]) };
}

/** Whether a message to a number of `country` (null: no known country) may go. */
export function countryAllowed(policy: CountryPolicy | null, country: string | null): boolean {
  if (policy === null || policy.any) return true;
  return country !== null && policy.countries.has(country);
}

/** The countries of a policy as an answer lists them: `["*"]` for any, sorted codes otherwise. */
export function policyCountries(policy: CountryPolicy): string[] {
  return policy.any ? [ANY_COUNTRY] : [...policy.countries].sort();
}

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A list of ISO 3166 alpha-2 codes (any case), or `*` alone; answered in upper case, without repeats. */
export function checkCountryList(list: readonly string[]): Checked<string[]> {
  if (list.length === 0) return { ok: false, reason: 'at least one country, or * for every country' };
  if (list.includes(ANY_COUNTRY)) {
    return list.length === 1 ? { ok: true, value: [ANY_COUNTRY] } : { ok: false, reason: '* (every country) stands alone' };
  }
  const out: string[] = [];
  for (const c of list) {
    const checked = checkCountry(c);
    if (!checked.ok) return checked;
    if (!out.includes(checked.value)) out.push(checked.value);
  }
  return { ok: true, value: out };
}

/** `TERN_ALLOWED_COUNTRIES`: comma-separated codes (empty: none). Throws an Error saying what is wrong. */
export function parseCountryList(text: string): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return [];
  if (items.includes(ANY_COUNTRY)) throw new Error('list countries (e.g. BE,LU); * is for an organisation of its own');
  const checked = checkCountryList(items);
  if (!checked.ok) throw new Error(checked.reason);
  return checked.value;
}

/**
 * At most `limit` one-time passwords in `windowSeconds` to one range of numbers, among the numbers that start with
 * `prefix` (empty: every number). With `rangeDigits` each block of numbers that differ only in their last
 * `rangeDigits` digits is a range of its own (3: blocks of 1,000 consecutive numbers; 0: each number); without it,
 * the numbers of the prefix are counted together.
 */
export interface VelocityLimit {
  prefix: string;
  rangeDigits: number | null;
  limit: number;
  windowSeconds: number;
}

export const VELOCITY_BOUNDS = {
  prefixDigits: 15,
  rangeDigits: 12,
  limit: 1_000_000,
  windowSeconds: 86_400,
  /** Limits of one organisation. */
  count: 50,
} as const;

/** Why a velocity limit is unusable, about which of its fields; null when it is fine. */
export function velocityLimitProblem(l: VelocityLimit): { field: string; reason: string } | null {
  if (!/^\d*$/.test(l.prefix) || l.prefix.length > VELOCITY_BOUNDS.prefixDigits) {
    return { field: 'prefix', reason: `digits of the international number (at most ${VELOCITY_BOUNDS.prefixDigits}), or "" for every number` };
  }
  if (l.rangeDigits !== null && (!Number.isInteger(l.rangeDigits) || l.rangeDigits < 0 || l.rangeDigits > VELOCITY_BOUNDS.rangeDigits)) {
    return { field: 'rangeDigits', reason: `a whole number from 0 to ${VELOCITY_BOUNDS.rangeDigits}` };
  }
  if (l.rangeDigits === null && l.prefix === '') return { field: 'rangeDigits', reason: 'is required when prefix is "" (every number would be one range)' };
  if (!Number.isInteger(l.limit) || l.limit < 1 || l.limit > VELOCITY_BOUNDS.limit)
    return { field: 'limit', reason: `a whole number from 1 to ${VELOCITY_BOUNDS.limit}` };
  if (!Number.isInteger(l.windowSeconds) || l.windowSeconds < 1 || l.windowSeconds > VELOCITY_BOUNDS.windowSeconds) {
    return { field: 'windowSeconds', reason: `a whole number of seconds from 1 to ${VELOCITY_BOUNDS.windowSeconds}` };
  }
  return null;
}

/**
 * The range a number counts in under a limit (the digits the numbers of the range share), or null when the limit is
 * not about that number.
 */
export function velocityRange(recipient: string, l: VelocityLimit): string | null {
  if (!recipient.startsWith(l.prefix)) return null;
  if (l.rangeDigits === null) return l.prefix;
  return recipient.slice(0, Math.max(l.prefix.length, recipient.length - l.rangeDigits));
}

/** A range as people read it: its shared digits, then an `x` for each digit that varies (`33612345xxx`). */
export function describeRange(range: string, l: VelocityLimit): string {
  return l.rangeDigits === null ? `${range}…` : `${range}${'x'.repeat(l.rangeDigits)}`;
}

/** A limit in the form of `TERN_VELOCITY_LIMITS`: `[prefix|*][/rangeDigits]=limit/windowSeconds s`. */
export function formatVelocityLimit(l: VelocityLimit): string {
  return `${l.prefix === '' ? '*' : l.prefix}${l.rangeDigits === null ? '' : `/${l.rangeDigits}`}=${l.limit}/${l.windowSeconds}s`;
}

const WINDOW_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600 };

// `TERN_VELOCITY_LIMITS`: comma-separated limits `PREFIX[/RANGE_DIGITS]=LIMIT/WINDOW`, PREFIX digits or `*` (every
// number), WINDOW a number of seconds, minutes or hours (`s`, `m`, `h`): `*/3=20/1m` is 20 a minute to each block of
// 1,000 numbers, `2348=50/1h` 50 an hour to all numbers starting 2348. Empty: none. Throws an Error saying what is
// wrong.
export function parseVelocityLimits(text: string): VelocityLimit[] {
  const out: VelocityLimit[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(\*|\d{1,15})(?:\/(\d{1,2}))?=(\d{1,7})\/(\d{1,5})(s|m|h)$/.exec(part);
    if (!m) throw new Error(`"${part}" is not PREFIX[/RANGE_DIGITS]=LIMIT/WINDOW (e.g. */3=20/1m)`);
    const l: VelocityLimit = {
      prefix: m[1] === '*' ? '' : m[1]!,
      rangeDigits: m[2] === undefined ? null : Number(m[2]),
      limit: Number(m[3]),
      windowSeconds: Number(m[4]) * WINDOW_UNITS[m[5]!]!,
    };
    const problem = velocityLimitProblem(l);
    if (problem) throw new Error(`"${part}": ${problem.field}: ${problem.reason}`);
    out.push(l);
  }
  if (out.length > VELOCITY_BOUNDS.count) throw new Error(`at most ${VELOCITY_BOUNDS.count} limits`);
  return out;
}
