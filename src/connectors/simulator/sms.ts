import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { DueScheduler } from './due-scheduler.ts';
import type { SimulatorConfig } from '../../config.ts';
import type { Store } from '../../store/db.ts';
import type { CarrierConnector, CarrierEvent, CarrierEventSink, OutboundMessage, ReceiptStatus, SubmitResult } from '../../core/ports.ts';

/**
 * What the simulated operator does with a destination, by its last four digits:
 * 0001 → UNDELIVERED receipt; 0002 → rejected at submit (permanent); 0003 → accepted, never a receipt;
 * 0004 → one temporary submit error, then DELIVERED; anything else → DELIVERED.
 */
export type SimulatedOutcome = 'DELIVERED' | 'UNDELIVERED' | 'REJECTED' | 'NO_RECEIPT' | 'TEMPORARY_THEN_DELIVERED';

export function simulatedOutcome(recipient: string): SimulatedOutcome {
  switch (recipient.slice(-4)) {
    case '0001':
      return 'UNDELIVERED';
    case '0002':
      return 'REJECTED';
    case '0003':
      return 'NO_RECEIPT';
    case '0004':
      return 'TEMPORARY_THEN_DELIVERED';
    default:
      return 'DELIVERED';
  }
}

const RECEIPT_BATCH = 1000;
const SAFETY_POLL_MS = 1000;

/**
 * The embedded operator network. Its state (what it received, what it owes as receipts) lives in the store, so it
 * survives a restart like a real operator would, and a duplicate submit of the same message id is recognised and
 * not sent again.
 */
export class SimulatorCarrier implements CarrierConnector {
  readonly name = 'simulator';
  private sink: CarrierEventSink | null = null;
  private readonly scheduler = new DueScheduler(() => this.tick());
  private readonly extraHandlers: Array<(m: OutboundMessage) => ReceiptStatus | null | undefined> = [];

  constructor(
    private readonly store: Store,
    private readonly config: SimulatorConfig,
    private readonly logger: Logger,
  ) {}

