import { uuidv7 } from '../domain/ids.ts';
import type { EventHook } from '../messaging/accept.ts';
import type { MessagingService } from '../messaging/service.ts';
import { messageObject } from '../messaging/view.ts';
import type { Channel } from '../../store/channels.ts';
import type { MessageEventRow, MessageRow } from '../../store/messages.ts';
import { insertDeliveries, type WebhookDeliveryRow } from '../../store/webhooks.ts';

export interface WebhookRequest {
  url: string;
  method: 'GET' | 'POST';
  /** GET: the query parameters. */
  query?: Record<string, string>;
  /** POST: the body (JSON text). */
  body?: string;
}

/**
 * Decides the deliveries of one event in another format than the JSON message object (legacy 1.6 GET
 * callbacks…): null lets the default JSON delivery apply, [] sends nothing.
 */
export type WebhookFormatter = (message: MessageRow, event: MessageEventRow, channel: Channel) => WebhookRequest[] | null;

/**
 * Writes a webhook delivery for every event that has somewhere to go, in the transaction that created the event,
 * so an event is never lost between its commit and its delivery. The body is the message object as it is at that
 * moment (what GET answers), rendered once.
 */
export class WebhookOutbox {
  private readonly formatters: WebhookFormatter[] = [];
  private written = false;

  constructor(
    private readonly messaging: MessagingService,
    private readonly publicBase: () => string,
  ) {}

  registerFormatter(formatter: WebhookFormatter): void {
    this.formatters.push(formatter);
  }

  /** Deliveries were changed outside an event transaction (a replay): have the sender look now. */
  nudge(): void {
    this.written = true;
    this.messaging.notifyCommitted();
  }

  /** Whether deliveries were written since the last call: the sender need not look for work otherwise. */
  takeWritten(): boolean {
    const w = this.written;
    this.written = false;
    return w;
  }

  readonly hook: EventHook = async (db, events, messages) => {
    const rows: WebhookDeliveryRow[] = [];
    const base = this.publicBase();
    for (const event of events) {
      const m = messages.get(event.message_id);
      if (!m) continue;
      if (event.kind === 'ACCEPTED' && (event.status === 'ENROUTE' || event.status === 'SCHEDULED')) continue;
      const channel = await this.messaging.channel(m.channel_id, db);
      let requests: WebhookRequest[] | null = null;
      for (const f of this.formatters) {
        requests = f(m, event, channel);
        if (requests !== null) break;
      }
      if (requests === null) {
        const url =
          event.kind === 'MO'
            ? (m.callback_url_mo ?? channel.defaultCallbackUrlMo)
            : (m.callback_url_status ?? channel.defaultCallbackUrlStatus);
        requests = url ? [{ url, method: 'POST', body: JSON.stringify(messageObject(m, channel, base)) }] : [];
      }
      for (const r of requests) {
        rows.push({
          id: `msg_${uuidv7(event.at).replace(/-/g, '')}`,
          event_id: event.id,
          message_id: m.id,
          organisation_id: m.organisation_id,
          channel_id: m.channel_id,
          kind: event.kind === 'MO' ? 'MO' : 'STATUS',
          method: r.method,
          url: r.url,
          payload: r.method === 'GET' ? JSON.stringify(r.query ?? {}) : (r.body ?? ''),
          state: 'PENDING',
          attempts: 0,
          next_attempt_at: event.at,
          lease_until: null,
          last_http_status: null,
          last_error: null,
          created_at: event.at,
          updated_at: event.at,
          delivered_at: null,
        });
      }
    }
    await insertDeliveries(db, rows);
    if (rows.length > 0) this.written = true;
  };
}
