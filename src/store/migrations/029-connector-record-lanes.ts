import { type Kysely, sql } from 'kysely';

/**
 * Connector records in lanes, like the dispatch queue: the due records of OTP and TRANSACTIONAL messages (a receipt the
 * simulated network owes, a status to poll for) are handed to their connector by a worker of their own, never behind
 * a campaign's backlog. Claims and next-due looks are made lane by lane, on an index of both. Records written before
 * this change are in the high lane.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('connector_records')
    .addColumn('lane', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.dropIndex('connector_records_due').execute();
  await db.schema
    .createIndex('connector_records_lane_due')
    .on('connector_records')
    .columns(['lane', 'due_at'])
    .where(sql.ref('due_at'), 'is not', null)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
