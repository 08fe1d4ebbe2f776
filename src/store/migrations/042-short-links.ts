import type { Kysely } from 'kysely';

/**
 * Short links: a channel's opt-in, the links written into its messages at accept (one per URL and message, with the
 * URL it stands for and when it expires) and their clicks (a visitor kept only as a hash salted with the link's code).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('channels')
    .addColumn('short_links', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('short_links')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('short_links_message').on('short_links').columns(['message_id']).execute();
  await db.schema
    .createTable('short_link_clicks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('visitor_hash', 'text', (c) => c.notNull())
    .addColumn('clicked_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('short_link_clicks_message').on('short_link_clicks').columns(['message_id', 'clicked_at']).execute();
  await db.schema.createIndex('short_link_clicks_channel').on('short_link_clicks').columns(['channel_id', 'clicked_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
