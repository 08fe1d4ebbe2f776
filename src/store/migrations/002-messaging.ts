import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('payer_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('sender', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('encoding', 'text')
    .addColumn('part_count', 'integer', (c) => c.notNull())
    .addColumn('length', 'integer', (c) => c.notNull())
    .addColumn('price', 'bigint', (c) => c.notNull())
    .addColumn('price_kind', 'text')
    .addColumn('charged', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_detail', 'text')
    .addColumn('status_at', 'bigint', (c) => c.notNull())
    .addColumn('ref_client', 'text')
    .addColumn('callback_url_status', 'text')
    .addColumn('callback_url_mo', 'text')
    .addColumn('accepted_at', 'bigint', (c) => c.notNull())
    .addColumn('send_at', 'bigint', (c) => c.notNull())
    .addColumn('validity_until', 'bigint')
    .addColumn('origin_message_id', 'text')
    .addColumn('country', 'text')
    .addColumn('mcc_mnc', 'text')
    .addColumn('network', 'text')
    .addColumn('upstream_id', 'text')
    .addColumn('connector', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('smpp_credential_id', 'text')
    .addColumn('registered_delivery', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('extra', 'text')
    .execute();
  await db.schema.createIndex('messages_channel_accepted').on('messages').columns(['channel_id', 'direction', 'accepted_at']).execute();
  // Partial indexes: a message sits in them only while it matters (in flight; part of a campaign), so the
  // common write path does not maintain them.
  await db.schema.createIndex('messages_enroute_validity').on('messages').columns(['validity_until']).where(sql.ref('status'), '=', 'ENROUTE').execute();
  await db.schema.createIndex('messages_campaign').on('messages').columns(['campaign_id']).where(sql.ref('campaign_id'), 'is not', null).execute();
  await db.schema.createIndex('messages_upstream').on('messages').columns(['connector', 'upstream_id']).execute();
  await db.schema.createIndex('messages_last_mt').on('messages').columns(['organisation_id', 'recipient', 'accepted_at']).execute();

  await db.schema
    .createTable('dispatch_queue')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'bigint')
    .execute();
  await db.schema.createIndex('dispatch_queue_due').on('dispatch_queue').columns(['due_at']).execute();

  await db.schema
    .createTable('message_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('message_events_message').on('message_events').columns(['message_id', 'id']).execute();

  await db.schema
    .createTable('consumption_rollups')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('mcc_mnc', 'text', (c) => c.notNull())
    .addColumn('price_kind', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('messages', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consumption_rollups_pk', ['organisation_id', 'channel_id', 'day', 'status', 'mcc_mnc', 'price_kind'])
    .execute();
  await db.schema.createIndex('consumption_rollups_channel_day').on('consumption_rollups').columns(['channel_id', 'day']).execute();

  await db.schema
    .createTable('blacklist')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('msisdn', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('blacklist_pk', ['organisation_id', 'msisdn'])
    .execute();

  await db.schema
    .createTable('simulator_submissions')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('upstream_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('accepted', 'integer', (c) => c.notNull())
    .addColumn('duplicate_submits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('receipt_status', 'text')
    .addColumn('receipt_due_at', 'bigint')
    .addColumn('emitted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('simulator_submissions_due').on('simulator_submissions').columns(['emitted', 'receipt_due_at']).execute();

  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('ref_client', 'text')
    .addColumn('send_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('recipients', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
