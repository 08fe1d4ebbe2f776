import type {
  CarrierEvent,
  Connector,
  ConnectorContext,
  ConnectorHttpRequest,
  ConnectorHttpResponse,
  ConnectorRecord,
  ConnectorRoute,
  OutboundMessage,
  RcsCapabilityAnswer,
  ReceiptStatus,
  SubmitFence,
  SubmitResult,
} from '../../core/ports.ts';
import { fenced } from '../../core/ports.ts';
import { uuidv7 } from '../../domain/ids.ts';
import type { NumberLookup } from '../../core/lookup/enrich.ts';
import type { LiveStatus } from '../../core/lookup/number-status.ts';
import { SimulatorHlr } from './hlr.ts';
import { DEFAULT_READ_DELAY_MS, SIMULATED_RCS_FEATURES, simulatedNeverReads, simulatedRcsCapable, simulatedRcsOffline } from './rcs.ts';
import { handsetInbox, handsetRecord, heardText } from './handsets.ts';
import { simulatedOutcome } from './sms.ts';
import { CALL_REPORTS, simulatedCallOutcome } from './voice.ts';

export interface SimulatorSettings {
  /** Delay before the network answers a submit, in ms. */
  submitLatencyMs: number;
  /** Delay between a submit and its delivery receipt (or a call and its outcome), in ms. */
  receiptLatencyMs: number;
  /** Delay between an RCS message's delivery and its READ report, in ms. */
  readDelayMs: number;
  /** Submits a second the network takes, across the cluster; 0: no limit. */
  tps: number;
  /**
   * Of the SMS it would deliver, the share (percent) it reports UNDELIVERED / OPERATOR_ERROR instead: a network in
   * trouble. Which ones is decided by the message's id, the same on every try.
   */
  failedDeliveryPercent: number;
}

/** What the simulated network remembers of one placement of a message. */
interface Submission {
  type: string;
  upstreamId: string;
  recipient: string;
  /** Taken by the network (a temporary refusal is remembered, so the retry is accepted). */
  accepted: boolean;
  /** Submits of the same placement after it was taken (a dispatcher that crashed before recording it). */
  duplicates: number;
  /** What the network owes next, while the record has a due time: a receipt, then perhaps a read report. */
  next: 'RECEIPT' | 'READ' | null;
  status?: ReceiptStatus;
  detail?: string;
  /** What the handset shows or says once the message is delivered (see handsets.ts). */
  text?: string;
}

/** A placement's record key: the message id for its first placement, `id:attempt` for the next ones. */
function keyOf(m: Pick<OutboundMessage, 'id' | 'attempt'>): string {
  return m.attempt > 1 ? `${m.id}:${m.attempt}` : m.id;
}

function messageIdOf(key: string): string {
  return key.split(':')[0]!;
}

/**
 * The embedded operator network: SMS, RCS (capability, read reports, revocation), voice calls and HLR lookups,
 * with deterministic outcomes by the destination's last digits (README "Simulator test numbers"). What it received
 * and what it still owes live in the connector's records, so it survives a restart like a real operator would, its
 * receipts go out once across nodes, and a repeated submit of the same placement is recognised and not sent again.
 */
export class Simulator implements Connector {
  readonly kind = 'SIMULATOR';
  readonly receiptsNameMessage = true;
  private ctx: ConnectorContext | null = null;
  private readonly hlr = new SimulatorHlr();

