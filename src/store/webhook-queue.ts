import { sql } from 'kysely';
import { uuidv7 } from '../core/domain/ids.ts';
import { type Db, inTransaction, type Store } from './db.ts';
import type { WebhookDeliveryTable } from './schema.ts';

/** Webhook deliveries as a queue: written with their event, claimed by the sender, settled after each attempt. */

export type WebhookDeliveryRow = WebhookDeliveryTable;

export async function insertDeliveries(db: Db, rows: WebhookDeliveryRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 300) {
    await db.insertInto('webhook_deliveries').values(rows.slice(i, i + 300)).execute();
  }
}

/** Hands claimed deliveries back, to be tried at `until`. */
export async function deferDeliveries(db: Db, ids: string[], until: number): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ next_attempt_at: until, lease_until: null }).where('id', 'in', ids).execute();
}

export interface AttemptOutcome {
  deliveryId: string;
  at: number;
  outcome: string;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** The delivery afterwards. */
  state: string;
  attempts: number;
  nextAttemptAt: number;
}

/** Writes attempts and the deliveries' new states in one transaction (one UPDATE per 200 deliveries). */
export async function recordAttempts(store: Store, items: AttemptOutcome[]): Promise<void> {
  await inTransaction(store, async (trx) => {
    await trx
      .insertInto('webhook_attempts')
      .values(
        items.map((i) => ({
          id: uuidv7(i.at),
          delivery_id: i.deliveryId,
          at: i.at,
          outcome: i.outcome,
          http_status: i.httpStatus,
          latency_ms: Math.round(i.latencyMs),
          error: i.error,
        })),
      )
      .execute();
    const updates = items.map((i) => {
      const deliveredAt = i.state === 'DELIVERED' ? i.at : null;
      return sql`(${i.deliveryId}, ${i.state}, ${i.attempts}, ${i.nextAttemptAt}, ${i.httpStatus}, ${i.error}, ${i.at}, ${deliveredAt})`;
    });
    for (let i = 0; i < updates.length; i += 200) {
      await sql`update webhook_deliveries set state = v.column2, attempts = cast(v.column3 as integer),
          next_attempt_at = cast(v.column4 as bigint), lease_until = null,
          last_http_status = cast(v.column5 as integer), last_error = v.column6,
          updated_at = cast(v.column7 as bigint), delivered_at = cast(v.column8 as bigint)
        from (values ${sql.join(updates.slice(i, i + 200))}) as v where webhook_deliveries.id = v.column1`.execute(trx);
    }
  });
}
