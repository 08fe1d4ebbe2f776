import type { Logger } from 'pino';
import type { MessagingService } from '../services/messaging/service.ts';
import type { Store } from '../store/db.ts';

/**
 * Ends messages the operator accepted but never reported on: past their validity they are UNDELIVERED / EXPIRED
 * (they reached an operator, so they are not refunded).
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly logger: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.sweep(Date.now()).finally(() => (this.running = null));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  async sweep(now: number): Promise<number> {
    try {
      const rows = await this.store.db
        .selectFrom('messages')
        .select('id')
        .where('status', '=', 'ENROUTE')
        .where('validity_until', '<', now)
        .where('upstream_id', 'is not', null)
        .limit(1000)
        .execute();
      if (rows.length === 0) return 0;
      await this.messaging.applyStatusNow(rows.map((r) => ({ messageId: r.id, status: 'UNDELIVERED' as const, detail: 'EXPIRED', at: now })));
      return rows.length;
    } catch (err) {
      this.logger.error({ err }, 'expiry sweep failed');
      return 0;
    }
  }
}
