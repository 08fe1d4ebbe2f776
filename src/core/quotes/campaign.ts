import type { TextEncoding } from '../../domain/text.ts';
import { type CampaignRecipient, senderRecipients } from '../campaigns/service.ts';
import { CoreError, fail } from '../errors.ts';
import { campaignTexts, type TemplateService, type TemplateUse } from '../sms/templates.ts';
import type { Channel } from '../types.ts';
import type { QuoteService } from './service.ts';

export interface CampaignQuote {
  recipients: number;
  /** Recipients the campaign would refuse (a number that cannot be read): left out of the counts. */
  refused: number;
  /** Parts of its shortest and longest message. */
  parts: { min: number; max: number };
  /** Micro-euros: its cheapest and dearest message, and all of them. */
  price: { min: number; max: number; total: number };
}

/**
 * What an SMS campaign would be counted and charged before it is made: each recipient's text (a template filled with
 * its values) counted and priced as its send would be. A missing value is refused as the campaign would refuse it.
 */
export async function quoteSmsCampaign(
  quotes: QuoteService,
  templates: TemplateService,
  channel: Channel,
  message: { text?: string; template?: TemplateUse; encoding?: TextEncoding; stop?: boolean },
  recipients: CampaignRecipient[],
): Promise<CampaignQuote> {
  if (recipients.length === 0) fail('INVALID_REQUEST', 'at least one recipient is required', 'recipients');
  const targets = senderRecipients(recipients, null);
  const { texts } = await campaignTexts(templates, channel, message, targets);
  const parts = { min: Infinity, max: 0 };
  const price = { min: Infinity, max: 0, total: 0 };
  let refused = 0;
  for (const [i, r] of targets.entries()) {
    let q;
    try {
      q = await quotes.quote(channel, 'SMS', { to: r.to, text: texts[i]!, encoding: message.encoding, stop: message.stop });
    } catch (err) {
      // A text error is the same for every recipient's count as for its send: only a bad number is one recipient's.
      if (!(err instanceof CoreError) || err.field !== 'body.recipient.to') throw err;
      refused++;
      continue;
    }
    const n = q.text!.messagePartCount;
    const amount = q.price ?? 0;
    parts.min = Math.min(parts.min, n);
    parts.max = Math.max(parts.max, n);
    price.min = Math.min(price.min, amount);
    price.max = Math.max(price.max, amount);
    price.total += amount;
  }
  if (refused === targets.length) fail('INVALID_REQUEST', 'no recipient has a number that can be read', 'recipients');
  return { recipients: targets.length, refused, parts, price };
}
