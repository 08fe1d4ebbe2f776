import type { Kysely } from 'kysely';

/** Customers' SMPP binds, by the node holding each, so a credential's bind limit holds for the whole cluster. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('smpp_binds')
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('session', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('bound_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('smpp_binds_pk', ['credential_id', 'session'])
    .execute();
  await db.schema.createIndex('smpp_binds_node').on('smpp_binds').column('node').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
