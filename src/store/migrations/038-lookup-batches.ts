import type { Kysely } from 'kysely';

/**
 * Batch lookups accepted (202) and not yet answered by their webhook: kept here from the accept, so that a node that
 * stops or dies with one under way leaves it to another node (or to itself, restarted) once its lease runs out.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lookup_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('numbers', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('lookup_batches_due').on('lookup_batches').column('due_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
