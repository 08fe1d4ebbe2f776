import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * Parts of concatenated SMPP submits waiting for the rest of their message, where every node sees them: a customer's
 * binds on several nodes may each carry some of a message's parts. A message made whole keeps its parts, marked
 * taken, until the message is stored, so another node can store it if the one that took it stops first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema
    .createTable('smpp_concat_parts')
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('ref', 'integer', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('payload', binary, (c) => c.notNull())
    .addColumn('data_coding', 'integer', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('taken_at', 'bigint')
    .addColumn('taken_by', 'text')
    .addPrimaryKeyConstraint('smpp_concat_parts_pk', ['credential_id', 'message_id', 'seq'])
    .execute();
  await db.schema.createIndex('smpp_concat_parts_assembly').on('smpp_concat_parts').columns(['credential_id', 'source', 'destination', 'ref']).execute();
  await db.schema.createIndex('smpp_concat_parts_expiry').on('smpp_concat_parts').column('expires_at').execute();
  await db.schema.createIndex('smpp_concat_parts_taken').on('smpp_concat_parts').column('taken_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
