import type { Kysely } from 'kysely';

/**
 * A counter per organisation, raised by every transaction that changes the consumption of a settled day (a late
 * receipt or expiry of a message accepted days ago): nodes keep what settled days count in memory and read the
 * counter to know whether it still holds.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('consumption_epochs')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
