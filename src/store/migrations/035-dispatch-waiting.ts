import { type Kysely, sql } from 'kysely';

/**
 * Queued messages that are not due yet (scheduled for later, or backed off after a temporary error) wait apart from
 * the ready ones: `waiting` 1, in an index of their own by due time, until a claim finds them due and makes them
 * ready (`promoteDueDispatch`); the claims read the ready ones alone, in rank order. Before, the claims read the
 * lane's rank index, where a scheduled message sits at the front (it takes no turn until due): 100,000 messages
 * scheduled for tomorrow made every claim read past all of them (11 ms on SQLite, on the thread that serves HTTP).
 * Rows queued before wait (the default) and are made ready by the first claim that finds them due.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('dispatch_queue')
    .addColumn('waiting', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex('dispatch_queue_ready').on('dispatch_queue').columns(['lane', 'rank']).where(sql.ref('waiting'), '=', sql.lit(0)).execute();
  await db.schema.createIndex('dispatch_queue_waiting').on('dispatch_queue').column('due_at').where(sql.ref('waiting'), '=', sql.lit(1)).execute();
  await db.schema.dropIndex('dispatch_queue_lane_rank').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
