import { shortenLinksOf } from '../links/shorten.ts';
import { checkNumber } from '../../domain/phone.ts';
import { rcsPriceKind, type RcsBody } from '../../domain/rcs.ts';
import { analyseText, exceedsPartLimit, MAX_MESSAGE_PARTS, PART_LIMITS, type TextEncoding, TextError } from '../../domain/text.ts';
import { fail } from '../errors.ts';
import { optOutLineFor } from '../sms/prepare.ts';
import { normaliseRecipient } from '../messaging/prepare.ts';
import type { MessagingService } from '../messaging/service.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { Channel } from '../types.ts';

/** How an SMS text is cut into parts, as the send counts it. */
export interface TextCount {
  encoding: TextEncoding;
  /** Units: GSM 03.38 septets (an extension character counts two) or UCS-2 code units. */
  length: number;
  messagePartCount: number;
  /** Units a part holds at this count: 160/70 for one part, 153/67 for each part of a longer text. */
  unitsPerPart: number;
  /** Units left before one more part is needed (0 past the limit). */
  remainingInPart: number;
  /** More than MAX_MESSAGE_PARTS: a send would be refused. */
  tooLong: boolean;
  /** The opt-out mention is appended and counted (always on marketing to French numbers). */
  stop: boolean;
}

export interface Quote {
  type: 'SMS' | 'RCS' | 'VOICE';
  /** The recipient in international form and its country, when one was given. */
  recipient?: { to: string; country?: string; valid: boolean };
  text?: TextCount;
  /** The price list's kind (SMS, BASIC, SINGLE, VOICE). */
  kind: string;
  /** Billed units: SMS parts, one RCS message; absent for a voice call, whose units are its started 30 s. */
  units?: number;
  /** Micro-euros per unit, from the price list (the country's, else `*`). */
  unitPrice: number;
  /** Micro-euros the send would be charged; absent for a voice call (known once its speech is rendered). */
  price?: number;
}

export interface QuoteInput {
  to?: string;
  /** SMS */
  text?: string;
  encoding?: TextEncoding;
  stop?: boolean;
  /** RCS */
  rcsBody?: RcsBody;
}

/** Counts a text the way an SMS send does (`mention`, the opt-out line, appended); bad text is a request error. */
export function countText(text: string, encoding: TextEncoding | undefined, mention: string | null): TextCount {
  let a;
  try {
    a = analyseText(mention === null ? text : `${text}${mention}`, encoding);
  } catch (err) {
    if (err instanceof TextError) fail('INVALID_REQUEST', err.message, 'body.text');
    throw err;
  }
  const limits = PART_LIMITS[a.encoding];
  const unitsPerPart = a.messagePartCount === 1 ? limits.single : limits.multi;
  const tooLong = exceedsPartLimit(a);
  return {
    encoding: a.encoding,
    length: a.length,
    messagePartCount: a.messagePartCount,
    unitsPerPart,
    remainingInPart: tooLong ? 0 : Math.max(0, unitsPerPart * a.messagePartCount - a.length),
    tooLong,
    stop: mention !== null,
  };
}

/**
 * What a send would cost before it is made: the same text count, recipient reading and price list as the send
 * (a number that is not valid is not charged). RCS is quoted outside any open conversation; a voice call's price
 * is per started 30 s of its rendered speech, so only its unit price is known beforehand.
 */
export class QuoteService {
  constructor(
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
  ) {}

  async quote(channel: Channel, type: Quote['type'], input: QuoteInput): Promise<Quote> {
    let recipient: Quote['recipient'];
    let country: string | null = null;
    if (input.to !== undefined && input.to !== '') {
      const locale = await this.tenancy.locale(channel.organisationId);
      const to = normaliseRecipient(input.to, 'body.recipient.to', locale.defaultCountry);
      const number = checkNumber(to);
      country = number.isoCountryCode;
      recipient = { to, ...(country ? { country } : {}), valid: number.valid };
    }
    const prices = this.messaging.priceListNow;
    const chargeable = recipient === undefined || recipient.valid;
    if (type === 'SMS') {
      // Without a recipient the country is unknown: the mention counts when `stop` asks for it. The text is counted as
      // it would be sent: its long URLs shortened on a channel with short links.
      const mention = optOutLineFor(input.stop, channel.flow, country, await this.tenancy.optOut(channel.organisationId));
      const sent = shortenLinksOf(channel, input.text ?? '', await this.messaging.prepareContext(channel)).text;
      const text = countText(sent, input.encoding, mention);
      const unitPrice = prices.unitPrice('SMS', country, 'SMS') ?? 0;
      const units = text.tooLong ? MAX_MESSAGE_PARTS : text.messagePartCount;
      return { type, ...(recipient && { recipient }), text, kind: 'SMS', units, unitPrice, price: chargeable ? unitPrice * units : 0 };
    }
    if (type === 'RCS') {
      const kind = rcsPriceKind(input.rcsBody ?? { type: 'TEXT', text: input.text ?? '' }, false);
      const unitPrice = prices.unitPrice('RCS', country, kind) ?? 0;
      return { type, ...(recipient && { recipient }), kind, units: 1, unitPrice, price: chargeable ? unitPrice : 0 };
    }
    const unitPrice = prices.unitPrice('VOICE', country, 'VOICE') ?? 0;
    return { type, ...(recipient && { recipient }), kind: 'VOICE', unitPrice };
  }
}
