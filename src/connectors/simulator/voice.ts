import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { DueScheduler } from './due-scheduler.ts';
import type { Store } from '../../store/db.ts';
import type { SimulatorCallTable } from '../../store/schema.ts';
import type { CarrierConnector, CarrierEventSink, OutboundMessage, ReceiptEvent, SubmitResult } from '../../core/ports.ts';

/**
 * What the simulated voice network does with a call, by the destination's last four digits (the SMS simulator's
 * endings, with their voice meanings): 0001 → busy, 0002 → no answer, 0003 → invalid number; anything else is
 * answered and listened to in full.
 */
export type CallOutcome = 'ANSWERED' | 'BUSY' | 'NO_ANSWER' | 'INVALID';

export function simulatedCallOutcome(recipient: string): CallOutcome {
  switch (recipient.slice(-4)) {
    case '0001':
      return 'BUSY';
    case '0002':
      return 'NO_ANSWER';
    case '0003':
      return 'INVALID';
    default:
      return 'ANSWERED';
  }
}

/** Calls that are busy or not answered are placed this many times in all before they are given up. */
export const VOICE_CALL_ATTEMPTS = 3;

export interface VoiceSimulatorOptions {
  /** Delay before the network answers a submit, in ms. */
  submitLatencyMs: number;
  /** Delay between a call's last attempt and its outcome report, in ms. */
  receiptLatencyMs: number;
  /** Delay between two attempts of a busy or unanswered call, in ms. */
  retryMs: number;
  /** Attempts in all for a busy or unanswered call (default 3). */
  attempts?: number;
}

export type SimulatedCall = SimulatorCallTable;

const BATCH = 500;
const SAFETY_POLL_MS = 1000;

