import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('transfers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('destination_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('reference', 'text')
    .addColumn('description', 'text')
    .addColumn('credential_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('transfers_source').on('transfers').columns(['source_id', 'id']).execute();
  await db.schema.createIndex('transfers_destination').on('transfers').columns(['destination_id', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
