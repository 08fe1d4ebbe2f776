import { type Kysely, sql } from 'kysely';

/**
 * At most one conversation open per channel and user, on every node: conversations of a user never overlap, so the
 * open one is always the latest, and the latest is unique.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('rcs_conversations')
    .addColumn('latest', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Conversations opened twice at once before this change: the one opened last is kept as the latest.
  await sql`
    update rcs_conversations set latest = 1
    where not exists (
      select 1 from rcs_conversations later
      where later.channel_id = rcs_conversations.channel_id
        and later.msisdn = rcs_conversations.msisdn
        and (later.opened_at > rcs_conversations.opened_at
          or (later.opened_at = rcs_conversations.opened_at and later.id > rcs_conversations.id))
    )`.execute(db);
  await db.schema
    .createIndex('rcs_conversations_latest')
    .on('rcs_conversations')
    .columns(['channel_id', 'msisdn'])
    .unique()
    .where(sql.ref('latest'), '=', 1)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
