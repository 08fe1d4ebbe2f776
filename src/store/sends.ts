import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { MessageRow } from './messages.ts';
import type { CampaignTable } from './schema.ts';

/**
 * Sends as a client made them: a message on its own, or a campaign of messages (a send to several numbers). Read
 * newest first, without the messages a client cancelled.
 */

/** The newest messages of these channels that belong to no campaign. */
export function recentSingleMessages(db: Db, channelIds: string[], type: string, limit: number): Promise<MessageRow[]> {
  if (channelIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', 'in', channelIds)
    .where('direction', '=', 'MT')
    .where('type', '=', type)
    .where('campaign_id', 'is', null)
    .where('status', '<>', 'CANCELLED')
    .orderBy('accepted_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The newest campaigns of these channels. */
export function recentCampaigns(db: Db, channelIds: string[], limit: number): Promise<CampaignTable[]> {
  if (channelIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('campaigns')
    .selectAll()
    .where('channel_id', 'in', channelIds)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export interface CampaignTotals {
  campaignId: string;
  /** Messages not cancelled. */
  messages: number;
  /** What they cost, in micro-euros. */
  charged: number;
  /** Its first message. */
  firstMessageId: string;
}

/** Per campaign: its messages that were not cancelled, what they cost, and the first of them. */
export async function campaignTotals(db: Db, campaignIds: string[]): Promise<CampaignTotals[]> {
  if (campaignIds.length === 0) return [];
  const rows = await db
    .selectFrom('messages')
    .select(['campaign_id', sql<number>`count(*)`.as('n'), sql<number>`sum(charged)`.as('charged'), sql<string>`min(id)`.as('first_id')])
    .where('campaign_id', 'in', campaignIds)
    .where('status', '<>', 'CANCELLED')
    .groupBy('campaign_id')
    .execute();
  return rows.map((r) => ({ campaignId: r.campaign_id!, messages: Number(r.n), charged: Number(r.charged), firstMessageId: r.first_id }));
}
