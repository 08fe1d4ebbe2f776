import type { Kysely } from 'kysely';

/**
 * The deliver_sm window of a credential's sessions: how many receipts and MO one session sends before it waits for
 * their deliver_sm_resp (0: the node's TERN_SMPP_WINDOW). SMSCs set it per account, as clients differ.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('smpp_credentials')
    .addColumn('deliver_window', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
