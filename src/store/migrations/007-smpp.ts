import type { Kysely } from 'kysely';

/** SMPP credentials of SMS channels, and the deliver_sm (receipts, MO) waiting for a receiver bind. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('smpp_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('system_id', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('allowed_ips', 'text', (c) => c.notNull())
    .addColumn('max_binds', 'integer', (c) => c.notNull())
    .addColumn('tps', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('smpp_credentials_channel').on('smpp_credentials').columns(['channel_id']).execute();

  await db.schema
    .createTable('smpp_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text')
    .addColumn('pdus', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('smpp_outbox_due').on('smpp_outbox').columns(['credential_id', 'next_attempt_at']).execute();
  await db.schema.createIndex('smpp_outbox_expiry').on('smpp_outbox').columns(['expires_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
