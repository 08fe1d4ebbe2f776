import { sql } from 'kysely';
import type { Db } from './db.ts';
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

export async function insertConversation(db: Db, row: ConversationRow): Promise<void> {
  await db.insertInto('rcs_conversations').values(row).execute();
}

export async function addConversationMessage(db: Db, conversationId: string, messageId: string, at: number): Promise<void> {
  await db
    .insertInto('rcs_conversation_messages')
    .values({ conversation_id: conversationId, message_id: messageId, at })
    .onConflict((oc) => oc.columns(['conversation_id', 'message_id']).doNothing())
    .execute();
}

/** Whether one of the conversation's messages carries its charge (a refunded one no longer does). */
export async function isConversationCharged(db: Db, conversationId: string): Promise<boolean> {
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
  let q = db
    .selectFrom('rcs_conversations')
    .selectAll()
    .where('channel_id', 'in', f.channelIds)
    .where('opened_at', '>=', f.from)
    .where('opened_at', '<', f.to);
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
