import { type Kysely, sql } from 'kysely';

/**
 * Deliveries of one message go in order: a claim skips a delivery while an earlier one of its message is pending.
 * That look, made for every candidate of every claim, goes by this index of pending deliveries alone. Through the
 * message index and the (state, due) index it read, on PostgreSQL, every entry the state index still held for
 * deliveries no longer pending (an update of the state leaves one behind until vacuum): up to 28,000, 0.3 ms a
 * look, 30 ms a claim, in a 20,000-message run.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending_message')
    .on('webhook_deliveries')
    .columns(['message_id', 'id'])
    .where(sql.ref('state'), '=', sql.lit('PENDING'))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
