import { randomBytes } from 'node:crypto';
import type { SipMessage } from 'sip';
import digest from 'sip/digest.js';
import { readPcm16Mono, resamplePcm16 } from '../../speech/wav.ts';
import type {
  CarrierEvent,
  Connector,
  ConnectorContext,
  ConnectorRecord,
  ConnectorStats,
  OutboundMessage,
  ReceiptEvent,
  SubmitFence,
  SubmitResult,
} from '../../core/ports.ts';
import { fenced } from '../../core/ports.ts';
import type { VoiceAudioSource } from '../kind.ts';
import { type CallOutcome, OutgoingCall } from './call.ts';
import { encodeG711, type G711Codec } from './g711.ts';
import type { SipSettings } from './settings.ts';
import { addressBesides, localAddressFor, SipEndpoint } from './stack.ts';

const RATE = 8000;
/** The pause between the message and its repeat. */
const REPEAT_GAP_MS = 1_500;
/** A record of a call still going is looked at again this long after it should have ended. */
const OVERDUE_MS = 60_000;
/** How long REGISTER and OPTIONS wait for the trunk before it counts as not answering. */
const ASK_TIMEOUT_MS = 5_000;

/** What the connector keeps of a placement: the call, then its outcome until the core has it. */
interface CallRecord {
  callId: string;
  state: 'CALLING' | 'ANSWERED' | 'DONE';
  answeredAt?: number;
  outcome?: CallOutcome;
  [key: string]: unknown;
}

/** A placement's record key: the message id for its first call, `id:attempt` for the next ones. */
const keyOf = (m: Pick<OutboundMessage, 'id' | 'attempt'>) => (m.attempt > 1 ? `${m.id}:${m.attempt}` : m.id);
const messageIdOf = (key: string) => key.split(':')[0]!;