  constructor(
    readonly name: string,
    private readonly settings: SimulatorSettings,
  ) {}

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    ctx.health('UP');
  }

  async stop(): Promise<void> {
    this.ctx = null;
  }

  private context(): ConnectorContext {
    if (!this.ctx) throw new Error(`connector ${this.name} is not started`);
    return this.ctx;
  }

  async submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> {
    const ctx = this.context();
    if (this.settings.submitLatencyMs > 0) await new Promise((r) => setTimeout(r, this.settings.submitLatencyMs));
    const now = Date.now();
    const seen = await ctx.records.get(batch.map(keyOf));
    const puts: ConnectorRecord[] = [];
    const results: SubmitResult[] = [];
    let throttledUntil: number | null = null;
    for (const m of batch) {
      if (this.settings.tps > 0 && throttledUntil === null) {
        const slot = await ctx.throttle(1, this.settings.tps);
        if (!slot.ok) throttledUntil = slot.retryAt;
      }
      if (throttledUntil !== null) {
        results.push({ ok: false, temporary: true, code: 'TPS', reason: 'the connector’s rate is spent for this second', retryAt: throttledUntil });
        continue;
      }
      const key = keyOf(m);
      const before = seen.get(key);
      const prior = before?.data as Submission | undefined;
      if (prior?.accepted) {
        puts.push({ key, data: { ...prior, duplicates: prior.duplicates + 1 }, dueAt: before!.dueAt, lane: m.lane });
        results.push({ ok: true, upstreamId: prior.upstreamId });
        continue;
      }
      const upstreamId = prior?.upstreamId ?? uuidv7(now).replace(/-/g, '');
      const text = heardText(m);
      const base: Submission = { type: m.type, upstreamId, recipient: m.recipient, accepted: false, duplicates: 0, next: null, ...(text !== null && { text }) };
      const fate = this.fate(m, prior !== undefined);
      if (fate.kind === 'refused') {
        if (!prior) puts.push({ key, data: { ...base }, dueAt: null });
        results.push({ ok: false, temporary: fate.temporary, code: fate.code, reason: fate.reason });
        continue;
      }
      const receipt = fate.receipt;
      puts.push({
        key,
        data: { ...base, accepted: true, next: receipt ? 'RECEIPT' : null, ...receipt },
        dueAt: receipt ? now + this.settings.receiptLatencyMs : null,
        lane: m.lane,
      });
      results.push({ ok: true, upstreamId });
    }
    // What goes "on the wire" here is the write of the network's records: none for a message this node no longer holds.
    if (fence) {
      const lost = new Set(batch.filter((m) => !fence.holds(m.id)).map(keyOf));
      if (lost.size > 0) {
        batch.forEach((m, i) => {
          if (lost.has(keyOf(m))) results[i] = fenced();
        });
        await ctx.records.put(puts.filter((p) => !lost.has(p.key)));
        return results;
      }
    }
    await ctx.records.put(puts);
    return results;
  }

  /** What the network does with a placement: refuse it, or take it and later report (or never). */
  private fate(
    m: OutboundMessage,
    triedBefore: boolean,
  ): { kind: 'refused'; temporary: boolean; code: string; reason: string } | { kind: 'taken'; receipt: { status: ReceiptStatus; detail?: string } | null } {
    if (m.type === 'VOICE') return { kind: 'taken', receipt: CALL_REPORTS[simulatedCallOutcome(m.recipient)] };
    const outcome = simulatedOutcome(m.recipient);
    if (outcome === 'REJECTED') return { kind: 'refused', temporary: false, code: 'REJECTED', reason: 'destination rejected by the operator' };
    if (outcome === 'TEMPORARY_THEN_DELIVERED' && !triedBefore) {
      return { kind: 'refused', temporary: true, code: 'THROTTLED', reason: 'operator temporarily unavailable' };
    }
    let receipt: { status: ReceiptStatus; detail?: string } | null =
      outcome === 'UNDELIVERED' ? { status: 'UNDELIVERED' } : outcome === 'NO_RECEIPT' ? null : { status: 'DELIVERED' };
    if (receipt?.status === 'DELIVERED' && m.type === 'SMS' && failsDelivery(m.id, this.settings.failedDeliveryPercent)) {
      receipt = { status: 'UNDELIVERED', detail: 'OPERATOR_ERROR' };
    }
    if (m.type === 'RCS') {
      if (!simulatedRcsCapable(m.recipient)) receipt = { status: 'UNDELIVERABLE' };
      else if (simulatedRcsOffline(m.recipient)) receipt = null;
    }
    return { kind: 'taken', receipt };
  }

  /**
   * Receipts and read reports that fell due; a delivered RCS message is read a while later. Only that one comes back
   * to be kept with a due time: what is not returned is settled (owed nothing any more).
   */
  async due(records: ConnectorRecord[], now: number): Promise<ConnectorRecord[]> {
    const events: CarrierEvent[] = [];
    const later: ConnectorRecord[] = [];
    const received: ConnectorRecord[] = [];
    for (const r of records) {
      const s = r.data as unknown as Submission;
      const messageId = messageIdOf(r.key);
      if (s.next === 'RECEIPT' && s.status) {
        events.push({ kind: 'receipt', connector: this.name, messageId, upstreamId: s.upstreamId, status: s.status, detail: s.detail ?? null, at: now });
        if (s.status === 'DELIVERED' && s.text !== undefined) received.push(handsetRecord(s.recipient, { text: s.text, type: s.type, messageId }, now));
        if (s.type === 'RCS' && s.status === 'DELIVERED' && !simulatedNeverReads(s.recipient)) {
          later.push({ key: r.key, data: { ...s, next: 'READ' }, dueAt: now + this.settings.readDelayMs, lane: r.lane });
        }
      } else if (s.next === 'READ') {
        events.push({ kind: 'receipt', connector: this.name, messageId, upstreamId: s.upstreamId, status: 'READ', at: now });
      }
    }
    // The handset has the message before the network says it was delivered.
    if (received.length > 0) await this.context().records.put(received);
    if (events.length > 0) await this.context().emit(events);
    return later;
  }

  async rcsCapability(msisdn: string): Promise<RcsCapabilityAnswer> {
    const capable = simulatedRcsCapable(msisdn);
    return { capable, features: capable ? [...SIMULATED_RCS_FEATURES] : [] };
  }

  /** Withdraws messages the handset has not received yet: their pending receipts and read reports are dropped. */
  async revoke(messageIds: string[]): Promise<void> {
    const ctx = this.context();
    const records = await ctx.records.get(messageIds);
    const withdrawn = [...records.values()].filter((r) => r.dueAt !== null).map((r) => ({ key: r.key, data: { ...r.data, next: null }, dueAt: null }));
    await ctx.records.put(withdrawn);
  }

  numberStatus(number: NumberLookup): Promise<LiveStatus> {
    return this.hlr.liveStatus(number);
  }

  routes(): ConnectorRoute[] {
    return [
      { method: 'POST', path: '/mo', access: 'operator', handle: (req) => this.injectMo(req) },
      { method: 'GET', path: '/handsets', access: 'operator', handle: (req) => this.handset(req) },
    ];
  }

  /** `GET /connectors/{name}/handsets?msisdn=…&limit=…` (operator key): what a number received, newest first. */
  private async handset(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse> {
    const msisdn = req.query.msisdn;
    if (typeof msisdn !== 'string' || !/^\d{8,15}$/.test(msisdn)) return { status: 400, body: { error: 'msisdn: the number in international digits' } };
    const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { status: 400, body: { error: 'limit: 1 to 100' } };
    const items = await handsetInbox(this.context().records, msisdn, limit);
    return {
      status: 200,
      body: { items: items.map((m) => ({ text: m.text, type: m.type, messageId: m.messageId, receivedAt: new Date(m.receivedAt).toISOString() })) },
    };
  }

  /**
   * `POST /connectors/{name}/mo` (operator key): a person's message to one of the channels, as this network would
   * hand it over: `{from, to, text}` for SMS, `{type: "RCS", from, to, body}` for RCS.
   */
  private async injectMo(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse> {
    const b = (req.body ?? {}) as Record<string, unknown>;
    const type = b.type === undefined ? 'SMS' : b.type;
    const str = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
    if (type !== 'SMS' && type !== 'RCS') return { status: 400, body: { error: 'type: must be SMS or RCS' } };
    if (!str(b.from, 32)) return { status: 400, body: { error: 'from: the sender number is required' } };
    if (!str(b.to, 64)) return { status: 400, body: { error: 'to: the number, short code or agent it is sent to is required' } };
    let body: Record<string, unknown>;
    if (type === 'SMS') {
      if (!str(b.text, 1600)) return { status: 400, body: { error: 'text: 1 to 1600 characters' } };
      body = { text: b.text };
    } else {
      if (typeof b.body !== 'object' || b.body === null || typeof (b.body as { type?: unknown }).type !== 'string') {
        return { status: 400, body: { error: 'body: an RCS body with its type (TEXT, SUGGESTION, LOCATION, FILE)' } };
      }
      body = b.body as Record<string, unknown>;
    }
    await this.context().emit([{ kind: 'mo', connector: this.name, type, from: b.from as string, to: b.to as string, body, at: Date.now() }]);
    return { status: 202, body: { status: 'received' } };
  }
}

/** The simulator's settings from its definition, over the server's defaults (the TERN_SIMULATOR_* settings). */
export function simulatorSettings(
  settings: Record<string, unknown>,
  defaults: Pick<SimulatorSettings, 'submitLatencyMs' | 'receiptLatencyMs'>,
): SimulatorSettings {
  const ms = (key: string, fallback: number) => {
    const v = settings[key];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  return {
    submitLatencyMs: ms('submitLatencyMs', defaults.submitLatencyMs),
    receiptLatencyMs: ms('receiptLatencyMs', defaults.receiptLatencyMs),
    readDelayMs: ms('readDelayMs', DEFAULT_READ_DELAY_MS),
    tps: ms('tps', 0),
    failedDeliveryPercent: Math.min(100, ms('failedDeliveryPercent', 0)),
  };
}

/** Whether the message of this id is among the `percent` whose delivery fails (its id's hash decides, every time). */
function failsDelivery(id: string, percent: number): boolean {
  if (percent <= 0) return false;
  if (percent >= 100) return true;
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h % 100 < percent;
}
