import { omitNulls } from '../domain/absent.ts';
import type { TextEncoding } from '../domain/text.ts';
import type { MessageRow } from '../../store/messages.ts';
import { CoreError } from '../errors.ts';
import type { PreparedMessage } from './accept.ts';
import type { CampaignSender } from './campaigns.ts';
import type { MessagingService } from './service.ts';
import { prepareSms, smsBody, type SmsSendInput } from './sms.ts';

/** What every SMS of a campaign shares. */
export type SmsCampaignMessage = Omit<SmsSendInput, 'to' | 'refClient' | 'source' | 'campaignId' | 'toField' | 'messageId'>;

/** A campaign's new text; `stop` keeps the campaign's when it is not given. */
export interface SmsCampaignBody {
  text: string;
  encoding?: TextEncoding;
  stop?: boolean;
}

/** SMS campaigns: prepared one by one (a bad recipient is reported alone), accepted together (group commit). */
export function smsCampaignSender(messaging: MessagingService): CampaignSender<SmsCampaignMessage, SmsCampaignBody> {
  return {
    async check(channel, message, refClient, now) {
      const ctx = await messaging.prepareContext(channel, now);
      const probe = await prepareSms(channel, { ...message, to: '33600000000', refClient, source: 'CAMPAIGN' }, ctx);
      return { sendAt: probe.row.send_at, body: omitNulls({ text: message.text, encoding: message.encoding, stop: message.stop }) };
    },

    async send(channel, message, recipients, campaignId, now) {
      const ctx = await messaging.prepareContext(channel, now);
      const out: Array<MessageRow | CoreError> = new Array(recipients.length);
      const prepared: PreparedMessage[] = [];
      const slots: number[] = [];
      for (const [i, r] of recipients.entries()) {
        try {
          prepared.push(
            await prepareSms(channel, { ...message, to: r.to, refClient: r.refClient, source: 'CAMPAIGN', campaignId, toField: r.field }, ctx),
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

    rebody(_channel, body, current) {
      const stop = body.stop ?? current.stop === true;
      const { body: next, analysis } = smsBody(body.text, body.encoding, stop, 'body.text');
      const text = JSON.stringify(next);
      return {
        body: omitNulls({ text: body.text, encoding: body.encoding, stop }),
        // The price per part a message was accepted at stays: only the number of parts changes what it costs.
        change: (m) => {
          const price = m.part_count > 0 ? (m.price / m.part_count) * analysis.messagePartCount : 0;
          return {
            body: text,
            encoding: analysis.encoding,
            part_count: analysis.messagePartCount,
            length: analysis.length,
            price,
            price_kind: m.price_kind,
            charged: m.charged > 0 ? price : 0,
          };
        },
      };
    },
  };
}
