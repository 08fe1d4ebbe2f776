import type { Store } from '../store/db.ts';
import { pruneDeliveryQuality, pruneInboundLeftovers, pruneMessages, pruneNumberLookups, pruneVoiceAudio, pruneWebhookDeliveries } from '../store/retention.ts';

export interface RetentionSettings {
  /** Settled messages, their events and webhooks, unrouted inbound messages: kept this many days. */
  messageDays: number;
  /** Webhook deliveries no longer pending and their attempts. */
  webhookDays: number;
  /** Voice recordings. */
  audioDays: number;
}

const DAY_MS = 86_400_000;
/** Rows deleted per transaction, and per pruning round of one kind (the rest waits for the next round). */
const BATCH = 500;
const ROUND = 20_000;

/**
 * What Tern keeps and for how long. Each kind is pruned in small batches, so a round never holds the database for
 * long; what a round leaves over is pruned by the next one.
 */
export class Retention {
  constructor(
    private readonly store: Store,
    private readonly settings: RetentionSettings,
  ) {}

  private async rounds(prune: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await prune(BATCH);
      total += n;
      if (n < BATCH || total >= ROUND) return total;
    }
  }

  /** The pruning tasks, for the retention loop. */
  tasks(): Array<{ name: string; prune(now: number): Promise<number> }> {
    const s = this.settings;
    return [
      { name: 'settled messages', prune: (now) => this.rounds((limit) => pruneMessages(this.store, now - s.messageDays * DAY_MS, limit)) },
      {
        name: 'unrouted inbound messages and RCS conversations',
        prune: (now) => this.rounds((limit) => pruneInboundLeftovers(this.store, now - s.messageDays * DAY_MS, limit)),
      },
      { name: 'webhook deliveries', prune: (now) => this.rounds((limit) => pruneWebhookDeliveries(this.store, now - s.webhookDays * DAY_MS, limit)) },
      { name: 'voice recordings', prune: (now) => this.rounds((limit) => pruneVoiceAudio(this.store, now - s.audioDays * DAY_MS, limit)) },
      // Kept for TERN_LOOKUP_CACHE_DAYS from each lookup: routing ignores them once expired, this frees their rows.
      { name: 'expired lookup results', prune: (now) => this.rounds((limit) => pruneNumberLookups(this.store, now, limit)) },
      // Route quality reads a week of hourly counters at most (GET /admin/v1/quality?hours=168).
      { name: 'delivery counters', prune: (now) => this.rounds((limit) => pruneDeliveryQuality(this.store, now - 8 * DAY_MS, limit)) },
    ];
  }
}
