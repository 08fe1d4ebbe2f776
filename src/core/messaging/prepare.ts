/**
 * The checks every message type makes of what it is sent with, whatever its body: the recipient, the sender ID, the
 * client's reference, the callbacks and the send time.
 */
import { instantOfRequestedDate, type RequestedDate } from '../../domain/dates.ts';
import type { Locale } from '../../domain/locale.ts';
import type { OptOutSettings } from '../../domain/opt-out.ts';
import { type CountryCode, normaliseMsisdn } from '../../domain/phone.ts';
import type { PriceList } from '../../domain/pricing.ts';
import { callbackUrlProblem } from '../../domain/urls.ts';
import type { Channel } from '../../store/channels.ts';
import { fail } from '../errors.ts';
import type { SenderRegistry } from '../tenancy/senders.ts';

export const MAX_SENDER_LENGTH = 11;
export const MAX_REF_CLIENT_LENGTH = 140;
const MAX_SCHEDULE_AHEAD_MS = 10 * 366 * 86_400_000;

export type MessageSource = 'REST' | 'SMPP' | 'LEGACY' | 'CAMPAIGN' | 'FALLBACK';

export interface PrepareContext {
  priceList: PriceList;
  validitySeconds: number;
  now: number;
  /** The sending organisation's country and time zone. */
  locale: Locale;
  /** The sending organisation's opt-out short code and mention. */
  optOut: OptOutSettings;
  /** Which senders the organisation may use, and where. */
  senders: SenderRegistry;
  /** Where short links point (`TERN_SHORT_LINK_BASE`) and how long they live; absent when none is configured. */
  shortLinks?: { base: string; ttlMs: number };
}

/** Checks a sender ID against the length limit and the channel's list; returns the sender to use. */
export function resolveSender(channel: Channel, from: string | null | undefined, field = 'from'): string | null {
  const sender = from === undefined || from === null || from === '' ? channel.defaultFromField : from;
  if (sender === null) return null;
  if (from !== undefined && from !== null && from !== '') {
    if (from.length > MAX_SENDER_LENGTH) fail('INVALID_SENDER', `at most ${MAX_SENDER_LENGTH} characters`, field);
    if (channel.fromFieldList.length > 0 && !channel.fromFieldList.includes(from)) {
      fail('INVALID_SENDER', `"${from}" is not in the channel's fromFieldList`, field);
    }
  }
  return sender;
}

export function checkCallbackUrl(value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  const problem = callbackUrlProblem(value);
  if (problem) fail('INVALID_REQUEST', problem, field);
  return value;
}

export function checkRefClient(value: string | null | undefined, field = 'refClient', max = MAX_REF_CLIENT_LENGTH): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value.length > max) fail('INVALID_REQUEST', `at most ${max} characters`, field);
  return value;
}

/**
 * The send time: now for a past or missing date, else the date (at most 10 years ahead); a local date and time is
 * read in `timeZone`.
 */
export function resolveSendAt(sentDate: RequestedDate | null | undefined, now: number, timeZone: string, field = 'sentDate'): number {
  if (!sentDate) return now;
  const t = instantOfRequestedDate(sentDate, timeZone);
  if (Number.isNaN(t)) fail('INVALID_DATE', 'not a date', field);
  if (t > now + MAX_SCHEDULE_AHEAD_MS) fail('INVALID_DATE', 'at most 10 years ahead', field);
  return Math.max(t, now);
}

/**
 * Normalises a recipient; bad shapes (letters, impossible lengths) are errors of the request. A national number
 * (`0612345678`) is read in `defaultCountry`, and refused without one.
 */
export function normaliseRecipient(to: string, field: string, defaultCountry?: CountryCode | null): string {
  const n = normaliseMsisdn(to, defaultCountry ? { defaultCountry } : {});
  if (!n.ok) {
    const why: Record<string, string> = {
      EMPTY: 'is empty',
      NOT_DIGITS: 'must be a phone number in international form, e.g. 33612345678',
      TOO_SHORT: 'is too short for a phone number',
      TOO_LONG: 'is longer than 15 digits',
      NATIONAL_WITHOUT_COUNTRY: defaultCountry
        ? 'must be in international form (country code first), e.g. 33612345678'
        : "must be in international form (country code first), e.g. 33612345678; national numbers need the organisation's defaultCountry",
    };
    fail('INVALID_PHONE_NUMBER', why[n.reason] ?? n.reason, field);
  }
  return n.msisdn;
}
