import { isIP } from 'node:net';
import { decodeSmppText } from '../../domain/text.ts';
import type { Connector, ConnectorContext, ConnectorRecord, ConnectorStats, OutboundMessage, SubmitFence, SubmitResult } from '../../core/ports.ts';
import { fenced } from '../../core/ports.ts';
import { smppAddressOf } from '../../protocols/smpp/address.ts';
import { type SubmitStatusMeaning, submitStatusMeaning } from '../../protocols/smpp/command-status.ts';
import { readDeliverSm } from '../../protocols/smpp/deliver.ts';
import { normaliseMessageId } from '../../protocols/smpp/message-id.ts';
import { buildSubmitSms } from '../../protocols/smpp/outbound.ts';
import { type Pdu, SmppStatus, str } from '../../protocols/smpp/pdu.ts';
import { formatSmppTime } from '../../protocols/smpp/receipt.ts';
import type { RequestResult, SmppSession } from '../../protocols/smpp/session.ts';
import { SmppSessionError } from '../../protocols/smpp/session.ts';
import { BindLink } from './bind.ts';
import { MoAssembler } from './mo.ts';
import { WindowGate } from './window-gate.ts';
import { partRecords, receiptEvents, receiptOutcome, type SmscReceipt } from './receipts.ts';
import type { SmppConnectorSettings } from './settings.ts';

/** How often the node renews the binds it holds (and takes those of a node that died). */
const SLOT_REFRESH_MS = 5_000;
/** Receipts stored in one go. */
const RECEIPT_BATCH = 500;
/** Single-part submits this node remembers by the id the SMSC gave, for their receipts (see `submitted`). */
const REMEMBERED_SUBMITS = 20_000;
/** How often a bind being drained is looked at for submits still waiting for their answer. */
const DRAIN_POLL_MS = 20;

const SEVERITY: Readonly<Record<SubmitStatusMeaning['class'], number>> = { OK: 0, TEMPORARY: 1, THROTTLED: 2, PERMANENT: 3 };

interface Link {
  bind: BindLink;
  /** A transmitter or transceiver: submits may go through it. */
  sends: boolean;
}

/**
 * A client of an operator's SMSC (SMPP 3.4) on Tern's own session layer. It holds its share of the connector's binds
 * (TRX sessions, or TX+RX pairs) — slots leased per node, so binds are spread over the cluster and a dead node's are
 * taken over — each bind kept up with reconnects, backoff and jitter. Submits take the cluster-wide rate, go out
 * through the least busy transmitter within its window, split as the operator takes long texts, and come back as
 * an upstream id or a typed error (one table of command_status). ESME_RTHROTTLED pauses the connector instead of
 * failing anything. Receipts and inbound messages are stored before they are answered; a long inbound message is
 * put together once.
 */
export class SmppConnector implements Connector {
  readonly kind = 'SMPP';
  private ctx: ConnectorContext | null = null;
  private readonly held = new Map<number, Link[]>();
  /** Binds given up (handed to another node, or the connector stopping), drained and closed in the background. */
  private readonly closing = new Set<Promise<void>>();
  private refreshing: Promise<void> = Promise.resolve();
  private slotTimer: NodeJS.Timeout | null = null;
  private throttledUntil = 0;
  private throttleTimer: NodeJS.Timeout | null = null;
  private unknownOutcomes = 0;
  private turn = 0;
  private readonly mo: MoAssembler;
  private readonly gates = new WeakMap<SmppSession, WindowGate>();
  private readonly receipts: Array<{ r: SmscReceipt; resolve(): void; reject(err: unknown): void }> = [];
  private flushing = false;
  /**
   * Messages by the id the SMSC answered their submit with, while their receipt may come: a receipt that follows its
   * answer within milliseconds (many SMSCs, for some outcomes) otherwise reaches the core before the dispatcher has
   * recorded the placement, matches nothing, and is kept in the database to be matched again. Known here, it names
   * its message and is applied at once. Only what this node submitted, and only the latest (oldest out first); a
   * receipt on another node, or older than what is remembered, is matched by its upstream id as before.
   */
  private readonly submitted = new Map<string, string>();

