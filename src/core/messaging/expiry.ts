import type { Store } from '../../store/db.ts';
import { requeueOrphans } from '../../store/dispatch.ts';
import { expiredOnTheirWay, nextValidityEnd } from '../../store/messages.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import type { MessagingService } from './service.ts';

/** How often messages that nothing owns are looked for, and how old they must be (older than any pass in flight). */
const RESCUE_EVERY_MS = 5 * 60_000;
const RESCUE_AFTER_MS = 5 * 60_000;
/** Sweeps come this far apart at least: expiries due together are ended together. */
const SWEEP_GAP_MS = 1_000;

/** Ends expired messages of one type its own way; returns the ids it took care of (the others expire as usual). */
export type ExpiryHandler = (messageIds: string[], now: number) => Promise<string[]>;

/**
 * What the end of a message's validity means. By default: a message the operator took but never reported on ends
 * UNDELIVERED / EXPIRED (it reached an operator, so its charge stays). A message type may decide otherwise (RCS
 * falls back to SMS): the handlers are declared once by the composition root.
 */
export class Expiry {
  readonly batchSize = 1000;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly handlers: Readonly<Record<string, ExpiryHandler>>,
  ) {}

  /**
   * Runs the per-type handlers on expired messages (the sweep's, and the dispatcher's for messages whose validity
   * ended while still queued); returns the ids they took care of.
   */
  async handleByType(rows: Array<{ id: string; type: string }>, now: number): Promise<Set<string>> {
    const handled = new Set<string>();
    for (const [type, handler] of Object.entries(this.handlers)) {
      const ids = rows.filter((r) => r.type === type).map((r) => r.id);
      if (ids.length > 0) for (const id of await handler(ids, now)) handled.add(id);
    }
    return handled;
  }

  private lastRescue = Number.NEGATIVE_INFINITY;

  /**
   * Puts back on the queue messages on their way that nothing owns (not final, never placed, no queue row), so the
   * dispatcher ends them one way or another; returns how many. Dispatch writes outcomes and queue changes together,
   * so only data left by an older version or a bug can be found here.
   */
  async rescue(now: number): Promise<number> {
    const n = await requeueOrphans(this.store.db, now, now - RESCUE_AFTER_MS, this.batchSize);
    if (n > 0) await new LeasedQueue(this.store, DISPATCH_QUEUE).wake(this.store.db);
    return n;
  }

  /**
   * Ends the messages whose validity ran out at the operator, if any did (one statement when none did); answers when
   * to look again: when the next validity ends (a message placed meanwhile here asks for its own), null when nothing
   * on its way has one. Now and then it also puts back on the queue messages nothing owns.
   */
  async pass(now: number): Promise<number | null> {
    if (now - this.lastRescue >= RESCUE_EVERY_MS) {
      this.lastRescue = now;
      await this.rescue(now);
    }
    const next = await nextValidityEnd(this.store.db, now);
    if (next === null || next > now) return next;
    const found = await this.sweep(now);
    return found >= this.batchSize ? now : now + SWEEP_GAP_MS;
  }

  /** Ends one batch of messages whose validity ran out at the operator; returns how many it found. */
  async sweep(now: number): Promise<number> {
    const rows = await expiredOnTheirWay(this.store.db, now, this.batchSize);
    if (rows.length === 0) return 0;
    const handled = await this.handleByType(rows, now);
    const rest = rows.filter((r) => !handled.has(r.id));
    if (rest.length > 0) {
      await this.messaging.applyStatusNow(rest.map((r) => ({ messageId: r.id, status: 'UNDELIVERED' as const, detail: 'EXPIRED', at: now })));
    }
    return rows.length;
  }
}
