import { type Kysely, sql } from 'kysely';

/**
 * Scheduled messages in an index of their own, as the ones on their way are (messages_enroute_validity): the look
 * for messages nothing owns reads only those, instead of every message stored (seconds on a database of millions,
 * with every request waiting on SQLite). Only scheduled messages are in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('messages_scheduled').on('messages').column('send_at').where(sql.ref('status'), '=', sql.lit('SCHEDULED')).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
