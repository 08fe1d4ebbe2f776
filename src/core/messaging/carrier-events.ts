import { decideReceipt, voiceBillingUnits } from '../../domain/delivery.ts';
import { countOutcomes, settleAttempts, settleEarly } from '../../store/attempts.ts';
import { backoffDelay } from '../../domain/retry.ts';
import { uuidv7 } from '../../domain/ids.ts';
import type { CarrierEvent, InboundEvent, ReceiptEvent } from '../ports.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { findByUpstreamIds, findMessages, type MessageRow } from '../../store/messages.ts';
import { LeasedQueue, UNMATCHED_RECEIPT_QUEUE } from '../../store/queue.ts';
import { dropReceipts, findParked, parkReceipts, rescheduleReceipt, type UnmatchedReceiptRow } from '../../store/unmatched-receipts.ts';
import type { StatusChange } from './status.ts';
import type { MessagingService } from './service.ts';

export type InboundHandler = (events: InboundEvent[]) => Promise<void>;

/** Ends messages of one type an operator reports UNDELIVERED its own way; returns the ids it took care of. */
export type UndeliveredHandler = (messageIds: string[], now: number) => Promise<string[]>;

/** A message an operator reported UNDELIVERED, with the connector that reported it and why. */
export interface FailedDelivery {
  row: MessageRow;
  connector: string;
  detail: string | null;
}

/** Places failed deliveries again through another connector where their route allows; returns the ids it took. */
export type Rerouter = (failed: FailedDelivery[], now: number) => Promise<Set<string>>;

/** Counted as a placement's outcome: the final statuses a receipt reports. */
const FINAL_RECEIPTS = new Set(['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE']);

export interface ReceiptPolicy {
  /** Calls placed in all before a busy or unanswered one is given up. */
  callAttempts: number;
  /** Delay before a busy or unanswered call is placed again. */
  callRetryMs: number;
  /** How long a receipt whose message is not found yet is kept and matched again. */
  unmatchedKeepMs?: number;
}

const UNMATCHED_KEEP_MS = 48 * 3_600_000;
const UNMATCHED_BATCH = 500;

/**
 * Turns connector events into status changes, retries and inbound messages, by the core's policy
 * (`decideReceipt`): a busy or unanswered call is placed again later, a message that never reached the person is
 * refunded. Receipts without Tern's id are matched on the connector's upstream id. One that matches nothing yet —
 * it came before its submit's answer was recorded, or on another bind — is kept and matched again with backoff for a
 * while (`unmatchedKeepMs`), then dropped: it is late for a message purged, or unknown.
 */
