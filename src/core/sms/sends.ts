import { uuidv7 } from '../../domain/ids.ts';
import { insertCampaign } from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import type { Store } from '../../store/db.ts';
import { findMessages, type MessageRow } from '../../store/messages.ts';
import { campaignTotals, recentCampaigns, recentSingleMessages } from '../../store/sends.ts';
import { CoreError, fail } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import type { MessagingService } from '../messaging/service.ts';
import { prepareSms, type SmsSendInput } from './prepare.ts';

/** At most this many messages in one batch, as in a campaign. */
export const MAX_BATCH_MESSAGES = 10_000;

/** One send as the client made it: a message, or the campaign of a send to several numbers. */
export interface SendSummary {
  /** The message's id, or the campaign's. */
  id: string;
  /** When it goes, or went. */
  sendAt: number;
  acceptedAt: number;
  /** Its text (the first message's, for a campaign). */
  text: string;
  /** Its recipient (the first one, for a campaign). */
  recipient: string;
  /** Its messages that were not cancelled. */
  recipients: number;
  /** What it cost, in micro-euros. */
  charged: number;
}

export type BatchItem = Omit<SmsSendInput, 'source' | 'campaignId' | 'toField' | 'messageId'>;

function textOf(m: MessageRow): string {
  const body = JSON.parse(m.body) as { text?: unknown };
  return typeof body.text === 'string' ? body.text : '';
}

/**
 * Sends seen as a whole: the recent sends of some channels (a message, or a campaign), and batches — a campaign whose
 * messages each have their own text, sender and reference, accepted all or none.
 */
export class Sends {
  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
  ) {}

  /** The newest `limit` sends of `type` on these channels, newest first; sends whose messages were all cancelled are left out. */
  async recent(channelIds: string[], type: string, limit: number): Promise<SendSummary[]> {
    const db = this.store.db;
    const singles = await recentSingleMessages(db, channelIds, type, limit);
    const campaigns = await recentCampaigns(db, channelIds, limit);
    const totals = new Map(
      (
        await campaignTotals(
          db,
          campaigns.map((c) => c.id),
        )
      ).map((t) => [t.campaignId, t]),
    );
    const firsts = new Map(
      (
        await findMessages(
          db,
          [...totals.values()].map((t) => t.firstMessageId),
        )
      ).map((m) => [m.id, m]),
    );
    const out: SendSummary[] = singles.map((m) => ({
      id: m.id,
      sendAt: m.send_at,
      acceptedAt: m.accepted_at,
      text: textOf(m),
      recipient: m.recipient,
      recipients: 1,
      charged: m.charged,
    }));
    for (const c of campaigns) {
      const t = totals.get(c.id);
      const first = t ? firsts.get(t.firstMessageId) : undefined;
      // A campaign of another type has messages of another type.
      if (!t || !first || first.type !== type) continue;
      out.push({
        id: c.id,
        sendAt: c.send_at,
        acceptedAt: c.created_at,
        text: textOf(first),
        recipient: first.recipient,
        recipients: t.messages,
        charged: t.charged,
      });
    }
    out.sort((a, b) => b.acceptedAt - a.acceptedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return out.slice(0, limit);
  }

  /**
   * A campaign of SMS that each carry their own text, sender and reference. Every item is checked before anything is
   * stored: one bad item refuses the batch, with the error about `items[i]`.
   */
  async sendBatch(channel: Channel, items: BatchItem[], refClient: string | null, now = Date.now()): Promise<{ campaignId: string; messages: MessageRow[] }> {
    if (items.length === 0) fail('INVALID_REQUEST', 'at least one message is required', 'items');
    if (items.length > MAX_BATCH_MESSAGES) fail('INVALID_REQUEST', `at most ${MAX_BATCH_MESSAGES} messages`, 'items');
    const ctx = await this.messaging.prepareContext(channel, now);
    const campaignId = uuidv7(now);
    const prepared: PreparedMessage[] = [];
    for (const [i, item] of items.entries()) {
      try {
        prepared.push(await prepareSms(channel, { ...item, source: 'CAMPAIGN', campaignId }, ctx));
      } catch (err) {
        throw err instanceof CoreError ? err.under(`items[${i}].`) : err;
      }
    }
    const first = prepared[0]!.row;
    await insertCampaign(this.store.db, {
      id: campaignId,
      organisation_id: channel.organisationId,
      channel_id: channel.id,
      ref_client: refClient,
      send_at: await this.messaging.windows.openingFor(channel, Math.max(first.send_at, now), now),
      created_at: now,
      recipients: items.length,
      body: JSON.stringify({ text: textOf(first), encoding: items[0]!.encoding ?? null }),
    });
    // Concurrent accepts share the group-committed transactions.
    const messages = await Promise.all(prepared.map((p) => this.messaging.accept(p)));
    return { campaignId, messages };
  }
}
