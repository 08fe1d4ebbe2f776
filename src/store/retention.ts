import { sql } from 'kysely';
import { type Db, inTransaction, type Store } from './db.ts';

/**
 * Deleting what has outlived its retention, a small batch at a time (each batch its own short transaction, so sends
 * are never held up). Rows are found by their time-ordered ids (UUIDv7: the first 48 bits are the creation time in
 * ms), through primary keys, with no index of their own to maintain on the write path.
 */

/** The smallest UUIDv7 of millisecond `ms`: every id made before `ms` sorts below it. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** Statuses after which nothing more happens to a message (MO messages are RECEIVED). */
const SETTLED = ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'READ', 'CANCELLED', 'RECEIVED'];

/** Deletes up to `limit` settled messages created before `before`, with their events, webhooks, audio and links. */
export async function pruneMessages(store: Store, before: number, limit: number): Promise<number> {
  return inTransaction(store, async (trx) => {
    const ids = (
      await trx.selectFrom('messages').select('id').where('id', '<', uuidv7Floor(before)).where('status', 'in', SETTLED).orderBy('id').limit(limit).execute()
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    await deleteWebhooksOf(trx, ids);
    await trx.deleteFrom('message_events').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('voice_audio').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('rcs_conversation_messages').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('short_link_clicks').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('short_links').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('message_attempts').where('message_id', 'in', ids).execute();
    await trx.deleteFrom('messages').where('id', 'in', ids).execute();
    return ids.length;
  });
}

async function deleteWebhooksOf(db: Db, messageIds: string[]): Promise<void> {
  const deliveries = db.selectFrom('webhook_deliveries').select('id').where('message_id', 'in', messageIds);
  await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
  await db.deleteFrom('webhook_deliveries').where('message_id', 'in', messageIds).execute();
}

/** Deletes up to `limit` webhook deliveries no longer pending, created before `before`, with their attempts. */
export async function pruneWebhookDeliveries(store: Store, before: number, limit: number): Promise<number> {
  return inTransaction(store, async (trx) => {
    const ids = (
      await trx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', '<', `msg_${uuidv7Floor(before).replace(/-/g, '')}`)
        .where('state', '!=', sql.lit('PENDING'))
        .orderBy('id')
        .limit(limit)
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
    await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    return ids.length;
  });
}

/** Deletes up to `limit` stored voice recordings of messages created before `before`. */
export async function pruneVoiceAudio(store: Store, before: number, limit: number): Promise<number> {
  const ids = (await store.db.selectFrom('voice_audio').select('message_id').where('message_id', '<', uuidv7Floor(before)).limit(limit).execute()).map(
    (r) => r.message_id,
  );
  if (ids.length === 0) return 0;
  await store.db.deleteFrom('voice_audio').where('message_id', 'in', ids).execute();
  return ids.length;
}

/** Deletes up to `limit` inbound messages no channel took, and RCS conversations, from before `before`. */
export async function pruneInboundLeftovers(store: Store, before: number, limit: number): Promise<number> {
  const floor = uuidv7Floor(before);
  const unrouted = (await store.db.selectFrom('unrouted_inbound').select('id').where('id', '<', floor).limit(limit).execute()).map((r) => r.id);
  if (unrouted.length > 0) await store.db.deleteFrom('unrouted_inbound').where('id', 'in', unrouted).execute();
  const conversations = (
    await store.db.selectFrom('rcs_conversations').select('id').where('id', '<', floor).where('expires_at', '<', before).limit(limit).execute()
  ).map((r) => r.id);
  if (conversations.length > 0) {
    await store.db.deleteFrom('rcs_conversation_messages').where('conversation_id', 'in', conversations).execute();
    await store.db.deleteFrom('rcs_conversations').where('id', 'in', conversations).execute();
  }
  return unrouted.length + conversations.length;
}

/** Deletes up to `limit` lookup results that expired by `now` (a result refreshed meanwhile stays). */
export async function pruneNumberLookups(store: Store, now: number, limit: number): Promise<number> {
  const numbers = (await store.db.selectFrom('number_lookups').select('msisdn').where('expires_at', '<=', now).limit(limit).execute()).map((r) => r.msisdn);
  if (numbers.length === 0) return 0;
  await store.db.deleteFrom('number_lookups').where('msisdn', 'in', numbers).where('expires_at', '<=', now).execute();
  return numbers.length;
}

/** Deletes up to `limit` hourly delivery counters of hours before `before` (route quality looks at a week at most). */
export async function pruneDeliveryQuality(store: Store, before: number, limit: number): Promise<number> {
  const old = await store.db.selectFrom('delivery_quality').select(['connector', 'network', 'bucket']).where('bucket', '<', before).limit(limit).execute();
  if (old.length === 0) return 0;
  await store.db
    .deleteFrom('delivery_quality')
    .where('bucket', '<', before)
    .where('bucket', 'in', [...new Set(old.map((o) => o.bucket))])
    .execute();
  return old.length;
}
