import type { Db } from './db.ts';
import type { MessageEventRow, MessageRow } from './messages.ts';

/** Ids of events from `fromId` (inclusive) up to `toId` (inclusive): a range of the primary key, no row read. */
export async function eventIdsBetween(db: Db, fromId: string, toId: string): Promise<string[]> {
  const rows = await db.selectFrom('message_events').select('id').where('id', '>=', fromId).where('id', '<=', toId).execute();
  return rows.map((r) => r.id);
}

/** Events after `afterId`, in id order, at most `limit`; only of `channelIds` when given. */
export async function eventsAfter(db: Db, afterId: string, limit: number, channelIds?: readonly string[]): Promise<MessageEventRow[]> {
  let q = db.selectFrom('message_events').selectAll().where('id', '>', afterId);
  if (channelIds) q = q.where('channel_id', 'in', channelIds.length > 0 ? [...channelIds] : ['']);
  return q.orderBy('id').limit(limit).execute();
}

export async function eventsByIds(db: Db, ids: readonly string[]): Promise<MessageEventRow[]> {
  const out: MessageEventRow[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    out.push(
      ...(await db
        .selectFrom('message_events')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()),
    );
  }
  return out;
}

export async function messagesByIds(db: Db, ids: readonly string[]): Promise<MessageRow[]> {
  const out: MessageRow[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    out.push(
      ...(await db
        .selectFrom('messages')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()),
    );
  }
  return out;
}
