import type { Kysely } from 'kysely';

/**
 * Margins kept apart for messages whose cost is not known (no rate in force for their connector and destination, nor
 * a route's cost): how many, and what was charged for them. Their margin is not known either, so it is left out of
 * the margin instead of counted as if they had cost nothing. Rows rolled up before count none of them apart.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('margin_rollups')
    .addColumn('unknown_cost_messages', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('margin_rollups')
    .addColumn('unknown_cost_charged', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