  /** Lets a channel type (RCS, VOICE) decide its receipts; return undefined to keep the SMS rules. */
  addReceiptRule(rule: (m: OutboundMessage) => ReceiptStatus | null | undefined): void {
    this.extraHandlers.push(rule);
  }

  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.scheduler.start();
  }

  async stop(): Promise<void> {
    await this.scheduler.stop();
  }

  async submit(batch: OutboundMessage[]): Promise<SubmitResult[]> {
    if (this.config.submitLatencyMs > 0) await new Promise((r) => setTimeout(r, this.config.submitLatencyMs));
    const now = Date.now();
    const db = this.store.db;
    const results: SubmitResult[] = [];
    let earliestReceipt = Number.POSITIVE_INFINITY;
    await db.transaction().execute(async (trx) => {
      const ids = batch.map((m) => m.id);
      const existing = new Map(
        (await trx.selectFrom('simulator_submissions').selectAll().where('message_id', 'in', ids).execute()).map((r) => [r.message_id, r]),
      );
      const inserts: Array<Record<string, unknown>> = [];
      for (const m of batch) {
        const seen = existing.get(m.id);
        const outcome = simulatedOutcome(m.recipient);
        if (seen?.accepted === 1) {
          await trx
            .updateTable('simulator_submissions')
            .set({ duplicate_submits: seen.duplicate_submits + 1 })
            .where('message_id', '=', m.id)
            .execute();
          results.push({ ok: true, upstreamId: seen.upstream_id });
          continue;
        }
        if (outcome === 'REJECTED') {
          if (!seen) inserts.push(this.row(m, now, 0, null, null));
          results.push({ ok: false, temporary: false, code: 'REJECTED', reason: 'destination rejected by the operator' });
          continue;
        }
        if (outcome === 'TEMPORARY_THEN_DELIVERED' && !seen) {
          inserts.push(this.row(m, now, 0, null, null));
          results.push({ ok: false, temporary: true, code: 'THROTTLED', reason: 'operator temporarily unavailable' });
          continue;
        }
        let receipt: ReceiptStatus | null =
          outcome === 'UNDELIVERED' ? 'UNDELIVERED' : outcome === 'NO_RECEIPT' ? null : 'DELIVERED';
        for (const rule of this.extraHandlers) {
          const r = rule(m);
          if (r !== undefined) receipt = r;
        }
        const due = receipt ? now + this.config.receiptLatencyMs : null;
        if (due !== null) earliestReceipt = Math.min(earliestReceipt, due);
        const upstreamId = seen?.upstream_id ?? randomBytes(8).toString('hex');
        if (seen) {
          await trx
            .updateTable('simulator_submissions')
            .set({ accepted: 1, attempts: seen.attempts + 1, receipt_status: receipt, receipt_due_at: due })
            .where('message_id', '=', m.id)
            .execute();
        } else {
          inserts.push({ ...this.row(m, now, 1, receipt, due), upstream_id: upstreamId });
        }
        results.push({ ok: true, upstreamId });
      }
      for (let i = 0; i < inserts.length; i += 400) {
        await trx.insertInto('simulator_submissions').values(inserts.slice(i, i + 400) as never).execute();
      }
    });
    if (earliestReceipt !== Number.POSITIVE_INFINITY) this.scheduler.at(earliestReceipt);
    return results;
  }

  private row(m: OutboundMessage, now: number, accepted: number, receipt: ReceiptStatus | null, due: number | null) {
    const text = typeof m.body.text === 'string' ? m.body.text : JSON.stringify(m.body);
    return {
      message_id: m.id,
      upstream_id: randomBytes(8).toString('hex'),
      recipient: m.recipient,
      text,
      attempts: 1,
      accepted,
      duplicate_submits: 0,
      receipt_status: receipt,
      receipt_due_at: due,
      emitted: 0,
      created_at: now,
    };
  }

  /** Emits an event from the simulated network (MO, read report…) through the same sink as receipts. */
  async inject(events: CarrierEvent[]): Promise<void> {
    if (!this.sink) throw new Error('simulator not started');
    await this.sink(events);
  }

  private async tick(): Promise<number> {
    if (!this.sink) return Date.now() + SAFETY_POLL_MS;
    let next = Date.now() + SAFETY_POLL_MS;
    try {
      for (;;) {
        const now = Date.now();
        const due = await this.store.db
          .selectFrom('simulator_submissions')
          .select(['message_id', 'upstream_id', 'receipt_status'])
          .where('emitted', '=', 0)
          .where('receipt_due_at', '<=', now)
          .orderBy('receipt_due_at')
          .limit(RECEIPT_BATCH)
          .execute();
        if (due.length === 0) break;
        await this.sink(
          due.map((r) => ({
            kind: 'receipt' as const,
            connector: this.name,
            messageId: r.message_id,
            upstreamId: r.upstream_id,
            status: r.receipt_status as ReceiptStatus,
            at: now,
          })),
        );
        const ids = due.map((r) => r.message_id);
        for (let i = 0; i < ids.length; i += 500) {
          await this.store.db.updateTable('simulator_submissions').set({ emitted: 1 }).where('message_id', 'in', ids.slice(i, i + 500)).execute();
        }
        if (due.length < RECEIPT_BATCH || this.scheduler.stopped) break;
      }
      const upcoming = await this.store.db
        .selectFrom('simulator_submissions')
        .select('receipt_due_at')
        .where('emitted', '=', 0)
        .where('receipt_due_at', 'is not', null)
        .orderBy('receipt_due_at')
        .limit(1)
        .executeTakeFirst();
      if (upcoming?.receipt_due_at != null) next = Math.min(next, Number(upcoming.receipt_due_at));
    } catch (err) {
      if (!this.scheduler.stopped) this.logger.error({ err }, 'simulator: emitting receipts failed; retrying');
    }
    return next;
  }
}
