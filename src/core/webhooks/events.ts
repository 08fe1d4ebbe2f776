import { uuidv7 } from '../../domain/ids.ts';
import type { Db, Store } from '../../store/db.ts';
import { LeasedQueue, WEBHOOK_QUEUE } from '../../store/queue.ts';
import { insertDeliveries } from '../../store/webhooks.ts';

type DeliveryRow = Parameters<typeof insertDeliveries>[1][number];

/** A webhook that is not a message object: an event about something a message belongs to (a one-time password, an alert). */
export interface EventWebhook {
  /** OTP, ALERT: what the deliveries list calls its kind. */
  kind: string;
  /** The event's name in the body (`otp.approved`). */
  event: string;
  /** The message it is about: deliveries of one message go out in order, and are listed with it. */
  messageId: string;
  organisationId: string;
  /** Its deliveries are signed with this channel's secret. */
  channelId: string;
  url: string;
  /** Fields of the body besides `event` and `date`. */
  body: Record<string, unknown>;
  at: number;
}

/**
 * Writes the delivery of an event webhook in the caller's transaction (so it is sent if and only if what it reports
 * is committed), POSTed as `{event, date, …}` with the same signing, retries and replay as message webhooks.
 */
export async function writeEventWebhook(store: Store, db: Db, w: EventWebhook): Promise<void> {
  const row: DeliveryRow = {
    id: `msg_${uuidv7(w.at).replace(/-/g, '')}`,
    event_id: uuidv7(w.at),
    message_id: w.messageId,
    organisation_id: w.organisationId,
    channel_id: w.channelId,
    kind: w.kind,
    method: 'POST',
    url: w.url,
    payload: JSON.stringify({ event: w.event, date: new Date(w.at).toISOString(), ...w.body }),
    state: 'PENDING',
    attempts: 0,
    next_attempt_at: w.at,
    lease_until: null,
    last_http_status: null,
    last_error: null,
    created_at: w.at,
    updated_at: w.at,
    delivered_at: null,
  };
  await insertDeliveries(db, [row]);
  await new LeasedQueue(store, WEBHOOK_QUEUE).wake(db);
}
