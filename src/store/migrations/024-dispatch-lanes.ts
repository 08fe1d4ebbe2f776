import { type Kysely, sql } from 'kysely';

/**
 * Dispatch order: each queued message has a lane (0: OTP and TRANSACTIONAL, 1: MARKETING) and a rank (when it comes
 * up, fair between organisations); claims take the lowest ranks of a lane. Rows queued before take their due time as
 * their rank, in the first lane.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('dispatch_queue')
    .addColumn('lane', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('dispatch_queue')
    .addColumn('rank', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update dispatch_queue set rank = due_at`.execute(db);
  await db.schema.createIndex('dispatch_queue_lane_rank').on('dispatch_queue').columns(['lane', 'rank']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
