import type { Kysely } from 'kysely';

/** Campaigns that can be cancelled as a whole and listed per channel, newest first. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('campaigns').addColumn('cancelled_at', 'bigint').execute();
  await db.schema.createIndex('campaigns_channel_created').on('campaigns').columns(['channel_id', 'created_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
