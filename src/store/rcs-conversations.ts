import { sql } from 'kysely';
import type { Db, Dialect } from './db.ts';
import type { MessageRow } from './messages.ts';
import type { RcsConversationTable } from './schema.ts';

export type ConversationRow = RcsConversationTable;

/** The conversation between a channel's agent and a user that is open at `at`, if any. */
export async function findOpenConversation(db: Db, channelId: string, msisdn: string, at: number): Promise<ConversationRow | null> {
  return (
    (await db
      .selectFrom('rcs_conversations')
      .selectAll()
      .where('channel_id', '=', channelId)
      .where('msisdn', '=', msisdn)
      .where('opened_at', '<=', at)
      .where('expires_at', '>', at)
      .orderBy('opened_at', 'desc')
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}

/**
 * Opens a conversation for a user's MO, or answers the one another transaction (on any node) opened for the same
 * user at the same moment. The user's latest conversation with the channel is unique, so of two transactions
 * inserting one at once the second waits for the first and inserts nothing; it then reads the first's back. The
 * latest conversation, when over by `row.opened_at`, stops being the latest first.
 */
export async function openConversation(db: Db, row: Omit<ConversationRow, 'latest'>): Promise<ConversationRow> {
  await db
    .updateTable('rcs_conversations')
    .set({ latest: 0 })
    .where('channel_id', '=', row.channel_id)
    .where('msisdn', '=', row.msisdn)
    .where('latest', '=', 1)
    .where('expires_at', '<=', row.opened_at)
    .execute();
  await db
    .insertInto('rcs_conversations')
    .values({ ...row, latest: 1 })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return db
    .selectFrom('rcs_conversations')
    .selectAll()
    .where('channel_id', '=', row.channel_id)
    .where('msisdn', '=', row.msisdn)
    .where('latest', '=', 1)
    .executeTakeFirstOrThrow();
}

export async function addConversationMessage(db: Db, conversationId: string, messageId: string, at: number): Promise<void> {
  await db
    .insertInto('rcs_conversation_messages')
    .values({ conversation_id: conversationId, message_id: messageId, at })
    .onConflict((oc) => oc.columns(['conversation_id', 'message_id']).doNothing())
    .execute();
}

/**
 * Locks the conversation until the transaction ends and tells whether one of its messages carries its charge. On
 * PostgreSQL a second transaction waits here for the first to end, then sees the message the first charged; SQLite
 * runs one transaction at a time.
 */
export async function lockConversationCharge(db: Db, dialect: Dialect, conversationId: string): Promise<boolean> {
  let lock = db.selectFrom('rcs_conversations').select('id').where('id', '=', conversationId);
  if (dialect === 'postgres') lock = lock.forNoKeyUpdate();
  await lock.execute();
  return isConversationCharged(db, conversationId);
}

/** Whether one of the conversation's messages carries its charge (a refunded one no longer does). */
async function isConversationCharged(db: Db, conversationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('rcs_conversation_messages as cm')
    .innerJoin('messages as m', 'm.id', 'cm.message_id')
    .select('m.id')
    .where('cm.conversation_id', '=', conversationId)
    .where('m.charged', '>', 0)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findConversation(db: Db, id: string): Promise<ConversationRow | null> {
  return (await db.selectFrom('rcs_conversations').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export interface ConversationFilter {
  channelIds: string[];
  /** Opened within [from, to). */
  from: number;
  to: number;
  msisdn?: string;
  /** OPEN: still open at `now`; CLOSED: expired at `now`. */
  state?: { open: boolean; now: number };
  offset: number;
  limit: number;
}

export async function listConversations(db: Db, f: ConversationFilter): Promise<ConversationRow[]> {
  if (f.channelIds.length === 0) return [];
  let q = db.selectFrom('rcs_conversations').selectAll().where('channel_id', 'in', f.channelIds).where('opened_at', '>=', f.from).where('opened_at', '<', f.to);
  if (f.msisdn) q = q.where('msisdn', '=', f.msisdn);
  if (f.state) q = q.where('expires_at', f.state.open ? '>' : '<=', f.state.now);
  return q.orderBy('opened_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
}

/** The messages of each conversation, oldest first. */
export async function conversationMessages(db: Db, conversationIds: string[]): Promise<Map<string, MessageRow[]>> {
  const out = new Map<string, MessageRow[]>(conversationIds.map((id) => [id, []]));
  if (conversationIds.length === 0) return out;
  const rows = await db
    .selectFrom('rcs_conversation_messages as cm')
    .innerJoin('messages as m', 'm.id', 'cm.message_id')
    .selectAll('m')
    .select(sql<string>`cm.conversation_id`.as('conversation_id'))
    .where('cm.conversation_id', 'in', conversationIds)
    .orderBy('m.accepted_at')
    .orderBy('m.id')
    .execute();
  for (const r of rows) {
    const { conversation_id, ...message } = r;
    out.get(conversation_id)?.push(message as MessageRow);
  }
  return out;
}
