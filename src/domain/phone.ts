// Phone numbers: normalise what clients send to the MSISDN form the API uses (international digits, no '+'),
// and describe a number with Google's metadata (libphonenumber-js, full "max" set).
import parsePhoneNumber, { getCountries, getCountryCallingCode, isSupportedCountry } from 'libphonenumber-js/max';
import type { CountryCode, PhoneNumberType } from 'libphonenumber-js/max';

export type { CountryCode };

export type MsisdnRejection = 'EMPTY' | 'NOT_DIGITS' | 'TOO_SHORT' | 'TOO_LONG' | 'NATIONAL_WITHOUT_COUNTRY';

export type NormalisedMsisdn = { ok: true; msisdn: string } | { ok: false; reason: MsisdnRejection };

/** E.164 caps a number at 15 digits including the country code. */
export const MAX_MSISDN_DIGITS = 15;
/** Shorter than this (country code included) is no subscriber number anywhere we route to. */
export const MIN_MSISDN_DIGITS = 8;

// Digits with the separators people type: spaces, dashes, dots, slashes, parentheses; '+' only in front.
const WRITTEN_NUMBER = /^\+?[\d\s()./-]+$/;
// "+33 (0)6 …": the trunk prefix written in parentheses after the country code, not dialled internationally.
const TRUNK_ZERO_IN_PARENTHESES = /(\d[\s./-]*)\(\s*0\s*\)/;

/**
 * Accepts `33612345678`, `+33612345678`, `0033612345678`, `+33 6 12 34 56 78`, `+33 (0)6 12-34-56-78`, and a
 * national number with its leading trunk `0` (`0612345678`) when `defaultCountry` says whose it is.
 * Digits without `+`, `00` or a leading `0` are taken as international (the API's own form).
 * Checks the shape only; `describeNumber` says whether the number exists.
 */
export function normaliseMsisdn(input: string, opts: { defaultCountry?: CountryCode } = {}): NormalisedMsisdn {
  if (typeof input !== 'string') return { ok: false, reason: 'NOT_DIGITS' };
  const written = input.trim();
  if (written === '') return { ok: false, reason: 'EMPTY' };
  if (!WRITTEN_NUMBER.test(written)) return { ok: false, reason: 'NOT_DIGITS' };

  const plus = written.startsWith('+');
  const international = plus || /^0[\s()./-]*0/.test(written);
  const body = international ? written.replace(TRUNK_ZERO_IN_PARENTHESES, '$1') : written;
  let digits = body.replace(/\D/g, '');
  if (digits === '') return { ok: false, reason: 'NOT_DIGITS' };

  if (international) {
    if (!plus) digits = digits.slice(2);
    // No country code starts with 0: what follows the prefix is a national number.
    if (digits.startsWith('0')) return { ok: false, reason: 'NATIONAL_WITHOUT_COUNTRY' };
  } else if (digits.startsWith('0')) {
    const country = opts.defaultCountry;
    if (country === undefined || !isSupportedCountry(country)) return { ok: false, reason: 'NATIONAL_WITHOUT_COUNTRY' };
    digits = nationalToInternational(digits, country);
  }

  if (digits.length > MAX_MSISDN_DIGITS) return { ok: false, reason: 'TOO_LONG' };
  if (digits.length < MIN_MSISDN_DIGITS) return { ok: false, reason: 'TOO_SHORT' };
  return { ok: true, msisdn: digits };
}

// The trunk prefix is not always a bare '0' that goes away (Italy keeps it, some countries carry carrier codes),
// so the country's own metadata decides.
function nationalToInternational(nationalDigits: string, country: CountryCode): string {
  const parsed = parsePhoneNumber(nationalDigits, { defaultCountry: country });
  if (parsed) return parsed.countryCallingCode + parsed.nationalNumber;
  return getCountryCallingCode(country) + nationalDigits.replace(/^0/, '');
}

export type PhoneType =
  | 'MOBILE'
  | 'FIXED_LINE'
  | 'VOIP'
  | 'TOLL_FREE'
  | 'PREMIUM_RATE'
  | 'SHARED_COST'
  | 'PERSONAL_NUMBER'
  | 'PAGER'
  | 'UAN'
  | 'VOICEMAIL'
  | 'UNKNOWN';

export interface PhoneFormats {
  e164: string;
  international: string;
  national: string;
}

export interface PhoneDescription {
  valid: boolean;
  possible: boolean;
  /** null only when the digits could not be parsed at all; UNKNOWN when parsed but no range matches. */
  type: PhoneType | null;
  isoCountryCode: string | null;
  /** Country calling code as digits, e.g. "33". */
  countryPrefix: string | null;
  formats: PhoneFormats | null;
}

const UNPARSEABLE: PhoneDescription = Object.freeze({
  valid: false,
  possible: false,
  type: null,
  isoCountryCode: null,
  countryPrefix: null,
  formats: null,
});

