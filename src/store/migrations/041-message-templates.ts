import type { Kysely } from 'kysely';

/** Named message templates with `{{variable}}` placeholders, per channel (a name once per channel). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('message_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('message_templates_channel_name', ['channel_id', 'name'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
