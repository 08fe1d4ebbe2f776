import type { Kysely } from 'kysely';

/** Cluster-wide rate limits: how much of each limit's current window the nodes together have taken. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_windows')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_windows_pk', ['key', 'window_start'])
    .execute();
  await db.schema.createIndex('rate_windows_start').on('rate_windows').columns(['window_start']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
