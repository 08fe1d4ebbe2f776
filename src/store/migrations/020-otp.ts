import { type Kysely, sql } from 'kysely';

/**
 * One-time passwords (their code kept only as an HMAC, with the salt it is derived from under the server's key), the
 * sends of each, a lock row per organisation and number, and organisations' fraud guards (destination countries,
 * velocity limits).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('otps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('code_length', 'integer', (c) => c.notNull())
    .addColumn('alphabet', 'text', (c) => c.notNull())
    .addColumn('code_salt', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('ref_client', 'text')
    .addColumn('last_message_id', 'text', (c) => c.notNull())
    .addColumn('last_channel', 'text', (c) => c.notNull())
    .addColumn('last_sent_at', 'bigint', (c) => c.notNull())
    .addColumn('sends', 'integer', (c) => c.notNull())
    .addColumn('fallback_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .addColumn('due_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .execute();
  await db.schema.createIndex('otps_recipient').on('otps').columns(['organisation_id', 'recipient', 'status']).execute();
  await db.schema.createIndex('otps_due').on('otps').column('due_at').where(sql.ref('status'), '=', 'PENDING').execute();
  await db.schema.createIndex('otps_created').on('otps').column('created_at').execute();

  await db.schema
    .createTable('otp_sends')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('otp_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('otp_sends_recipient').on('otp_sends').columns(['organisation_id', 'recipient', 'sent_at']).execute();
  await db.schema.createIndex('otp_sends_otp').on('otp_sends').column('otp_id').execute();

  await db.schema
    .createTable('otp_recipients')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('otp_recipients_pk', ['organisation_id', 'recipient'])
    .execute();

  await db.schema
    .createTable('organisation_fraud_guards')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey())
    .addColumn('allowed_countries', 'text')
    .addColumn('velocity_limits', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