  constructor(
    readonly name: string,
    private readonly s: SmppConnectorSettings,
    private readonly password: string,
  ) {
    this.mo = new MoAssembler(name, s.moPartsTimeoutSeconds * 1000);
  }

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    ctx.health('CONNECTING');
    await this.refresh();
    this.slotTimer = setInterval(() => void this.refresh(), SLOT_REFRESH_MS);
    this.slotTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.slotTimer) clearInterval(this.slotTimer);
    if (this.throttleTimer) clearTimeout(this.throttleTimer);
    this.slotTimer = null;
    this.ctx = null;
    await this.refreshing;
    const links = [...this.held.values()].flat();
    this.held.clear();
    this.close(links);
    await Promise.all([...this.closing]);
  }

  stats(): ConnectorStats {
    const links = [...this.held.values()].flat();
    return {
      binds: links.filter((l) => l.bind.session !== null).length,
      inFlight: links.reduce((n, l) => n + (l.bind.session?.outbound.inFlight ?? 0), 0),
      unknownOutcomes: this.unknownOutcomes,
    };
  }

  private context(): ConnectorContext {
    if (!this.ctx) throw new Error(`connector ${this.name} is not started`);
    return this.ctx;
  }

  // ---- binds --------------------------------------------------------------------------------------------------

  /** Holds this node's share of the binds: starts those it gained, unbinds those it lost. One at a time. */
  private refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(async () => {
      const ctx = this.ctx;
      if (!ctx) return;
      let slots: number[];
      try {
        slots = await ctx.slots(this.s.binds);
      } catch (err) {
        ctx.logger.warn({ err }, 'could not renew the binds this node holds; keeping them');
        return;
      }
      if (!this.ctx) return;
      const wanted = new Set(slots);
      for (const [slot, links] of this.held) {
        if (wanted.has(slot)) continue;
        this.held.delete(slot);
        ctx.logger.info({ slot }, 'bind handed to another node: closed once its submits are answered');
        this.close(links);
      }
      for (const slot of wanted) if (!this.held.has(slot)) this.held.set(slot, this.links(slot));
      this.report();
    });
    return this.refreshing;
  }

  /**
   * Closes binds this node no longer uses — out of `held`, so no new submit picks them — once what they carry is
   * answered: every submit that took room in a bind's window (sent, or about to be) gets its `submit_sm_resp`, or
   * its response timeout, before the unbind. Closed at once instead, a bind's submits in flight would be outcomes
   * unknown, sent again through another bind: repeats the SMSC delivers twice.
   */
  private close(links: Link[]): void {
    const done = (async () => {
      const deadline = Date.now() + this.s.responseTimeoutSeconds * 1000 + 1_000;
      const busy = () => links.some((l) => l.sends && l.bind.session !== null && this.gate(l.bind.session).load > 0);
      while (busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
      await Promise.all(links.map((l) => l.bind.stop()));
    })().catch((err: unknown) => this.ctx?.logger.warn({ err }, 'closing a bind failed'));
    const tracked = done.finally(() => this.closing.delete(tracked));
    this.closing.add(tracked);
  }

  private links(slot: number): Link[] {
    const s = this.s;
    const common = {
      host: s.host,
      port: s.port,
      tls: s.tls ? { rejectUnauthorized: s.tlsVerify, ...(isIP(s.host) === 0 && { servername: s.host }) } : (false as const),
      bindFields: {
        system_id: s.systemId,
        password: this.password,
        system_type: s.systemType,
        interface_version: 0x34,
        addr_ton: 0,
        addr_npi: 0,
        address_range: '',
      },
      window: s.window,
      responseTimeoutMs: s.responseTimeoutSeconds * 1000,
      enquireLinkIntervalMs: s.enquireLinkSeconds * 1000,
      reconnectMinMs: s.reconnectMinSeconds * 1000,
      reconnectMaxMs: s.reconnectMaxSeconds * 1000,
      handler: (pdu: Pdu) => this.onRequest(pdu),
    };
    const made: Link[] =
      s.bindMode === 'TRX'
        ? [{ bind: new BindLink({ ...common, command: 'bind_transceiver' }), sends: true }]
        : [
            { bind: new BindLink({ ...common, command: 'bind_transmitter' }), sends: true },
            { bind: new BindLink({ ...common, command: 'bind_receiver' }), sends: false },
          ];
    for (const l of made) {
      l.bind.on('up', () => {
        this.ctx?.logger.info({ slot, mode: s.bindMode }, 'bound');
        this.report();
      });
      l.bind.on('down', (reason) => {
        this.ctx?.logger.warn({ slot, reason }, 'bind down');
        this.report();
      });
      l.bind.start();
    }
    return made;
  }

  private transmitters(): SmppSession[] {
    const out: SmppSession[] = [];
    for (const links of this.held.values()) for (const l of links) if (l.sends && l.bind.session) out.push(l.bind.session);
    return out;
  }

  /** Tells the router what this node can do with the connector now. */
  private report(): void {
    const ctx = this.ctx;
    if (!ctx) return;
    if (this.held.size === 0) return ctx.health('STANDBY', `its ${this.s.binds} bind(s) are held by other nodes`);
    if (Date.now() < this.throttledUntil) return ctx.health('THROTTLED', 'the SMSC answered ESME_RTHROTTLED');
    if (this.transmitters().length > 0) return ctx.health('UP');
    const error = [...this.held.values()].flat().find((l) => l.bind.lastError !== null)?.bind.lastError ?? null;
    ctx.health(error === null ? 'CONNECTING' : 'DOWN', error);
  }

  private onThrottled(): void {
    this.throttledUntil = Date.now() + this.s.throttleWaitMs;
    if (this.throttleTimer) clearTimeout(this.throttleTimer);
    this.throttleTimer = setTimeout(() => this.report(), this.s.throttleWaitMs + 1);
    this.throttleTimer.unref();
    this.report();
  }

  /** The transmitter with the most room in its window. */
  private pick(): SmppSession | null {
    const all = this.transmitters();
    if (all.length === 0) return null;
    this.turn = (this.turn + 1) % all.length;
    let best = all[this.turn]!;
    for (const x of all) if (this.gate(x).load < this.gate(best).load) best = x;
    return best;
  }

  private gate(session: SmppSession): WindowGate {
    let g = this.gates.get(session);
    if (!g) {
      g = new WindowGate(this.s.window);
      this.gates.set(session, g);
    }
    return g;
  }

  // ---- submits ------------------------------------------------------------------------------------------------

  async submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> {
    const ctx = this.context();
    const parts: ConnectorRecord[] = [];
    const results = await Promise.all(batch.map((m) => this.submitOne(ctx, m, parts, fence)));
    if (parts.length > 0) {
      try {
        await ctx.records.put(parts);
      } catch (err) {
        // The submits went out: failing them would send them again. Receipts of their later parts will not be known.
        ctx.logger.error({ err }, 'could not keep the parts of long messages; their receipts will match on the first part only');
      }
    }
    return results;
  }

  private async submitOne(ctx: ConnectorContext, m: OutboundMessage, parts: ConnectorRecord[], fence?: SubmitFence): Promise<SubmitResult> {
    if (m.type !== 'SMS') return { ok: false, temporary: false, code: 'UNSUPPORTED_TYPE', reason: `an SMPP connector sends SMS, not ${m.type}` };
    const text = (m.body as { text?: unknown }).text;
    if (typeof text !== 'string') return { ok: false, temporary: false, code: 'BAD_MESSAGE', reason: 'the message has no text' };
    let pdus: Array<Record<string, unknown>>;
    try {
      pdus = buildSubmitSms(text, {
        serviceType: this.s.serviceType,
        source: this.source(m.sender ?? ''),
        destination: { addr: m.recipient, ton: this.s.destTon, npi: this.s.destNpi },
        textDataCoding: this.s.dataCoding,
        forceUnicode: (m.body as { encoding?: unknown }).encoding === 'UNICODE',
        longMessages: this.s.longMessages,
        registeredDelivery: this.s.registeredDelivery,
        validityPeriod: this.s.sendValidity && m.validityUntil !== null ? formatSmppTime(new Date(m.validityUntil)) : '',
        // The same for every placement of the message, so a handset joins the parts of a repeated send.
        reference: Number.parseInt(m.id.replace(/-/g, '').slice(-4), 16) || 0,
      });
    } catch (err) {
      return { ok: false, temporary: false, code: 'TOO_LONG', reason: (err as Error).message };
    }
    const session = this.pick();
    if (!session) return { ok: false, temporary: true, code: 'NO_BIND', reason: 'no transmitter is bound on this node' };
    const release = await this.gate(session).acquire(pdus.length);
    try {
      // Checked once there is room: submits that waited while the SMSC asked to slow down do not go out.
      if (Date.now() < this.throttledUntil) {
        return { ok: false, temporary: true, code: 'ESME_RTHROTTLED', reason: 'the SMSC asked to slow down', retryAt: this.throttledUntil };
      }
      const slot = await ctx.throttle(pdus.length, this.s.tps);
      if (!slot.ok) return { ok: false, temporary: true, code: 'TPS', reason: 'the connector’s rate is spent for this second', retryAt: slot.retryAt };
      if (fence && !fence.holds(m.id)) return fenced();
      const answers = await Promise.allSettled(pdus.map((fields) => session.request('submit_sm', fields)));
      return this.outcome(m, answers, parts);
    } finally {
      release();
    }
  }

  private source(sender: string) {
    const auto = smppAddressOf(sender);
    return { addr: sender, ton: this.s.sourceTon ?? auto.ton, npi: this.s.sourceNpi ?? auto.npi };
  }

  /** One result for a message from the answers to its parts: the worst of them decides. */
  private outcome(m: OutboundMessage, answers: Array<PromiseSettledResult<Pdu>>, parts: ConnectorRecord[]): SubmitResult {
    const ids: string[] = [];
    let worst: SubmitStatusMeaning | null = null;
    let lost = false;
    let unsent: string | null = null;
    for (const a of answers) {
      if (a.status === 'rejected') {
        if (a.reason instanceof SmppSessionError && a.reason.sent) lost = true;
        else unsent = (a.reason as Error).message;
        continue;
      }
      const meaning =
        a.value.command === 'generic_nack' && a.value.status === 0 ? submitStatusMeaning(SmppStatus.ESME_RSYSERR) : submitStatusMeaning(a.value.status);
      if (meaning.class === 'OK') ids.push(normaliseMessageId(str(a.value, 'message_id'), this.s.submitIdFormat));
      else if (worst === null || SEVERITY[meaning.class] > SEVERITY[worst.class]) worst = meaning;
    }
    if (worst?.class === 'PERMANENT') {
      return { ok: false, temporary: false, code: worst.name, reason: `the SMSC refused it: ${worst.name}`, ...(worst.detail && { detail: worst.detail }) };
    }
    if (lost) {
      // SMPP cannot tell whether the SMSC took it: it is submitted again, and may reach the handset twice.
      this.unknownOutcomes++;
      return {
        ok: false,
        temporary: true,
        code: 'UNKNOWN_OUTCOME',
        reason: 'no answer to the submit (connection lost or timed out): the SMSC may have taken it',
        outcomeUnknown: true,
      };
    }
    if (worst?.class === 'THROTTLED') {
      this.onThrottled();
      return { ok: false, temporary: true, code: worst.name, reason: 'the SMSC asked to slow down', retryAt: this.throttledUntil };
    }
    if (worst) return { ok: false, temporary: true, code: worst.name, reason: `the SMSC cannot take it now: ${worst.name}` };
    if (unsent !== null) return { ok: false, temporary: true, code: 'NO_BIND', reason: unsent };
    // An SMSC that gives no id: the message cannot be matched to a receipt, but it was taken.
    const upstreamId = ids[0] || `none:${m.id}:${m.attempt}`;
    if (ids.length > 1) parts.push(...partRecords(ids));
    else if (ids.length === 1) this.remember(upstreamId, m.id);
    return { ok: true, upstreamId };
  }

  private remember(upstreamId: string, messageId: string): void {
    // An id the SMSC gives again (its counter started over) is the newest.
    this.submitted.delete(upstreamId);
    this.submitted.set(upstreamId, messageId);
    if (this.submitted.size > REMEMBERED_SUBMITS) this.submitted.delete(this.submitted.keys().next().value!);
  }

  // ---- what the SMSC sends ------------------------------------------------------------------------------------

  private onRequest(pdu: Pdu): RequestResult | Promise<RequestResult> {
    if (pdu.command === 'deliver_sm' || pdu.command === 'data_sm') return this.onDeliver(pdu);
    // No response PDU exists for it; nothing to do with it either.
    if (pdu.command === 'alert_notification') return { status: 0 };
    return undefined;
  }

  /** Answers only once what the SMSC handed over is stored; a failure to store asks the SMSC to send it again. */
  private async onDeliver(pdu: Pdu): Promise<RequestResult> {
    const ctx = this.ctx;
    if (!ctx) return { status: SmppStatus.ESME_RX_T_APPN };
    const now = Date.now();
    const content = readDeliverSm(pdu, new Date(now));
    const ok: RequestResult = { status: 0, fields: { message_id: '' } };
    try {
      switch (content.kind) {
        case 'invalid':
          ctx.logger.warn({ reason: content.reason, status: content.status }, `unreadable ${pdu.command} from the SMSC`);
          return { status: content.status };
        case 'receipt': {
          const outcome = receiptOutcome(content.stat);
          if (outcome) await this.receipt({ id: normaliseMessageId(content.id, this.s.receiptIdFormat), ...outcome, at: now });
          return ok;
        }
        case 'mo': {
          if (content.concat) {
            const whole = await this.mo.add(
              ctx,
              {
                source: content.source.addr,
                destination: content.destination.addr,
                dataCoding: content.dataCoding,
                payload: content.payload,
                concat: content.concat,
              },
              now,
            );
            if (whole) {
              await ctx.emit([whole.event]);
              await ctx.records.put(whole.done);
            }
            return ok;
          }
          await ctx.emit([
            {
              kind: 'mo',
              connector: this.name,
              type: 'SMS',
              from: content.source.addr,
              to: content.destination.addr,
              body: { text: decodeSmppText(content.payload, content.dataCoding) },
              at: now,
            },
          ]);
          return ok;
        }
      }
    } catch (err) {
      ctx.logger.error({ err }, `could not store a ${pdu.command}; the SMSC is asked to send it again`);
      return { status: SmppStatus.ESME_RX_T_APPN };
    }
  }

  /** Receipts arriving together are stored together; each resolves once its batch is. */
  private receipt(r: SmscReceipt): Promise<void> {
    return new Promise((resolve, reject) => {
      this.receipts.push({ r, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flushReceipts());
      }
    });
  }

  private async flushReceipts(): Promise<void> {
    while (this.receipts.length > 0) {
      const batch = this.receipts.splice(0, RECEIPT_BATCH);
      try {
        const ctx = this.context();
        const events = await receiptEvents(
          ctx,
          this.name,
          batch.map((b) => b.r),
          (id) => this.submitted.get(id),
        );
        if (events.length > 0) await ctx.emit(events);
        for (const b of batch) this.submitted.delete(b.r.id);
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.flushing = false;
  }

  /** Parts of long inbound messages whose wait ran out: what arrived is delivered. */
  async due(records: ConnectorRecord[]): Promise<ConnectorRecord[]> {
    const ctx = this.context();
    for (const whole of await this.mo.expire(ctx, records)) {
      ctx.logger.warn({ from: whole.event.from, to: whole.event.to }, 'a long inbound message lacks parts; delivering what arrived');
      await ctx.emit([whole.event]);
      await ctx.records.put(whole.done);
    }
    return [];
  }
}
