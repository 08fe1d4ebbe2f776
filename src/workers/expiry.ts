import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { MessagingService } from '../core/messaging/service.ts';
import type { Store } from '../store/db.ts';

/** Ends expired messages of one type its own way; returns the ids it took care of (the others expire as usual). */
export type ExpiryHandler = (messageIds: string[], now: number) => Promise<string[]>;

/**
 * Ends messages the operator accepted but never reported on: past their validity they are UNDELIVERED / EXPIRED
 * (they reached an operator, so they are not refunded).
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private readonly handlers = new Map<string, ExpiryHandler>();

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly logger: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  /** Lets a message type decide what expiry means for it (RCS: fall back to SMS). */
  setHandler(type: string, handler: ExpiryHandler): void {
    this.handlers.set(type, handler);
  }

  /**
   * Runs the per-type handlers on expired messages (the sweeper's, and the dispatcher's for messages whose validity
   * ended while still queued); returns the ids they took care of.
   */
  async handleByType(rows: Array<{ id: string; type: string }>, now: number): Promise<Set<string>> {
    const handled = new Set<string>();
    for (const [type, handler] of this.handlers) {
      const ids = rows.filter((r) => r.type === type).map((r) => r.id);
      if (ids.length > 0) for (const id of await handler(ids, now)) handled.add(id);
    }
    return handled;
  }

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
        .select(['id', 'type'])
        .where('status', '=', sql.lit('ENROUTE')) // a literal, so the partial index applies
        .where('validity_until', '<', now)
        .where('upstream_id', 'is not', null)
        .limit(1000)
        .execute();
      if (rows.length === 0) return 0;
      const handled = await this.handleByType(rows, now);
      const rest = rows.filter((r) => !handled.has(r.id));
      if (rest.length > 0) {
        await this.messaging.applyStatusNow(rest.map((r) => ({ messageId: r.id, status: 'UNDELIVERED' as const, detail: 'EXPIRED', at: now })));
      }
      return rows.length;
    } catch (err) {
      this.logger.error({ err }, 'expiry sweep failed');
      return 0;
    }
  }
}
