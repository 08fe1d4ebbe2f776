import type { Kysely } from 'kysely';

/**
 * Privacy controls: an organisation's own content retention (days its message texts are kept; null: the platform's),
 * when a message's content was erased (its row, prices and statuses stay), and how far the content retention has
 * gone through each channel's messages of each direction (every message accepted before `through_at` is erased, or
 * was still waiting to be sent when it was passed), so a round never reads again what an earlier one erased.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organisations').addColumn('content_retention_days', 'integer').execute();
  await db.schema.alterTable('messages').addColumn('content_erased_at', 'bigint').execute();
  await db.schema
    .createTable('content_retention_cursors')
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('through_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('content_retention_cursors_pk', ['channel_id', 'direction'])
    .execute();
}
