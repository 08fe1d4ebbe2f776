import type { Db } from './db.ts';
import type { WebhookAttemptTable, WebhookDeliveryTable } from './schema.ts';

/** Webhook deliveries (one per event and destination) and the attempts made at each. */

export type WebhookDeliveryRow = WebhookDeliveryTable;
export type WebhookAttemptRow = WebhookAttemptTable;

const INSERT_CHUNK = 300;

/** Writes new deliveries (in the transaction of the events they carry). */
export async function insertDeliveries(db: Db, rows: WebhookDeliveryRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db.insertInto('webhook_deliveries').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }
}

export interface DeliveryFilter {
  channelIds: string[];
  messageId?: string;
  state?: string;
  offset: number;
  limit: number;
}

/** Deliveries of the given channels, newest first. */
export async function listDeliveries(db: Db, f: DeliveryFilter): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('channel_id', 'in', f.channelIds);
  if (f.messageId) query = query.where('message_id', '=', f.messageId);
  if (f.state) query = query.where('state', '=', f.state);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
}

export async function findDelivery(db: Db, id: string): Promise<WebhookDeliveryRow | null> {
  return (await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** A delivery's attempts, oldest first. */
export async function listAttempts(db: Db, deliveryId: string): Promise<WebhookAttemptRow[]> {
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('at').execute();
}

/** Makes a delivery PENDING and due at `now` with no attempt counted, whatever its state. */
export async function resetDelivery(db: Db, id: string, now: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'PENDING', attempts: 0, next_attempt_at: now, lease_until: null, updated_at: now, delivered_at: null })
    .where('id', '=', id)
    .execute();
}
