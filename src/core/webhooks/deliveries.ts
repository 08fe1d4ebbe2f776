import type { Store } from '../../store/db.ts';
import { findDelivery, listAttempts, listDeliveries, resetDelivery, type WebhookAttemptRow, type WebhookDeliveryRow } from '../../store/webhooks.ts';
import { fail } from '../errors.ts';

export interface DeliveryWithAttempts {
  delivery: WebhookDeliveryRow;
  /** Oldest first. */
  attempts: WebhookAttemptRow[];
}

export interface DeliveryQuery {
  /** The channels the caller may read. */
  channelIds: string[];
  messageId?: string;
  state?: string;
  page: number;
  pageSize: number;
}

/** The webhook deliveries of a caller's channels, each with its attempts, and sending one again. */
export class WebhookDeliveries {
  constructor(private readonly store: Store) {}

  private async withAttempts(delivery: WebhookDeliveryRow): Promise<DeliveryWithAttempts> {
    return { delivery, attempts: await listAttempts(this.store.db, delivery.id) };
  }

  /** A delivery of one of these channels; 404 for any other. */
  private async find(id: string, channelIds: string[]): Promise<WebhookDeliveryRow> {
    const d = await findDelivery(this.store.db, id);
    if (!d || !channelIds.includes(d.channel_id)) fail('NOT_FOUND', `webhook delivery ${id} not found`);
    return d;
  }

  /** Newest first. */
  async list(q: DeliveryQuery): Promise<DeliveryWithAttempts[]> {
    const rows = await listDeliveries(this.store.db, {
      channelIds: q.channelIds,
      ...(q.messageId ? { messageId: q.messageId } : {}),
      ...(q.state ? { state: q.state } : {}),
      offset: (q.page - 1) * q.pageSize,
      limit: q.pageSize,
    });
    return Promise.all(rows.map((d) => this.withAttempts(d)));
  }

  async get(id: string, channelIds: string[]): Promise<DeliveryWithAttempts> {
    return this.withAttempts(await this.find(id, channelIds));
  }

  /**
   * Makes the delivery due again now, whatever its state: PENDING, no attempt counted, same webhook-id and body.
   * The webhook sender must then be told there is work (see WebhookOutbox.nudge).
   */
  async replay(id: string, channelIds: string[], now = Date.now()): Promise<void> {
    const d = await this.find(id, channelIds);
    await resetDelivery(this.store.db, d.id, now);
  }
}
