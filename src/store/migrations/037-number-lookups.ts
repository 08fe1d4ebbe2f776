import type { Kysely } from 'kysely';

/**
 * Live lookup results kept per number (`number_lookups`, until `expires_at`), read by every node's router so a number
 * ported to another network is routed to it; and the routes' `lookup_before_send` option (a live lookup before each
 * send through the route).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('number_lookups')
    .addColumn('msisdn', 'text', (c) => c.primaryKey())
    .addColumn('valid', 'integer')
    .addColumn('reachable', 'integer')
    .addColumn('ported', 'integer')
    .addColumn('roaming', 'integer')
    .addColumn('current_mcc_mnc', 'text')
    .addColumn('current_network', 'text')
    .addColumn('original_mcc_mnc', 'text')
    .addColumn('original_network', 'text')
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('looked_up_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('number_lookups_expires').on('number_lookups').column('expires_at').execute();
  await db.schema
    .alterTable('routes')
    .addColumn('lookup_before_send', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
