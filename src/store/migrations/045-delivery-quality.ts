import type { Kysely } from 'kysely';

/**
 * Each placement of a message (its connector, route, cost, and how its delivery ended), delivery counters per
 * connector, destination network and hour (receipts add to them; quality is read from them, never from messages), and
 * a route's lowest acceptable delivery rate.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('message_attempts')
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('upstream_id', 'text', (c) => c.notNull())
    /** The destination network it was placed for: MCC+MNC, else the country, else ''. */
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('cost', 'bigint')
    .addColumn('placed_at', 'bigint', (c) => c.notNull())
    .addColumn('outcome', 'text')
    .addColumn('detail', 'text')
    .addColumn('ended_at', 'bigint')
    .addPrimaryKeyConstraint('message_attempts_pk', ['message_id', 'attempt'])
    .execute();
  await db.schema
    .createTable('delivery_quality')
    .addColumn('connector', 'text', (c) => c.notNull())
    /** MCC+MNC when known, else the country, else ''. */
    .addColumn('network', 'text', (c) => c.notNull())
    /** The hour's first instant (epoch ms). */
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered', 'bigint', (c) => c.notNull())
    .addColumn('failed', 'bigint', (c) => c.notNull())
    /** Sum of the times from placement to DELIVERED, ms. */
    .addColumn('delivered_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_quality_pk', ['connector', 'network', 'bucket', 'shard'])
    .execute();
  await db.schema.createIndex('delivery_quality_bucket').on('delivery_quality').columns(['bucket']).execute();
  /** Basis points (0–10000): connectors delivering less are left out; null: none. */
  await db.schema.alterTable('routes').addColumn('min_delivery_rate', 'integer').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
