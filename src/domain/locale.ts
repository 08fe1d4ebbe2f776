/**
 * Where an organisation is: the country its clients' national numbers belong to, and the time zone in which dates
 * written without an offset are read.
 */
import { isSupportedCountry } from 'libphonenumber-js/max';
import type { CountryCode } from './phone.ts';

export const DEFAULT_TIME_ZONE = 'Europe/Paris';

export interface Locale {
  /** National numbers (`0611223344`) are read in this country; null: numbers must be international. */
  defaultCountry: CountryCode | null;
  /** IANA name of the time zone of dates written without an offset. */
  timeZone: string;
}

export const DEFAULT_LOCALE: Locale = Object.freeze({ defaultCountry: null, timeZone: DEFAULT_TIME_ZONE });

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** An ISO 3166 alpha-2 code (any case; answered in upper case) of a country whose numbering plan is known. */
export function checkCountry(value: string): Checked<CountryCode> {
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) return { ok: false, reason: `"${value}" is not an ISO 3166 alpha-2 country code, e.g. FR` };
  if (!isSupportedCountry(code)) return { ok: false, reason: `"${value}" is not a country with a known numbering plan` };
  return { ok: true, value: code };
}

/** An IANA time zone name (`Europe/Paris`, `America/New_York`, `UTC`), answered in its canonical spelling. */
export function checkTimeZone(value: string): Checked<string> {
  const name = value.trim();
  const invalid = { ok: false, reason: `"${value}" is not an IANA time zone name, e.g. Europe/Paris` } as const;
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return invalid;
  try {
    return { ok: true, value: new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone };
  } catch {
    return invalid;
  }
}
