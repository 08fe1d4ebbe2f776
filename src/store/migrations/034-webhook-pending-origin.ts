import { type Kysely, sql } from 'kysely';

/**
 * Pending deliveries by origin, oldest due first. A sender whose queue for one origin is full claims for the others
 * origin by origin through this index (`claimFromGroups`), instead of reading, through the due index, past every
 * delivery due to the full one: a slow receiver's backlog of 200,000 made each of those claims read them all (65–80 ms
 * on SQLite, on the thread that serves HTTP; 113–205 ms on PostgreSQL).
 *
 * The due index, which the claims alone read and only for pending deliveries, now holds those alone: a delivery that
 * ends gets no new entry in it, so on PostgreSQL the two partial indexes cost the index writes the (state, due) one did
 * (SQLite deletes the ended delivery's entry from both).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending_origin')
    .on('webhook_deliveries')
    .columns(['origin', 'next_attempt_at'])
    .where(sql.ref('state'), '=', sql.lit('PENDING'))
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_pending_due')
    .on('webhook_deliveries')
    .columns(['next_attempt_at'])
    .where(sql.ref('state'), '=', sql.lit('PENDING'))
    .execute();
  await db.schema.dropIndex('webhook_deliveries_due').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