/** The receipt a call's outcome makes: the core places busy and unanswered calls again and refunds those never heard. */
export function receiptOf(outcome: CallOutcome): Pick<ReceiptEvent, 'status' | 'detail' | 'answeredMs'> {
  switch (outcome.kind) {
    case 'answered':
      return { status: 'DELIVERED', detail: null, answeredMs: outcome.answeredMs };
    case 'busy':
      return { status: 'UNDELIVERED', detail: 'BUSY' };
    case 'no-answer':
      return { status: 'UNDELIVERED', detail: 'NO_ANSWER' };
    case 'invalid':
      return { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' };
    case 'rejected':
      return { status: 'UNDELIVERABLE', detail: 'REJECTED' };
  }
}

/**
 * Voice calls through a SIP trunk: each voice message is a call (INVITE with G.711 offered, digest authentication
 * when challenged), its recording played as paced RTP once answered, then BYE. Busy, unanswered, invalid and
 * answered calls are reported as receipts (through the connector's records, so an outcome outlives a restart); a
 * trunk that refuses a call for now (5xx, no answer to the INVITE) is a temporary error, and the call goes to the
 * route's next connector. The trunk's health comes from REGISTER (a registrar) or OPTIONS (a trunk).
 */
export class SipConnector implements Connector {
  readonly kind = 'SIP';
  readonly receiptsNameMessage = true;
  private ctx: ConnectorContext | null = null;
  private endpoint: SipEndpoint | null = null;
  private readonly calls = new Map<string, OutgoingCall>();
  /** Calls being set up (counted against maxCalls before they are placed). */
  private starting = 0;
  private keepalive: NodeJS.Timeout | null = null;
  private stopped = false;
  private registerCseq = 1;
  private readonly registerCallId = randomBytes(8).toString('hex');
  private readonly fromTag = randomBytes(6).toString('hex');

  constructor(
    readonly name: string,
    private readonly settings: SipSettings,
    private readonly password: string | null,
    private readonly audio: VoiceAudioSource,
  ) {}

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    this.stopped = false;
    ctx.health('CONNECTING');
    const s = this.settings;
    let address: string;
    try {
      address = addressBesides(s.host, s.localAddress ?? (await localAddressFor(s.host, s.port)));
    } catch (err) {
      return ctx.health('DOWN', (err as Error).message);
    }
    this.endpoint = await SipEndpoint.open({
      transport: s.transport,
      address,
      port: s.localPort,
      onRequest: (rq) => this.onRequest(rq),
      onError: (err) => ctx.logger.warn({ err }, 'SIP stack error'),
    });
    void this.checkTrunk();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.keepalive) clearTimeout(this.keepalive);
    this.keepalive = null;
    for (const call of this.calls.values()) call.hangUp();
    this.calls.clear();
    const endpoint = this.endpoint;
    this.endpoint = null;
    await endpoint?.close();
    this.ctx = null;
  }

  stats(): ConnectorStats {
    return { inFlight: this.calls.size };
  }

  private context(): ConnectorContext {
    if (!this.ctx || !this.endpoint) throw new Error(`connector ${this.name} is not started`);
    return this.ctx;
  }

  private uri(user: string): string {
    const s = this.settings;
    return `sip:${user}@${s.host}:${s.port};transport=${s.transport.toLowerCase()}`;
  }

  private fromUri(m: OutboundMessage | null): string {
    const sender = m?.sender && /^\+?\d{3,20}$/.test(m.sender) ? m.sender : null;
    const user = this.settings.callerId ?? sender ?? this.settings.username ?? 'tern';
    return `sip:${user}@${this.settings.domain}`;
  }

  // ---- trunk health ---------------------------------------------------------------------------------------------

  /** REGISTER with the registrar, or OPTIONS to the trunk; UP on an answer, DOWN naming why otherwise. */
  private async checkTrunk(): Promise<void> {
    if (this.stopped || !this.endpoint || !this.ctx) return;
    const s = this.settings;
    const answer = await this.ask(s.register ? this.registerRequest() : this.optionsRequest());
    if (this.stopped || !this.ctx) return;
    let next = s.keepaliveSeconds * 1000;
    if (answer === null) this.ctx.health('DOWN', `the trunk ${s.host}:${s.port} does not answer (${s.transport})`);
    else if (s.register && answer.status! >= 300) this.ctx.health('DOWN', `registration refused: ${answer.status} ${answer.reason ?? ''}`.trim());
    else if (!s.register && (answer.status === 401 || answer.status === 407) && this.password === null) {
      this.ctx.health('DOWN', `the trunk asks for credentials (${answer.status}): set username and password`);
    } else {
      this.ctx.health('UP');
      if (s.register) next = Math.max(30, Math.floor(s.registerExpiresSeconds * 0.8)) * 1000;
    }
    if (answer === null) next = Math.min(next, 5_000);
    this.keepalive = setTimeout(() => void this.checkTrunk(), next);
    this.keepalive.unref();
  }

  /** Sends a request outside any call and waits for its final answer (authenticating once when challenged). */
  private ask(request: SipMessage): Promise<SipMessage | null> {
    return new Promise((resolve) => {
      // Over UDP the stack waits 32 s before it gives up; a trunk that is up answers within a few.
      const timer = setTimeout(() => resolve(null), ASK_TIMEOUT_MS);
      timer.unref();
      let challenged = false;
      const send = (rq: SipMessage) =>
        this.endpoint!.request(rq, (rs) => {
          const status = rs.status ?? 0;
          if (status < 200) return;
          if ((status === 401 || status === 407) && !challenged && this.password !== null && this.settings.username !== null) {
            challenged = true;
            const again = { ...rq, headers: { ...rq.headers, via: [], cseq: { method: rq.method!, seq: rq.headers.cseq!.seq + 1 } } };
            if (rq.method === 'REGISTER') this.registerCseq++;
            digest.signRequest(null, again, rs, { user: this.settings.username, password: this.password });
            return send(again);
          }
          // The stack answers by itself, without the To tag the other side's answers carry: 408 when nothing came back,
          // 503 when it could not connect, 404 when it found no address.
          const local = rs.headers.to?.params?.tag === undefined && [404, 408, 503].includes(status);
          clearTimeout(timer);
          resolve(local ? null : rs);
        });
      send(request);
    });
  }

  private optionsRequest(): SipMessage {
    const target = this.uri(this.settings.username ?? 'ping');
    return {
      method: 'OPTIONS',
      uri: target,
      headers: {
        to: { uri: target, params: {} },
        from: { uri: this.fromUri(null), params: { tag: randomBytes(6).toString('hex') } },
        'call-id': randomBytes(8).toString('hex'),
        cseq: { method: 'OPTIONS', seq: 1 },
        'max-forwards': 70,
        'user-agent': 'Tern',
      },
    };
  }

  private registerRequest(): SipMessage {
    const s = this.settings;
    const aor = `sip:${s.username}@${s.domain}`;
    return {
      method: 'REGISTER',
      uri: `sip:${s.domain}:${s.port};transport=${s.transport.toLowerCase()}`,
      headers: {
        to: { uri: aor, params: {} },
        from: { uri: aor, params: { tag: this.fromTag } },
        'call-id': this.registerCallId,
        cseq: { method: 'REGISTER', seq: this.registerCseq++ },
        contact: [{ uri: this.endpoint!.contact(s.username!), params: {} }],
        expires: s.registerExpiresSeconds,
        'max-forwards': 70,
        'user-agent': 'Tern',
      },
    };
  }

  /** The trunk's requests: the callee's BYE ends its call; OPTIONS are answered; anything else is refused. */
  private onRequest(rq: SipMessage): void {
    if (!this.endpoint || rq.method === 'ACK') return;
    const call = [...this.calls.values()].find((c) => c.callId === rq.headers['call-id']);
    if (rq.method === 'BYE') {
      if (call) return call.onByeFromCallee(rq);
      return this.endpoint.respond(rq, 481, 'Call/Transaction Does Not Exist');
    }
    if (rq.method === 'OPTIONS') return this.endpoint.respond(rq, 200, 'OK', { headers: { allow: 'INVITE, ACK, CANCEL, BYE, OPTIONS' } });
    this.endpoint.respond(rq, 405, 'Method Not Allowed', { headers: { allow: 'INVITE, ACK, CANCEL, BYE, OPTIONS' } });
  }

  // ---- calls ----------------------------------------------------------------------------------------------------

  async submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> {
    const ctx = this.context();
    const seen = await ctx.records.get(batch.map(keyOf));
    return Promise.all(
      batch.map(async (m): Promise<SubmitResult> => {
        const before = seen.get(keyOf(m))?.data as CallRecord | undefined;
        // The same placement submitted again (a dispatcher that crashed before recording it): not called twice.
        if (before) return { ok: true, upstreamId: before.callId };
        if (m.type !== 'VOICE')
          return { ok: false, temporary: false, code: 'NOT_VOICE', reason: `a SIP connector places calls; a ${m.type} message cannot go through it` };
        if (this.calls.size + this.starting >= this.settings.maxCalls) {
          return { ok: false, temporary: true, code: 'MAX_CALLS', reason: `${this.settings.maxCalls} calls already under way`, retryAt: Date.now() + 1_000 };
        }
        this.starting++;
        let counted = false;
        const started = () => {
          if (!counted) this.starting--;
          counted = true;
        };
        try {
          if (this.settings.callsPerSecond > 0) {
            const slot = await ctx.throttle(1, this.settings.callsPerSecond);
            if (!slot.ok) return { ok: false, temporary: true, code: 'CPS', reason: 'the calls a second are spent for this second', retryAt: slot.retryAt };
          }
          let pcm: Int16Array;
          try {
            pcm = await this.recording(m.id);
          } catch (err) {
            return { ok: false, temporary: false, code: 'NO_AUDIO', reason: (err as Error).message };
          }
          if (fence && !fence.holds(m.id)) return fenced();
          return await this.place(m, pcm, started);
        } finally {
          started();
        }
      }),
    );
  }

  /** The message's recording as 8 kHz linear samples, with its repeat when asked for. */
  private async recording(messageId: string): Promise<Int16Array> {
    const stored = await this.audio(messageId);
    if (!stored) throw new Error(`message ${messageId} has no recording to play`);
    const { samples, sampleRate } = readPcm16Mono(stored.wav);
    const pcm = sampleRate === RATE ? samples : resamplePcm16(samples, sampleRate, RATE);
    if (!this.settings.repeat) return pcm;
    const gap = (REPEAT_GAP_MS * RATE) / 1000;
    const twice = new Int16Array(pcm.length * 2 + gap);
    twice.set(pcm, 0);
    twice.set(pcm, pcm.length + gap);
    return twice;
  }

  /** Places one call; `started` is told once the call counts among the calls under way. */
  private async place(m: OutboundMessage, pcm: Int16Array, started: () => void): Promise<SubmitResult> {
    const ctx = this.context();
    const s = this.settings;
    const key = keyOf(m);
    const callId = `${randomBytes(12).toString('hex')}@tern`;
    const audioMs = Math.ceil((pcm.length * 1000) / RATE);
    const deadline = () => Date.now() + s.ringTimeoutSeconds * 1000 + audioMs + OVERDUE_MS;
    const encoded = new Map<G711Codec, Buffer>();
    const call = new OutgoingCall({
      callId,
      target: this.uri(`${s.dialPrefix}${m.recipient}`),
      from: this.fromUri(m),
      endpoint: this.endpoint!,
      codecs: s.codecs,
      credentials: s.username !== null && this.password !== null ? { user: s.username, password: this.password } : null,
      ringTimeoutMs: s.ringTimeoutSeconds * 1000,
      trunkTimeoutMs: s.trunkTimeoutMs,
      encode: (codec) => {
        if (!encoded.has(codec)) encoded.set(codec, encodeG711(pcm, codec));
        return encoded.get(codec)!;
      },
    });
    this.calls.set(key, call);
    started();
    const placement = await call
      .start()
      .catch((err: Error) => ({ placed: false as const, temporary: true as const, code: 'TRUNK_UNAVAILABLE' as const, reason: err.message }));
    if (!placement.placed && placement.temporary) {
      this.calls.delete(key);
      if (placement.code === 'AUTH_REFUSED') ctx.health('DOWN', placement.reason);
      return { ok: false, temporary: true, code: placement.code, reason: placement.reason };
    }
    const record = (data: CallRecord, dueAt: number) => ctx.records.put([{ key, data, dueAt }]);
    if (!placement.placed) {
      // Refused for good before it rang (busy, unknown number): the outcome is reported like any other.
      this.calls.delete(key);
      await record({ callId, state: 'DONE', outcome: placement.outcome }, Date.now());
      return { ok: true, upstreamId: callId };
    }
    await record({ callId, state: 'CALLING' }, deadline());
    call.onAnswer = () => void record({ callId, state: 'ANSWERED', answeredAt: Date.now() }, deadline()).catch(() => undefined);
    void call.outcome.then(async (outcome) => {
      this.calls.delete(key);
      try {
        await record({ callId, state: 'DONE', outcome }, Date.now());
      } catch (err) {
        this.ctx?.logger.error({ err, messageId: m.id }, 'the outcome of a call could not be kept; it is reported when its record falls due');
      }
    });
    return { ok: true, upstreamId: callId };
  }

  /**
   * Records that fell due: outcomes to report, and calls that should have ended long ago. A call still going on this
   * node is looked at again later; one that no node holds any more (its node stopped) is reported as it stood: an
   * answered call as delivered (billed at its full length), one that never was as unanswered (placed again).
   */
  async due(records: ConnectorRecord[], now: number): Promise<ConnectorRecord[]> {
    const events: CarrierEvent[] = [];
    const later: ConnectorRecord[] = [];
    for (const r of records) {
      const c = r.data as CallRecord;
      const base = { kind: 'receipt' as const, connector: this.name, messageId: messageIdOf(r.key), upstreamId: c.callId, at: now };
      if (c.state === 'DONE' && c.outcome) {
        events.push({ ...base, ...receiptOf(c.outcome) });
      } else if (this.calls.has(r.key)) {
        later.push({ ...r, dueAt: now + OVERDUE_MS });
      } else if (c.state === 'ANSWERED') {
        events.push({ ...base, status: 'DELIVERED', detail: null });
      } else {
        events.push({ ...base, status: 'UNDELIVERED', detail: 'NO_ANSWER' });
      }
    }
    if (events.length > 0) await this.context().emit(events);
    return later;
  }
}
