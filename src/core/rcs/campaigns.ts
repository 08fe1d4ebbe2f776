import { type RcsBody, rcsBodyLength, rcsBodyProblem, rcsPriceKind, withRcsDefaults } from '../../domain/rcs.ts';
import type { MessageRow } from '../../store/messages.ts';
import { CoreError, fail } from '../errors.ts';
import type { CampaignSender } from '../campaigns/service.ts';
import type { MessagingService } from '../messaging/service.ts';
import type { RcsSendInput, RcsService } from './service.ts';

/** What every RCS message of a campaign shares. */
export type RcsCampaignMessage = Omit<RcsSendInput, 'to' | 'refClient' | 'campaignId' | 'toField' | 'source'>;

declare module '../campaigns/service.ts' {
  interface CampaignMessages {
    RCS: RcsCampaignMessage;
  }
  interface CampaignBodies {
    RCS: RcsBody;
  }
}

/** Recipients sent at once: each message waits on its recipient's capability and its conversation. */
const CONCURRENCY = 200;

/**
 * RCS campaigns: each message through the RCS pipeline (capability, fallback, conversation pricing), the shared
 * fields checked once for the whole request.
 */
export function rcsCampaignSender(rcs: RcsService, messaging: MessagingService): CampaignSender<RcsCampaignMessage, RcsBody> {
  return {
    async check(channel, message, refClient, now) {
      const { sendAt, body } = await rcs.checkShared(channel, { ...message, refClient }, now);
      return { sendAt, body };
    },

    async send(channel, message, recipients, campaignId, now) {
      const out: Array<MessageRow | CoreError> = [];
      for (let i = 0; i < recipients.length; i += CONCURRENCY) {
        const chunk = recipients.slice(i, i + CONCURRENCY);
        out.push(
          ...(await Promise.all(
            chunk.map((r) =>
              rcs
                .send(channel, { ...message, to: r.to, refClient: r.refClient, campaignId, toField: r.field, source: 'CAMPAIGN' }, undefined, now)
                .catch((err: unknown) => {
                  if (err instanceof CoreError) return err;
                  throw err;
                }),
            ),
          )),
        );
      }
      return out;
    },

    rebody(_channel, input) {
      const problem = rcsBodyProblem(input);
      if (problem) fail('INVALID_REQUEST', problem.message, `body.${problem.path}`);
      const body = withRcsDefaults(input);
      const text = JSON.stringify(body);
      return {
        body,
        // A message keeps its price while its kind stays (a conversation's message always does); a message that
        // becomes BASIC or SINGLE takes that kind's price today.
        change: (m) => {
          const kind = m.price_kind === 'CONVERSATION' ? 'CONVERSATION' : rcsPriceKind(body, false);
          const same = kind === m.price_kind;
          const price = same ? m.price : (messaging.priceListNow.unitPrice('RCS', m.country, kind) ?? 0);
          return {
            body: text,
            encoding: m.encoding,
            part_count: 1,
            length: rcsBodyLength(body),
            price,
            price_kind: kind,
            charged: same ? m.charged : price,
          };
        },
      };
    },
  };
}