export class CarrierEvents {
  readonly unmatched: LeasedQueue<UnmatchedReceiptRow>;
  private readonly keepMs: number;
  private readonly undelivered = new Map<string, UndeliveredHandler>();
  private reroute: Rerouter | null = null;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly inbound: InboundHandler,
    private readonly policy: ReceiptPolicy,
  ) {
    this.unmatched = new LeasedQueue(store, UNMATCHED_RECEIPT_QUEUE);
    this.keepMs = policy.unmatchedKeepMs ?? UNMATCHED_KEEP_MS;
  }

  /**
   * Declared once by the composition root: what an UNDELIVERED report means for a type beyond its status (an RCS
   * message the operator gave up on falls back to SMS). Messages the handler does not take end as reported.
   */
  whenUndelivered(type: string, handler: UndeliveredHandler): void {
    this.undelivered.set(type, handler);
  }

  /** Declared once by the composition root: how a failed delivery goes to another connector of its route. */
  rerouteWith(reroute: Rerouter): void {
    this.reroute = reroute;
  }

  /** The sink connectors emit into; resolves once every event is durably applied (or kept to be matched again). */
  readonly sink = async (events: CarrierEvent[]): Promise<void> => {
    const receipts = events.filter((e): e is ReceiptEvent => e.kind === 'receipt');
    const mo = events.filter((e): e is InboundEvent => e.kind === 'mo');
    const { matched, missing } = await this.match(receipts);
    await this.apply(matched);
    if (missing.length > 0) await this.park(missing, Date.now());
    if (mo.length > 0) await this.inbound(mo);
  };

  private async match(receipts: ReceiptEvent[]): Promise<{ matched: Array<{ r: ReceiptEvent; id: string }>; missing: ReceiptEvent[] }> {
    const unresolved = receipts.filter((r) => !r.messageId && r.upstreamId);
    const byUpstream = new Map<string, string>();
    for (const connector of new Set(unresolved.map((r) => r.connector))) {
      const ids = unresolved.filter((r) => r.connector === connector).map((r) => r.upstreamId!);
      for (const m of await findByUpstreamIds(this.store.db, connector, ids)) byUpstream.set(`${connector}|${m.upstream_id}`, m.id);
    }
    const matched: Array<{ r: ReceiptEvent; id: string }> = [];
    const missing: ReceiptEvent[] = [];
    for (const r of receipts) {
      const id = r.messageId ?? byUpstream.get(`${r.connector}|${r.upstreamId}`);
      if (id !== undefined) matched.push({ r, id });
      else if (r.upstreamId) missing.push(r);
    }
    return { matched, missing };
  }

  private async apply(matched: Array<{ r: ReceiptEvent; id: string }>): Promise<void> {
    // Only a failed delivery can mean another attempt: the message decides (its type, its placements so far).
    const failed = matched.filter((x) => x.r.status === 'UNDELIVERED').map((x) => x.id);
    const rows = new Map<string, MessageRow>((await findMessages(this.store.db, [...new Set(failed)])).map((m) => [m.id, m]));
    const changes: StatusChange[] = [];
    const retries: string[] = [];
    for (const { r, id } of matched) {
      const m = rows.get(id);
      // A report on a placement whose outcome the dispatcher has not recorded yet counts that placement too.
      const placements = m ? m.attempts + (r.upstreamId !== undefined && m.upstream_id !== r.upstreamId ? 1 : 0) : 1;
      const decision = decideReceipt({ type: m?.type ?? '' }, r, placements, this.policy.callAttempts);
      if (decision.kind === 'retry') retries.push(id);
      else {
        // An answered call is billed on how long it was answered, not on its recording.
        const billedUnits = r.status === 'DELIVERED' && r.answeredMs !== undefined ? voiceBillingUnits(r.answeredMs) : undefined;
        changes.push({
          messageId: id,
          status: r.status,
          detail: r.detail ?? null,
          at: r.at,
          refund: decision.refund,
          ...(billedUnits !== undefined && { billedUnits }),
        });
      }
    }
    await this.recordOutcomes(matched);
    const handled = new Set<string>();
    if (this.reroute) {
      const from = new Map(matched.map((x) => [x.id, x.r.connector]));
      const failedNow = changes
        .filter((c) => c.status === 'UNDELIVERED' && rows.has(c.messageId))
        .map((c) => ({ row: rows.get(c.messageId)!, connector: from.get(c.messageId)!, detail: c.detail ?? null }));
      if (failedNow.length > 0) for (const id of await this.reroute(failedNow, Date.now())) handled.add(id);
    }
    for (const [type, handler] of this.undelivered) {
      const ids = changes.filter((c) => c.status === 'UNDELIVERED' && rows.get(c.messageId)?.type === type).map((c) => c.messageId);
      if (ids.length > 0) for (const id of await handler([...new Set(ids)], Date.now())) handled.add(id);
    }
    const rest = changes.filter((c) => !handled.has(c.messageId));
    if (rest.length > 0) await this.messaging.updateStatuses(rest);
    if (retries.length > 0) await this.messaging.placeAgain(retries, Date.now() + this.policy.callRetryMs);
  }

  /**
   * Ends each placement a final receipt reports on, and adds it to its connector's delivery counters for the
   * destination network and hour: a receipt repeated ends nothing and counts nowhere. One that came before its
   * placement was recorded ends it when it is, and counts then.
   */
  private async recordOutcomes(matched: Array<{ r: ReceiptEvent; id: string }>): Promise<void> {
    const finals = matched
      .filter((x) => FINAL_RECEIPTS.has(x.r.status))
      .map((x) => ({ messageId: x.id, connector: x.r.connector, outcome: x.r.status, detail: x.r.detail ?? null, at: x.r.at }));
    if (finals.length === 0) return;
    await inTransaction(this.store, async (trx) => {
      const settled = await settleAttempts(trx, finals);
      const ended = new Set(settled.map((s) => `${s.messageId}|${s.connector}`));
      settled.push(
        ...(await settleEarly(
          trx,
          finals.filter((f) => !ended.has(`${f.messageId}|${f.connector}`)),
        )),
      );
      await countOutcomes(trx, settled);
    });
  }

  private async park(receipts: ReceiptEvent[], now: number): Promise<void> {
    await inTransaction(this.store, async (trx) => {
      await parkReceipts(
        trx,
        receipts.map((r) => ({
          id: uuidv7(now),
          connector: r.connector,
          upstream_id: r.upstreamId!,
          event: JSON.stringify(r),
          attempts: 0,
          next_attempt_at: now + backoffDelay(1, 500, 300_000),
          lease_until: null,
          expires_at: now + this.keepMs,
        })),
      );
      await this.unmatched.wake(trx);
    });
  }

  /**
   * Messages were just placed: receipts that came for them before their placement was recorded (a fast operator)
   * are applied now rather than at their next retry.
   */
  async placed(placements: Array<{ connector: string; upstreamId: string }>): Promise<void> {
    const byConnector = new Map<string, string[]>();
    for (const p of placements) {
      const ids = byConnector.get(p.connector);
      if (ids) ids.push(p.upstreamId);
      else byConnector.set(p.connector, [p.upstreamId]);
    }
    for (const [connector, ids] of byConnector) {
      const rows = await findParked(this.store.db, connector, ids);
      if (rows.length === 0) continue;
      const { matched } = await this.match(rows.map((r) => JSON.parse(r.event) as ReceiptEvent));
      await this.apply(matched);
      const applied = new Set(matched.map((m) => m.r.upstreamId));
      await dropReceipts(
        this.store.db,
        rows.filter((r) => applied.has(r.upstream_id)).map((r) => r.id),
      );
    }
  }

  /** Matches kept receipts again; returns when the next one falls due. */
  async retryUnmatched(now: number, leaseMs = 30_000): Promise<number | null> {
    for (;;) {
      const { rows, nextDue } = await this.unmatched.claimWithNextDue({ now, limit: UNMATCHED_BATCH, leaseMs });
      let rescheduled = Infinity;
      if (rows.length > 0) {
        const events = rows.map((r) => JSON.parse(r.event) as ReceiptEvent);
        const { matched, missing } = await this.match(events);
        await this.apply(matched);
        const stillMissing = new Set(missing.map((e) => `${e.connector}|${e.upstreamId}`));
        const done: string[] = [];
        for (const r of rows) {
          const attempts = r.attempts + 1;
          const next = now + backoffDelay(attempts + 1, 500, 300_000);
          if (!stillMissing.has(`${r.connector}|${r.upstream_id}`) || next > Number(r.expires_at)) done.push(r.id);
          else {
            await rescheduleReceipt(this.store.db, r.id, attempts, next);
            rescheduled = Math.min(rescheduled, next);
          }
        }
        await dropReceipts(this.store.db, done);
      }
      if (rows.length < UNMATCHED_BATCH) {
        const next = Math.min(nextDue ?? Infinity, rescheduled);
        return next === Infinity ? null : next;
      }
    }
  }
}
