import { sql } from 'kysely';
import type { Db, Dialect } from './db.ts';
import type { CampaignTable } from './schema.ts';

/** Campaigns: one send to many numbers (SMS and RCS campaigns, legacy group sends), grouping their messages. */

export type CampaignRow = CampaignTable;

const CHUNK = 500;

export async function insertCampaign(db: Db, row: Omit<CampaignRow, 'cancelled_at'>): Promise<void> {
  await db
    .insertInto('campaigns')
    .values({ ...row, cancelled_at: null })
    .execute();
}

export async function findCampaign(db: Db, id: string): Promise<CampaignRow | null> {
  return (await db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** The campaign, locked until the transaction ends on PostgreSQL (SQLite has one writer): changes to it queue up. */
export async function lockCampaign(db: Db, dialect: Dialect, id: string): Promise<CampaignRow | null> {
  let q = db.selectFrom('campaigns').selectAll().where('id', '=', id);
  if (dialect === 'postgres') q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

export interface CampaignFilter {
  channelIds: string[];
  /** Created at or after (epoch ms). */
  from?: number;
  /** Created before (epoch ms). */
  to?: number;
  refClient?: string;
  offset: number;
  limit: number;
}

/** Newest first. */
export async function listCampaigns(db: Db, f: CampaignFilter): Promise<CampaignRow[]> {
  if (f.channelIds.length === 0) return [];
  let q = db.selectFrom('campaigns').selectAll().where('channel_id', 'in', f.channelIds);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<', f.to);
  if (f.refClient !== undefined) q = q.where('ref_client', '=', f.refClient);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
}

/**
 * Messages per status of each campaign, on the campaign's own channel (an RCS campaign's fallback SMS go through
 * another channel and are not its messages).
 */
export async function countCampaignsByStatus(db: Db, campaigns: Array<Pick<CampaignRow, 'id' | 'channel_id'>>): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>(campaigns.map((c) => [c.id, {}]));
  const channelOf = new Map(campaigns.map((c) => [c.id, c.channel_id]));
  const ids = campaigns.map((c) => c.id);
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await db
      .selectFrom('messages')
      .select(['campaign_id', 'channel_id', 'status', sql<number>`count(*)`.as('n')])
      .where('campaign_id', 'in', ids.slice(i, i + CHUNK))
      .groupBy(['campaign_id', 'channel_id', 'status'])
      .execute();
    for (const r of rows) if (channelOf.get(r.campaign_id!) === r.channel_id) out.get(r.campaign_id!)![r.status] = Number(r.n);
  }
  return out;
}

/**
 * Counts one more message in a campaign that is not cancelled and, when `sendAt` is given, still goes at that time;
 * false when it does not (nothing is written).
 */
export async function countMessageIn(db: Db, id: string, sendAt?: number): Promise<boolean> {
  let q = db
    .updateTable('campaigns')
    .set({ recipients: sql<number>`recipients + 1` })
    .where('id', '=', id)
    .where('cancelled_at', 'is', null);
  if (sendAt !== undefined) q = q.where('send_at', '=', sendAt);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function updateCampaign(db: Db, id: string, set: Partial<Pick<CampaignRow, 'send_at' | 'ref_client' | 'body' | 'cancelled_at'>>): Promise<void> {
  await db.updateTable('campaigns').set(set).where('id', '=', id).execute();
}

/** The campaign's messages still SCHEDULED, locked for a change (PostgreSQL), in id order. */
export async function lockScheduledOfCampaign(db: Db, dialect: Dialect, campaignId: string) {
  let q = db.selectFrom('messages').selectAll().where('campaign_id', '=', campaignId).where('status', '=', 'SCHEDULED').orderBy('id');
  if (dialect === 'postgres') q = q.forNoKeyUpdate();
  return q.execute();
}

/**
 * Moves scheduled messages to `sendAt` (their validity moves with them) and their dispatch entries with them, unless a
 * dispatcher holds one; answers how many dispatch entries moved.
 */
export async function rescheduleMessages(db: Db, ids: string[], sendAt: number, now: number): Promise<number> {
  let moved = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    // Every expression reads the row as it was, so the validity moves by the old send time's distance.
    await db
      .updateTable('messages')
      .set({ validity_until: sql<number>`validity_until + (${sendAt} - send_at)`, send_at: sendAt })
      .where('id', 'in', chunk)
      .execute();
    const r = await db
      .updateTable('dispatch_queue')
      // Waiting again: it may have been made ready at its old time.
      .set({ due_at: sendAt, waiting: 1 })
      .where('message_id', 'in', chunk)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    moved += Number(r.numUpdatedRows);
  }
  return moved;
}

/** Gives the messages among `ids` that carried `from` as their client reference `to` instead. */
export async function replaceRefClient(db: Db, ids: string[], from: string | null, to: string | null): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    await db
      .updateTable('messages')
      .set({ ref_client: to })
      .where('id', 'in', ids.slice(i, i + CHUNK))
      .where('ref_client', from === null ? 'is' : '=', from)
      .execute();
  }
}

/** What a scheduled message becomes with a new body, priced again. */
export interface MessageBodyChange {
  body: string;
  encoding: string | null;
  part_count: number;
  length: number;
  price: number;
  price_kind: string | null;
  charged: number;
}

/** Writes new bodies: one statement per distinct change (messages of one country and kind share one). */
export async function writeMessageBodies(db: Db, changes: Array<{ id: string; change: MessageBodyChange }>): Promise<void> {
  const groups = new Map<string, { change: MessageBodyChange; ids: string[] }>();
  for (const { id, change } of changes) {
    const key = JSON.stringify(change);
    const g = groups.get(key) ?? { change, ids: [] };
    g.ids.push(id);
    groups.set(key, g);
  }
  for (const { change, ids } of groups.values()) {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await db
        .updateTable('messages')
        .set(change)
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute();
    }
  }
}
