import type { Db } from './db.ts';
import type { CampaignTable } from './schema.ts';

/** Campaigns: one send to many numbers (SMS campaigns, legacy group sends), grouping their messages. */

export type CampaignRow = CampaignTable;

export async function insertCampaign(db: Db, row: CampaignRow): Promise<void> {
  await db.insertInto('campaigns').values(row).execute();
}

export async function findCampaign(db: Db, id: string): Promise<CampaignRow | null> {
  return (await db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}
