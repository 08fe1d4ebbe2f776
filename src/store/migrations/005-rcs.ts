import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rcs_conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('msisdn', 'text', (c) => c.notNull())
    .addColumn('agent', 'text')
    .addColumn('opened_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('opened_by', 'text')
    .execute();
  await db.schema.createIndex('rcs_conversations_user').on('rcs_conversations').columns(['channel_id', 'msisdn', 'expires_at']).execute();
  await db.schema.createIndex('rcs_conversations_channel_opened').on('rcs_conversations').columns(['channel_id', 'opened_at']).execute();

  await db.schema
    .createTable('rcs_conversation_messages')
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rcs_conversation_messages_pk', ['conversation_id', 'message_id'])
    .execute();
  await db.schema.createIndex('rcs_conversation_messages_message').on('rcs_conversation_messages').columns(['message_id']).execute();

  await db.schema
    .createTable('simulator_rcs_reads')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('emitted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('simulator_rcs_reads_due').on('simulator_rcs_reads').columns(['emitted', 'due_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
