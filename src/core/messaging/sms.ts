import { instantOfRequestedDate, type RequestedDate } from '../domain/dates.ts';
import { uuidv7 } from '../domain/ids.ts';
import type { Locale } from '../domain/locale.ts';
import { type CountryCode, normaliseMsisdn, numberRange } from '../domain/phone.ts';
import type { PriceList } from '../domain/pricing.ts';
import { analyseText, exceedsPartLimit, MAX_MESSAGE_PARTS, type TextEncoding, TextError } from '../domain/text.ts';
import { callbackUrlProblem } from '../domain/urls.ts';
import { networkLookup } from '../lookup/enrich.ts';
import type { Channel } from '../../store/channels.ts';
import { fail } from '../errors.ts';
import type { PreparedMessage } from './accept.ts';
import { outboundMessageRow } from './message-row.ts';

/** Appended by `body.stop`: the opt-out mention marketing messages must carry. */
export const OPT_OUT_MENTION = '\nSTOP au 36111';
export const MAX_SENDER_LENGTH = 11;
export const MAX_REF_CLIENT_LENGTH = 140;
const MAX_SCHEDULE_AHEAD_MS = 10 * 366 * 86_400_000;

export type MessageSource = 'REST' | 'SMPP' | 'LEGACY' | 'CAMPAIGN' | 'FALLBACK';

export interface SmsSendInput {
  to: string;
  text: string;
  encoding?: TextEncoding;
  stop?: boolean;
  from?: string | null;
  refClient?: string | null;
  /** A local date and time is read in the organisation's time zone. */
  sentDate?: RequestedDate | null;
  callbackUrlStatus?: string | null;
  callbackUrlMo?: string | null;
  campaignId?: string | null;
  source: MessageSource;
  /** A pre-allocated id (SMPP concatenation answers every part with the final id). */
  messageId?: string;
  /** Absolute end of validity (SMPP validity_period); default now + the configured validity. */
  validityUntil?: number | null;
  smppCredentialId?: string | null;
  registeredDelivery?: number;
  /** Read national numbers in this country rather than the organisation's `defaultCountry`. */
  defaultCountry?: CountryCode;
  /** Extra fields of the message object. */
  extra?: Record<string, unknown>;
  /** The recipient's field name when it is not `recipient.to` (a campaign's `recipients[i].to`). */
  toField?: string;
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

export interface PrepareContext {
  priceList: PriceList;
  validitySeconds: number;
  now: number;
  /** The sending organisation's country and time zone. */
  locale: Locale;
}

/** The body of an SMS (`stop` appends the opt-out mention) and its encoding and parts; a text too long is refused. */
export function smsBody(text: string, encoding: TextEncoding | undefined, stop: boolean | undefined, field = 'body.text') {
  const full = stop ? `${text}${OPT_OUT_MENTION}` : text;
  let analysis;
  try {
    analysis = analyseText(full, encoding);
  } catch (err) {
    if (err instanceof TextError) fail('INVALID_REQUEST', err.message, field);
    throw err;
  }
  if (exceedsPartLimit(analysis)) {
    fail('TOO_MANY_PARTS', `${analysis.messagePartCount} parts; at most ${MAX_MESSAGE_PARTS} parts are allowed`, field);
  }
  const body = { text: full, encoding: analysis.encoding, messagePartCount: analysis.messagePartCount, length: analysis.length, stop: stop === true };
  return { body, analysis };
}

/**
 * Validates and prices one SMS. Request errors throw (400); a number libphonenumber says is invalid is not an
 * error of the request: the message is accepted and ends UNDELIVERABLE / INVALID_PHONE_NUMBER at no charge.
 */
export async function prepareSms(channel: Channel, input: SmsSendInput, ctx: PrepareContext): Promise<PreparedMessage> {
  const recipient = normaliseRecipient(input.to, input.toField ?? 'recipient.to', input.defaultCountry ?? ctx.locale.defaultCountry);
  const { body, analysis } = smsBody(input.text, input.encoding, input.stop);
  const sender = resolveSender(channel, input.from);
  const refClient = checkRefClient(input.refClient);
  const callbackUrlStatus = checkCallbackUrl(input.callbackUrlStatus, 'callbackUrlStatus');
  const callbackUrlMo = checkCallbackUrl(input.callbackUrlMo, 'callbackUrlMo');
  const now = ctx.now;
  const sendAt = resolveSendAt(input.sentDate, now, ctx.locale.timeZone);

  const number = numberRange(recipient);
  const network = number.valid ? await networkLookup(recipient, number) : null;
  const unit = ctx.priceList.unitPrice('SMS', number.isoCountryCode, 'SMS') ?? 0;
  const units = analysis.messagePartCount;
  const id = input.messageId ?? uuidv7(now);
  return {
    channel,
    price: number.valid ? unit * units : 0,
    units,
    rejection: number.valid ? null : 'INVALID_PHONE_NUMBER',
    checkBlacklist: channel.flow === 'MARKETING',
    row: outboundMessageRow({
      id,
      channel,
      type: 'SMS',
      recipient,
      sender,
      body,
      encoding: analysis.encoding,
      units,
      length: analysis.length,
      price: number.valid ? unit * units : 0,
      priceKind: 'SMS',
      refClient,
      callbackUrlStatus,
      callbackUrlMo,
      now,
      sendAt,
      validityUntil: input.validityUntil ?? sendAt + ctx.validitySeconds * 1000,
      country: number.isoCountryCode,
      network,
      source: input.source,
      campaignId: input.campaignId,
      smppCredentialId: input.smppCredentialId,
      registeredDelivery: input.registeredDelivery,
      extra: input.extra,
    }),
  };
}
