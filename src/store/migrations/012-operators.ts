import type { Kysely } from 'kysely';

/**
 * Operator connections for real: sealed connector secrets, a cost per part on routes (consumption shows cost and
 * margin by route and connector), bind slots shared between nodes, the nodes themselves (to share slots fairly),
 * receipts that arrived before their message's submit was recorded, and which connector a waiting message waits for.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('connectors').addColumn('secrets', 'text').execute();
  await db.schema.alterTable('routes').addColumn('cost_per_part', 'bigint').execute();
  await db.schema.alterTable('dispatch_queue').addColumn('waiting_on', 'text').execute();
  await db.schema.alterTable('dispatch_queue').addColumn('previous_claimant', 'text').execute();
  await db.schema.alterTable('messages').addColumn('route', 'text').execute();

  await db.schema
    .createTable('route_rollups')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('messages', 'integer', (c) => c.notNull())
    .addColumn('parts', 'integer', (c) => c.notNull())
    .addColumn('cost', 'bigint', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('route_rollups_pk', ['day', 'route', 'connector'])
    .execute();

  await db.schema
    .createTable('nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('connector_slots')
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('node', 'text')
    .addColumn('lease_until', 'bigint')
    .addPrimaryKeyConstraint('connector_slots_pk', ['connector', 'slot'])
    .execute();

  await db.schema
    .createTable('unmatched_receipts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('upstream_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('unmatched_receipts_due').on('unmatched_receipts').columns(['next_attempt_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
