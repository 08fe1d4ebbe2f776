import { type Kysely, sql } from 'kysely';

/**
 * Rollups in shards: a counter row that every node's transactions add to (a tenant's day, a route's day) is a lock
 * they queue on, so each writing transaction picks one of a few rows of the same key (`shard`) and readers add them
 * up. The tables are rebuilt (SQLite cannot change a primary key), their rows kept in shard 0.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('consumption_rollups_sharded')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('mcc_mnc', 'text', (c) => c.notNull())
    .addColumn('price_kind', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('messages', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consumption_rollups_shard_pk', ['organisation_id', 'channel_id', 'day', 'status', 'mcc_mnc', 'price_kind', 'shard'])
    .execute();
  await sql`insert into consumption_rollups_sharded
      (organisation_id, channel_id, channel_type, day, status, mcc_mnc, price_kind, shard, quantity, messages, amount)
    select organisation_id, channel_id, channel_type, day, status, mcc_mnc, price_kind, 0, quantity, messages, amount
    from consumption_rollups`.execute(db);
  await db.schema.dropTable('consumption_rollups').execute();
  await db.schema.alterTable('consumption_rollups_sharded').renameTo('consumption_rollups').execute();
  await db.schema.createIndex('consumption_rollups_channel_day').on('consumption_rollups').columns(['channel_id', 'day']).execute();

  await db.schema
    .createTable('route_rollups_sharded')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('messages', 'integer', (c) => c.notNull())
    .addColumn('parts', 'integer', (c) => c.notNull())
    .addColumn('cost', 'bigint', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('route_rollups_shard_pk', ['day', 'route', 'connector', 'shard'])
    .execute();
  await sql`insert into route_rollups_sharded (day, route, connector, shard, messages, parts, cost, charged)
    select day, route, connector, 0, messages, parts, cost, charged from route_rollups`.execute(db);
  await db.schema.dropTable('route_rollups').execute();
  await db.schema.alterTable('route_rollups_sharded').renameTo('route_rollups').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
