import type { Kysely } from 'kysely';

/**
 * What operators charge: a rate table per connector (by type, prefix, country and MCC/MNC, per part, with the dates
 * each rate is in force), the cost of each placed message, how a route chooses among its connectors (`strategy`,
 * `allow_loss`, `max_attempts`), and placements rolled up per organisation, connector and country for margins.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connector_rates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('connector_id', 'text', (c) => c.notNull())
    /** SMS, RCS, VOICE, or '' for every type. */
    .addColumn('type', 'text', (c) => c.notNull())
    /** Destination prefix (digits), or ''. */
    .addColumn('prefix', 'text', (c) => c.notNull())
    /** ISO 3166 alpha-2, or ''. */
    .addColumn('country', 'text', (c) => c.notNull())
    /** MCC+MNC, or ''. */
    .addColumn('mcc_mnc', 'text', (c) => c.notNull())
    /** Micro-euros per part. */
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('valid_from', 'bigint', (c) => c.notNull())
    .addColumn('valid_to', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connector_rates_connector').on('connector_rates').columns(['connector_id', 'valid_from']).execute();
  await db.schema.alterTable('messages').addColumn('cost', 'bigint').execute();
  await db.schema
    .alterTable('routes')
    .addColumn('strategy', 'text', (c) => c.notNull().defaultTo('weight'))
    .execute();
  await db.schema
    .alterTable('routes')
    .addColumn('allow_loss', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('routes')
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable('margin_rollups')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('messages', 'bigint', (c) => c.notNull())
    .addColumn('parts', 'bigint', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .addColumn('cost', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('margin_rollups_pk', ['day', 'organisation_id', 'connector', 'country', 'shard'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
