import { type Kysely, sql } from 'kysely';

/**
 * Operator connections over SMPP: an inbound message an operator hands over twice under one id (a long message put
 * together on two nodes at once) is stored once; messages waiting for a connector are found by it when it comes back;
 * receipts that came before their message's placement was recorded are found by their upstream id once it is.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('messages_inbound_upstream')
    .unique()
    .on('messages')
    .columns(['connector', 'upstream_id'])
    .where(sql.ref('direction'), '=', 'MO')
    .where(sql.ref('upstream_id'), 'is not', null)
    .execute();
  await db.schema.createIndex('unmatched_receipts_upstream').on('unmatched_receipts').columns(['connector', 'upstream_id']).execute();
  await db.schema.createIndex('dispatch_queue_waiting_on').on('dispatch_queue').columns(['waiting_on']).where(sql.ref('waiting_on'), 'is not', null).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