/** Describes an MSISDN (international digits, no '+') with libphonenumber's full metadata. */
export function describeNumber(msisdn: string): PhoneDescription {
  if (typeof msisdn !== 'string' || !/^[1-9]\d{0,14}$/.test(msisdn)) return UNPARSEABLE;
  const parsed = parsePhoneNumber(`+${msisdn}`);
  if (!parsed) return UNPARSEABLE;

  const countryPrefix = parsed.countryCallingCode;
  const isoCountryCode = parsed.country ?? null;
  if (parsed.number !== `+${msisdn}`) {
    // libphonenumber repaired the digits (e.g. dropped a trunk 0 written after the country code: 330612345678).
    // We send the digits as given, and those are not a valid number.
    const national = msisdn.slice(countryPrefix.length);
    return {
      valid: false,
      possible: false,
      type: 'UNKNOWN',
      isoCountryCode,
      countryPrefix,
      formats: { e164: `+${msisdn}`, international: `+${countryPrefix} ${national}`, national },
    };
  }

  return {
    valid: parsed.isValid(),
    possible: parsed.isPossible(),
    type: phoneType(parsed.getType()),
    isoCountryCode,
    countryPrefix,
    formats: {
      e164: parsed.number,
      international: parsed.formatInternational(),
      national: parsed.formatNational(),
    },
  };
}

export interface NumberValidity {
  valid: boolean;
  isoCountryCode: string | null;
}

/**
 * What the send paths need of a number, without the type and the three formats `describeNumber` computes:
 * the same validity rule (the exact digits, not a repaired number) at a fraction of the cost.
 */
export function checkNumber(msisdn: string): NumberValidity {
  if (typeof msisdn !== 'string' || !/^[1-9]\d{0,14}$/.test(msisdn)) return { valid: false, isoCountryCode: null };
  const parsed = parsePhoneNumber(`+${msisdn}`);
  if (!parsed) return { valid: false, isoCountryCode: null };
  return { valid: parsed.number === `+${msisdn}` && parsed.isValid(), isoCountryCode: parsed.country ?? null };
}

// libphonenumber answers FIXED_LINE_OR_MOBILE only when the number matches the mobile pattern as well as the
// fixed-line one (US, CA, BR, CN, IN… publish overlapping ranges), so the range is mobile-capable by construction
// and an SMS may reach it: we call it MOBILE.
function phoneType(type: PhoneNumberType | undefined): PhoneType {
  if (type === undefined) return 'UNKNOWN';
  if (type === 'FIXED_LINE_OR_MOBILE') return 'MOBILE';
  return type;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
const countryNames = new Map<string, string>();

/** English name of an ISO 3166-1 alpha-2 region ("FR" → "France"); the code itself when none is known. */
export function countryName(iso: string): string {
  const code = iso.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) return code;
  let name = countryNames.get(code);
  if (name === undefined) {
    name = regionNames.of(code) ?? code;
    countryNames.set(code, name);
  }
  return name;
}

export interface NumberRange {
  valid: boolean;
  type: PhoneType | null;
  isoCountryCode: string | null;
  countryPrefix: string | null;
}

/**
 * What routing and delivery reports need of an MSISDN — validity, type and country — without the formats
 * `describeNumber` also computes (formatting is most of its cost).
 */
export function numberRange(msisdn: string): NumberRange {
  if (typeof msisdn !== 'string' || !/^[1-9]\d{0,14}$/.test(msisdn)) return { valid: false, type: null, isoCountryCode: null, countryPrefix: null };
  const parsed = parsePhoneNumber(`+${msisdn}`);
  if (!parsed) return { valid: false, type: null, isoCountryCode: null, countryPrefix: null };
  const exact = parsed.number === `+${msisdn}`;
  // A number with a type is valid (libphonenumber's validity is "has a type" wherever its metadata has types, and a
  // type implies the national pattern matched where it has none): only a number without one is asked again.
  const type = exact ? parsed.getType() : undefined;
  return {
    valid: exact && (type !== undefined || parsed.isValid()),
    type: exact ? phoneType(type) : 'UNKNOWN',
    isoCountryCode: parsed.country ?? null,
    countryPrefix: parsed.countryCallingCode,
  };
}

/** The country calling code a number in international digits starts with (`33` of `33612345678`); null if none fits. */
export function callingCodeOf(msisdn: string): string | null {
  if (!/^\d+$/.test(msisdn)) return null;
  for (let n = 1; n <= 3 && n < msisdn.length; n++) {
    const code = msisdn.slice(0, n);
    if (isCallingCode(code)) return code;
  }
  return null;
}

let callingCodes: Set<string> | null = null;
function isCallingCode(code: string): boolean {
  callingCodes ??= new Set(getCountries().map((c) => String(getCountryCallingCode(c))));
  return callingCodes.has(code);
}
