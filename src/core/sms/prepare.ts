import type { RequestedDate } from '../../domain/dates.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { carriesOptOutMention, type OptOutSettings, optOutLine, optOutSettings } from '../../domain/opt-out.ts';
import { type CountryCode, numberRange } from '../../domain/phone.ts';
import { analyseText, exceedsPartLimit, MAX_MESSAGE_PARTS, type TextEncoding, TextError } from '../../domain/text.ts';
import { shortenLinksOf } from '../links/shorten.ts';
import { networkLookup } from '../lookup/enrich.ts';
import type { Channel } from '../../store/channels.ts';
import { fail } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import { outboundMessageRow } from '../messaging/message-row.ts';
import {
  checkCallbackUrl,
  checkRefClient,
  type MessageSource,
  normaliseRecipient,
  type PrepareContext,
  resolveSender,
  resolveSendAt,
} from '../messaging/prepare.ts';

/** The platform's opt-out line, for doors that decide on it before the organisation's is known (legacy `stop=1`). */
export const OPT_OUT_MENTION = optOutLine(optOutSettings(null, null));

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
  /** Send now even outside the organisation's marketing window (the operator's exceptional case); recorded. */
  windowOverride?: boolean;
  /** The recipient's field name when it is not `recipient.to` (a campaign's `recipients[i].to`). */
  toField?: string;
  /**
   * A check of a campaign's shared fields with a stand-in recipient: no rule that depends on the real recipient's
   * country (the sender's countries, the mandatory mention) is applied.
   */
  probe?: boolean;
}

/**
 * The opt-out line a message to `country` carries, or null: always on marketing to French numbers, else when `stop`
 * asks for it.
 */
export function optOutLineFor(stop: boolean | undefined, flow: string, country: string | null, settings: OptOutSettings): string | null {
  return carriesOptOutMention(stop, flow, country) ? optOutLine(settings) : null;
}

/** The body of an SMS (`mention`, the opt-out line, appended) and its encoding and parts; a text too long is refused. */
export function smsBody(text: string, encoding: TextEncoding | undefined, mention: string | null, field = 'body.text') {
  const full = mention === null ? text : `${text}${mention}`;
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
  const body = { text: full, encoding: analysis.encoding, messagePartCount: analysis.messagePartCount, length: analysis.length, stop: mention !== null };
  return { body, analysis };
}

/**
 * Validates and prices one SMS. Request errors throw (400); a number libphonenumber says is invalid is not an
 * error of the request: the message is accepted and ends UNDELIVERABLE / INVALID_PHONE_NUMBER at no charge.
 */
export async function prepareSms(channel: Channel, input: SmsSendInput, ctx: PrepareContext): Promise<PreparedMessage> {
  const recipient = normaliseRecipient(input.to, input.toField ?? 'recipient.to', input.defaultCountry ?? ctx.locale.defaultCountry);
  const number = numberRange(recipient);
  const country = input.probe ? null : number.isoCountryCode;
  const links = shortenLinksOf(channel, input.text, ctx);
  const { body, analysis } = smsBody(links.text, input.encoding, optOutLineFor(input.stop, channel.flow, country, ctx.optOut));
  const sender = resolveSender(channel, input.from);
  await ctx.senders.checkSms(channel, sender, country, 'from', ctx.now, input.probe === true);
  const refClient = checkRefClient(input.refClient);
  const callbackUrlStatus = checkCallbackUrl(input.callbackUrlStatus, 'callbackUrlStatus');
  const callbackUrlMo = checkCallbackUrl(input.callbackUrlMo, 'callbackUrlMo');
  const now = ctx.now;
  const sendAt = resolveSendAt(input.sentDate, now, ctx.locale.timeZone);

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
    ...(input.windowOverride && { windowOverride: true }),
    shortLinks: links.rows(id),
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
