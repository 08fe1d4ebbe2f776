import { omitNulls } from '../../domain/absent.ts';
import type { TextEncoding } from '../../domain/text.ts';
import type { MessageRow } from '../../store/messages.ts';
import { CoreError } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import type { CampaignSender } from '../campaigns/service.ts';
import type { MessagingService } from '../messaging/service.ts';
import { deleteShortLinksOf, insertShortLinks, type ShortLinkRow } from '../../store/short-links.ts';
import { shortenLinksOf } from '../links/shorten.ts';
import { optOutLineFor, prepareSms, smsBody, type SmsSendInput } from './prepare.ts';
import { campaignTexts, type MessageTemplate, type TemplateService, type TemplateUse } from './templates.ts';

/** What a template campaign keeps of its template. */
const templateOf = (t: MessageTemplate | undefined) => (t ? { template: { id: t.id, name: t.name } } : {});

/** What every SMS of a campaign shares. */
export type SmsCampaignMessage = Omit<SmsSendInput, 'to' | 'refClient' | 'source' | 'campaignId' | 'toField' | 'messageId' | 'text'> & {
  /** The text of every message, unless a template gives each its own. */
  text?: string;
  template?: TemplateUse;
};

/** A campaign's new text; `stop` keeps the campaign's when it is not given. */
export interface SmsCampaignBody {
  text: string;
  encoding?: TextEncoding;
  stop?: boolean;
}

declare module '../campaigns/service.ts' {
  interface CampaignMessages {
    SMS: SmsCampaignMessage;
  }
  interface CampaignBodies {
    SMS: SmsCampaignBody;
  }
}

/** SMS campaigns: prepared one by one (a bad recipient is reported alone), accepted together (group commit). */
export function smsCampaignSender(messaging: MessagingService, templates: TemplateService): CampaignSender<SmsCampaignMessage, SmsCampaignBody> {
  // The texts check rendered, for send to use: a template changed in between does not split the campaign.
  const rendered = new WeakMap<SmsCampaignMessage, string[]>();
  return {
    async check(channel, message, refClient, now, recipients) {
      const ctx = await messaging.prepareContext(channel, now);
      const { texts, template } = await campaignTexts(templates, channel, message, recipients);
      rendered.set(message, texts);
      const probe = await prepareSms(channel, { ...message, text: texts[0]!, to: '33600000000', refClient, source: 'CAMPAIGN', probe: true }, ctx);
      // Outside the marketing window, the campaign goes at its next opening (its messages on the ramp from there).
      const sendAt = await messaging.windows.openingFor(channel, Math.max(probe.row.send_at, now), now);
      const text = template?.text ?? message.text;
      return { sendAt, body: omitNulls({ text, encoding: message.encoding, stop: message.stop, ...templateOf(template) }) };
    },

    async send(channel, message, recipients, campaignId, now) {
      const ctx = await messaging.prepareContext(channel, now);
      const texts = rendered.get(message) ?? (await campaignTexts(templates, channel, message, recipients)).texts;
      const out: Array<MessageRow | CoreError> = new Array(recipients.length);
      const prepared: PreparedMessage[] = [];
      const slots: number[] = [];
      for (const [i, r] of recipients.entries()) {
        try {
          prepared.push(
            await prepareSms(channel, { ...message, text: texts[i]!, to: r.to, refClient: r.refClient, source: 'CAMPAIGN', campaignId, toField: r.field }, ctx),
          );
          slots.push(i);
        } catch (err) {
          if (!(err instanceof CoreError)) throw err;
          out[i] = err;
        }
      }
      const rows = await messaging.acceptMany(prepared);
      rows.forEach((row, k) => {
        out[slots[k]!] = row;
      });
      return out;
    },

    async rebody(channel, body, current, now) {
      const stop = body.stop ?? current.stop === true;
      const ctx = await messaging.prepareContext(channel, now);
      // Each message carries the mention or not by its own country (marketing to French numbers always does), and
      // short links of its own, as at accept: a short link's length does not depend on its code, so one text with
      // links checks the length for all.
      const probe = shortenLinksOf(channel, body.text, ctx).text;
      smsBody(probe, body.encoding, null, 'body.text');
      smsBody(probe, body.encoding, optOutLineFor(stop, channel.flow, 'FR', ctx.optOut), 'body.text');
      const links = new Map<string, ShortLinkRow[]>();
      return {
        body: omitNulls({ text: body.text, encoding: body.encoding, stop }),
        // The price per part a message was accepted at stays: only the number of parts changes what it costs.
        change: (m) => {
          const shortened = shortenLinksOf(channel, body.text, ctx);
          // Links expire counted from the message's accept, as those written then.
          links.set(
            m.id,
            shortened.rows(m.id).map((r) => ({ ...r, created_at: now, expires_at: m.accepted_at + (r.expires_at - r.created_at) })),
          );
          const { body: next, analysis } = smsBody(shortened.text, body.encoding, optOutLineFor(stop, channel.flow, m.country, ctx.optOut), 'body.text');
          const price = m.part_count > 0 ? (m.price / m.part_count) * analysis.messagePartCount : 0;
          return {
            body: JSON.stringify(next),
            encoding: analysis.encoding,
            part_count: analysis.messagePartCount,
            length: analysis.length,
            price,
            price_kind: m.price_kind,
            charged: m.charged > 0 ? price : 0,
          };
        },
        // The old links go with the old text; the new ones are written with the new bodies.
        async written(db, messages) {
          await deleteShortLinksOf(
            db,
            messages.map((m) => m.id),
          );
          await insertShortLinks(
            db,
            messages.flatMap((m) => links.get(m.id) ?? []),
          );
        },
      };
    },
  };
}