const FINAL: Record<CallOutcome, { status: ReceiptEvent['status']; detail: string | null }> = {
  ANSWERED: { status: 'DELIVERED', detail: null },
  BUSY: { status: 'UNDELIVERED', detail: 'BUSY' },
  NO_ANSWER: { status: 'UNDELIVERED', detail: 'NO_ANSWER' },
  INVALID: { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' },
};

/**
 * The embedded voice network: places text-to-speech calls. Each call's state (attempts made, when the next one is
 * due, its outcome) lives in the store, so calls in progress survive a restart, and a duplicate submit of the same
 * message is recognised and not called again. Busy and unanswered calls are tried again after `retryMs`, up to
 * `attempts` times, and then reported UNDELIVERED with the detail BUSY or NO_ANSWER.
 */
export class VoiceSimulatorCarrier implements CarrierConnector {
  readonly name = 'simulator-voice';
  private sink: CarrierEventSink | null = null;
  private readonly scheduler = new DueScheduler(() => this.tick());
  private readonly attempts: number;

  constructor(
    private readonly store: Store,
    private readonly options: VoiceSimulatorOptions,
    private readonly logger: Logger,
  ) {
    this.attempts = options.attempts ?? VOICE_CALL_ATTEMPTS;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new RangeError('attempts must be a positive integer');
  }

  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.scheduler.start();
  }

  async stop(): Promise<void> {
    await this.scheduler.stop();
  }

  /** A call as the network knows it (tests and diagnostics). */
  async call(messageId: string): Promise<SimulatedCall | null> {
    return (await this.store.db.selectFrom('simulator_calls').selectAll().where('message_id', '=', messageId).executeTakeFirst()) ?? null;
  }

  async submit(batch: OutboundMessage[]): Promise<SubmitResult[]> {
    if (this.options.submitLatencyMs > 0) await new Promise((r) => setTimeout(r, this.options.submitLatencyMs));
    const now = Date.now();
    const results: SubmitResult[] = [];
    let earliest = Number.POSITIVE_INFINITY;
    await this.store.db.transaction().execute(async (trx) => {
      const existing = new Map(
        (await trx.selectFrom('simulator_calls').selectAll().where('message_id', 'in', batch.map((m) => m.id)).execute()).map((r) => [
          r.message_id,
          r,
        ]),
      );
      const inserts: SimulatorCallTable[] = [];
      for (const m of batch) {
        if (m.type !== 'VOICE') {
          results.push({ ok: false, temporary: false, code: 'NOT_VOICE', reason: `the voice network places VOICE messages only, not ${m.type}` });
          continue;
        }
        const seen = existing.get(m.id);
        if (seen) {
          await trx
            .updateTable('simulator_calls')
            .set({ duplicate_submits: seen.duplicate_submits + 1 })
            .where('message_id', '=', m.id)
            .execute();
          results.push({ ok: true, upstreamId: seen.upstream_id });
          continue;
        }
        const outcome = simulatedCallOutcome(m.recipient);
        const retried = (outcome === 'BUSY' || outcome === 'NO_ANSWER') && this.attempts > 1;
        const final = retried ? null : FINAL[outcome];
        const nextAt = retried ? now + this.options.retryMs : now + this.options.receiptLatencyMs;
        earliest = Math.min(earliest, nextAt);
        const upstreamId = randomBytes(8).toString('hex');
        inserts.push({
          message_id: m.id,
          upstream_id: upstreamId,
          recipient: m.recipient,
          outcome,
          attempts: 1,
          duplicate_submits: 0,
          next_at: nextAt,
          final_status: final?.status ?? null,
          final_detail: final?.detail ?? null,
          emitted: 0,
          created_at: now,
          ended_at: null,
        });
        results.push({ ok: true, upstreamId });
      }
      for (let i = 0; i < inserts.length; i += 200) {
        await trx.insertInto('simulator_calls').values(inserts.slice(i, i + 200)).execute();
      }
    });
    if (earliest !== Number.POSITIVE_INFINITY) this.scheduler.at(earliest);
    return results;
  }

  /** Places the retries that are due and reports the calls that have ended. */
  private async tick(): Promise<number> {
    if (!this.sink) return Date.now() + SAFETY_POLL_MS;
    let next = Date.now() + SAFETY_POLL_MS;
    try {
      for (;;) {
        const now = Date.now();
        const due = await this.store.db
          .selectFrom('simulator_calls')
          .selectAll()
          .where('emitted', '=', 0)
          .where('next_at', '<=', now)
          .orderBy('next_at')
          .limit(BATCH)
          .execute();
        if (due.length === 0) break;
        const ended = due.filter((c) => c.final_status !== null);
        for (const c of due.filter((d) => d.final_status === null)) await this.retry(c, now);
        if (ended.length > 0) {
          await this.sink(
            ended.map((c) => ({
              kind: 'receipt' as const,
              connector: this.name,
              messageId: c.message_id,
              upstreamId: c.upstream_id,
              status: c.final_status as ReceiptEvent['status'],
              detail: c.final_detail,
              // Busy, unanswered or invalid: the call never reached the person.
              refund: c.final_status !== 'DELIVERED',
              at: now,
            })),
          );
          await this.store.db
            .updateTable('simulator_calls')
            .set({ emitted: 1, ended_at: now, next_at: null })
            .where('message_id', 'in', ended.map((c) => c.message_id))
            .execute();
        }
        if (due.length < BATCH || this.scheduler.stopped) break;
      }
      const upcoming = await this.store.db
        .selectFrom('simulator_calls')
        .select('next_at')
        .where('emitted', '=', 0)
        .where('next_at', 'is not', null)
        .orderBy('next_at')
        .limit(1)
        .executeTakeFirst();
      if (upcoming?.next_at != null) next = Math.min(next, Number(upcoming.next_at));
    } catch (err) {
      if (!this.scheduler.stopped) this.logger.error({ err }, 'voice simulator: processing calls failed; retrying');
    }
    return next;
  }

  /** Another attempt of a busy or unanswered call; the last one ends the call. */
  private async retry(c: SimulatedCall, now: number): Promise<void> {
    const attempts = c.attempts + 1;
    const last = attempts >= this.attempts;
    const final = last ? FINAL[c.outcome as CallOutcome] : null;
    await this.store.db
      .updateTable('simulator_calls')
      .set({
        attempts,
        next_at: last ? now + this.options.receiptLatencyMs : now + this.options.retryMs,
        final_status: final?.status ?? null,
        final_detail: final?.detail ?? null,
      })
      .where('message_id', '=', c.message_id)
      .execute();
  }
}
