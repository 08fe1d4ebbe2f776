import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { ShortLinkClickTable, ShortLinkTable } from './schema.ts';

export type ShortLinkRow = ShortLinkTable;
export type ShortLinkClickRow = ShortLinkClickTable;

export async function insertShortLinks(db: Db, rows: ShortLinkRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('short_links')
      .values(rows.slice(i, i + 500))
      .execute();
}

/** Removes the links of these messages and their clicks (a new body carries links of its own). */
export async function deleteShortLinksOf(db: Db, messageIds: string[]): Promise<void> {
  for (let i = 0; i < messageIds.length; i += 500) {
    const ids = messageIds.slice(i, i + 500);
    await db.deleteFrom('short_link_clicks').where('message_id', 'in', ids).execute();
    await db.deleteFrom('short_links').where('message_id', 'in', ids).execute();
  }
}

export async function findShortLink(db: Db, code: string): Promise<ShortLinkRow | null> {
  return (await db.selectFrom('short_links').selectAll().where('code', '=', code).executeTakeFirst()) ?? null;
}

export async function insertShortLinkClick(db: Db, row: ShortLinkClickRow): Promise<void> {
  await db.insertInto('short_link_clicks').values(row).execute();
}

export function listShortLinks(db: Db, messageId: string): Promise<ShortLinkRow[]> {
  return db.selectFrom('short_links').selectAll().where('message_id', '=', messageId).orderBy('created_at').orderBy('code').execute();
}

export function listShortLinkClicks(db: Db, messageId: string): Promise<ShortLinkClickRow[]> {
  return db.selectFrom('short_link_clicks').selectAll().where('message_id', '=', messageId).orderBy('clicked_at').orderBy('id').execute();
}

/** Clicks on links of these channels in [from, to), per channel. */
export async function countClicksByChannel(db: Db, channelIds: string[], from: number, to: number): Promise<Map<string, number>> {
  if (channelIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('short_link_clicks')
    .select(['channel_id', sql<number | string>`count(*)`.as('n')])
    .where('channel_id', 'in', channelIds)
    .where('clicked_at', '>=', from)
    .where('clicked_at', '<', to)
    .groupBy('channel_id')
    .execute();
  return new Map(rows.map((r) => [r.channel_id, Number(r.n)]));
}

/** Clicks on the links of these campaigns' messages, per campaign (absent: none). */
export async function countClicksByCampaign(db: Db, campaignIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < campaignIds.length; i += 500) {
    const rows = await db
      .selectFrom('short_link_clicks')
      .innerJoin('messages', 'messages.id', 'short_link_clicks.message_id')
      .select(['messages.campaign_id', sql<number | string>`count(*)`.as('n')])
      .where('messages.campaign_id', 'in', campaignIds.slice(i, i + 500))
      .groupBy('messages.campaign_id')
      .execute();
    for (const r of rows) if (r.campaign_id !== null) out.set(r.campaign_id, Number(r.n));
  }
  return out;
}

/** The short links of these campaigns' messages, and how many of them were clicked at least once, per campaign. */
export async function countLinksByCampaign(db: Db, campaignIds: string[]): Promise<Map<string, { links: number; clicked: number }>> {
  const out = new Map<string, { links: number; clicked: number }>();
  for (let i = 0; i < campaignIds.length; i += 500) {
    const ids = campaignIds.slice(i, i + 500);
    const links = await db
      .selectFrom('short_links')
      .innerJoin('messages', 'messages.id', 'short_links.message_id')
      .select(['messages.campaign_id', sql<number | string>`count(*)`.as('n')])
      .where('messages.campaign_id', 'in', ids)
      .groupBy('messages.campaign_id')
      .execute();
    const clicked = await db
      .selectFrom('short_link_clicks')
      .innerJoin('messages', 'messages.id', 'short_link_clicks.message_id')
      .select(['messages.campaign_id', sql<number | string>`count(distinct short_link_clicks.code)`.as('n')])
      .where('messages.campaign_id', 'in', ids)
      .groupBy('messages.campaign_id')
      .execute();
    for (const r of links) if (r.campaign_id !== null) out.set(r.campaign_id, { links: Number(r.n), clicked: 0 });
    for (const r of clicked) if (r.campaign_id !== null) out.set(r.campaign_id, { links: out.get(r.campaign_id)?.links ?? 0, clicked: Number(r.n) });
  }
  return out;
}
