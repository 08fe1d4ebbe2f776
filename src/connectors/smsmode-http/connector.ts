import { Webhook } from 'standardwebhooks';
import { Pool } from 'undici';
import type {
  CarrierEvent,
  Connector,
  ConnectorContext,
  ConnectorHttpRequest,
  ConnectorHttpResponse,
  ConnectorRecord,
  ConnectorRoute,
  ConnectorStats,
  OutboundMessage,
  ReceiptStatus,
  SubmitFence,
  SubmitResult,
} from '../../core/ports.ts';
import { fenced } from '../../core/ports.ts';

export interface SmsmodeHttpSettings {
  baseUrl: string;
  apiKey: string;
  /** Submits a second across the cluster; 0: no limit. */
  tps: number;
  maxConnections: number;
  timeoutMs: number;
  /** When a message still has no final status this long after its submit, its status is asked for (lost callbacks). */
  pollAfterMs: number;
  /** Signing secret of the upstream's status callbacks (whsec_…), when it signs them; unsigned callbacks are then refused. */
  webhookSecret: string | null;
}

/** What the connector remembers of a submitted message until its final status comes back. */
interface Pending {
  type: string;
  polls: number;
  /** Give up polling after this (the message's validity). */
  until: number;
}

const FINAL: ReadonlySet<string> = new Set(['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'READ']);
const PATHS: Readonly<Record<string, string>> = { SMS: '/sms/v1/messages', RCS: '/rcs/v1/messages' };
const MAX_POLL_INTERVAL_MS = 3_600_000;

/** Statuses of a send's answer that mean it will never reach the person: the message is refused here too. */
const REFUSED_AT_ACCEPT: ReadonlySet<string> = new Set(['UNDELIVERABLE']);

interface Answer {
  status: number;
  body: unknown;
  retryAfterMs: number | null;
  /** The upstream answered a repeated Idempotency-Key with its first answer. */
  replayed: boolean;
}

/** Errors after which the request may have reached the upstream (as opposed to a connection never made). */
const MAYBE_SENT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * Sends through any server that speaks the smsmode REST API (smsmode itself, or another Tern) with its base URL and
 * API key. Each submit carries an Idempotency-Key (message id and attempt), so a submit repeated after a crash is
 * answered without a second message by servers that honour it (Tern does). Statuses come back to this connector's
 * own route (`…/connectors/{name}/status`, signature checked when a secret is set); a message whose status does not
 * come is asked for (`GET …/messages/{id}`) after `pollAfterMs`, then less and less often until its validity ends.
 * Replies come to `…/connectors/{name}/mo`. Connections are pooled and bounded.
 */
export class SmsmodeHttpConnector implements Connector {
  readonly kind = 'SMSMODE_HTTP';
  private ctx: ConnectorContext | null = null;
  private pool: Pool | null = null;
  private readonly base: URL;
  private readonly verifier: Webhook | null;
  private inFlight = 0;
  private unknownOutcomes = 0;
  private repeatsRecognised = 0;
  private probeTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly name: string,
    private readonly settings: SmsmodeHttpSettings,
  ) {
    this.base = new URL(settings.baseUrl);
    this.verifier = settings.webhookSecret ? new Webhook(settings.webhookSecret) : null;
  }

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    this.pool = new Pool(this.base.origin, {
      connections: this.settings.maxConnections,
      headersTimeout: this.settings.timeoutMs,
      bodyTimeout: this.settings.timeoutMs,
    });
    await this.probe();
  }

  async stop(): Promise<void> {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    this.ctx = null;
    await this.pool?.close().catch(() => undefined);
    this.pool = null;
  }

  stats(): ConnectorStats {
    return { inFlight: this.inFlight, unknownOutcomes: this.unknownOutcomes, repeatsRecognised: this.repeatsRecognised };
  }

  private context(): ConnectorContext {
    if (!this.ctx) throw new Error(`connector ${this.name} is not started`);
    return this.ctx;
  }

  /** Checks the key against the upstream; while it fails the connector is DOWN and checks again every 10 s. */
  private async probe(): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) return;
    let error: string | null = null;
    try {
      const a = await this.call('GET', '/commons/v1/channels');
      if (a.status === 401 || a.status === 403) error = `the upstream refuses the API key (HTTP ${a.status})`;
      else if (a.status >= 500) error = `the upstream answers HTTP ${a.status}`;
    } catch (err) {
      error = `the upstream cannot be reached: ${(err as Error).message}`;
    }
    if (!this.ctx) return;
    if (error === null) {
      ctx.health('UP');
      return;
    }
    ctx.health('DOWN', error);
    this.probeTimer = setTimeout(() => void this.probe(), 10_000);
    this.probeTimer.unref();
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    if (!this.pool) throw new Error('connector is stopped');
    const res = await this.pool.request({
      method,
      path: `${this.base.pathname.replace(/\/$/, '')}${path}`,
      headers: {
        'x-api-key': this.settings.apiKey,
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const retryAfter = Number(res.headers['retry-after']);
    return {
      status: res.statusCode,
      body: parsed,
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : null,
      replayed: res.headers['idempotent-replayed'] === 'true',
    };
  }

  async submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> {
    const ctx = this.context();
    const results = await Promise.all(batch.map((m) => this.submitOne(ctx, m, fence)));
    const now = Date.now();
    const pending: ConnectorRecord[] = [];
    batch.forEach((m, i) => {
      const r = results[i]!;
      if (!r.ok) return;
      const data: Pending = { type: m.type, polls: 0, until: m.validityUntil ?? now + 48 * 3_600_000 };
      pending.push({ key: r.upstreamId, data: data as unknown as Record<string, unknown>, dueAt: now + this.settings.pollAfterMs, lane: m.lane });
    });
    await ctx.records.put(pending);
    return results;
  }

  private async submitOne(ctx: ConnectorContext, m: OutboundMessage, fence?: SubmitFence): Promise<SubmitResult> {
    const path = PATHS[m.type];
    if (!path) return { ok: false, temporary: false, code: 'UNSUPPORTED_TYPE', reason: `this connector sends SMS and RCS, not ${m.type}` };
    const slot = await ctx.throttle(1, this.settings.tps);
    if (!slot.ok) return { ok: false, temporary: true, code: 'TPS', reason: 'the connector’s rate is spent for this second', retryAt: slot.retryAt };
    const body =
      m.type === 'SMS'
        ? { text: (m.body as { text?: string }).text, ...((m.body as { encoding?: string }).encoding === 'UNICODE' && { encoding: 'UNICODE' }) }
        : m.body;
    const callbacks = ctx.publicUrl();
    if (fence && !fence.holds(m.id)) return fenced();
    this.inFlight++;
    let a: Answer;
    try {
      a = await this.call(
        'POST',
        path,
        {
          recipient: { to: m.recipient },
          body,
          ...(m.sender && { from: m.sender }),
          refClient: m.id,
          callbackUrlStatus: `${callbacks}/status`,
          callbackUrlMo: `${callbacks}/mo`,
        },
        { 'idempotency-key': `${m.id}:${m.attempt}` },
      );
    } catch (err) {
      const maybeSent = MAYBE_SENT.has((err as { code?: string }).code ?? '');
      if (maybeSent) this.unknownOutcomes++;
      ctx.health('DOWN', `the upstream cannot be reached: ${(err as Error).message}`);
      if (!this.probeTimer) this.probeTimer = setTimeout(() => void this.probe(), 10_000).unref();
      return { ok: false, temporary: true, code: 'CONNECTION', reason: (err as Error).message, ...(maybeSent && { outcomeUnknown: true as const }) };
    } finally {
      this.inFlight--;
    }
    return this.outcome(ctx, a);
  }

  private outcome(ctx: ConnectorContext, a: Answer): SubmitResult {
    const b = (a.body ?? {}) as { messageId?: unknown; status?: { value?: unknown; detail?: unknown }; errorCode?: unknown; detail?: unknown };
    if (a.status === 201 || a.status === 200) {
      if (typeof b.messageId !== 'string' || b.messageId === '') {
        return { ok: false, temporary: true, code: 'BAD_ANSWER', reason: 'the upstream answered without a messageId' };
      }
      const value = typeof b.status?.value === 'string' ? b.status.value : '';
      if (REFUSED_AT_ACCEPT.has(value)) {
        return {
          ok: false,
          temporary: false,
          code: typeof b.status?.detail === 'string' ? b.status.detail : 'REJECTED',
          reason: `the upstream ended it ${value}`,
        };
      }
      if (a.replayed) this.repeatsRecognised++;
      return { ok: true, upstreamId: b.messageId };
    }
    const detail = typeof b.detail === 'string' ? b.detail : `HTTP ${a.status}`;
    const code = typeof b.errorCode === 'string' ? b.errorCode : `HTTP_${a.status}`;
    if (a.status === 401 || a.status === 403) {
      // A key refused is the connection's fault, not the message's: it waits while the connector is DOWN.
      ctx.health('DOWN', `the upstream refuses the API key (HTTP ${a.status})`);
      if (!this.probeTimer) this.probeTimer = setTimeout(() => void this.probe(), 10_000).unref();
      return { ok: false, temporary: true, code, reason: detail };
    }
    if (a.status === 429) {
      return { ok: false, temporary: true, code, reason: detail, ...(a.retryAfterMs !== null && { retryAt: Date.now() + a.retryAfterMs }) };
    }
    if (a.status === 409 || a.status === 408 || a.status >= 500) return { ok: false, temporary: true, code, reason: detail };
    return { ok: false, temporary: false, code, reason: detail };
  }

  /** Asks for the status of messages whose callback did not come; asks again later, less often, until their validity ends. */
  async due(records: ConnectorRecord[], now: number): Promise<ConnectorRecord[]> {
    const ctx = this.context();
    const events: CarrierEvent[] = [];
    const later: ConnectorRecord[] = [];
    await Promise.all(
      records.map(async (r) => {
        const p = r.data as unknown as Pending;
        let value = '';
        let detail: string | null = null;
        try {
          const a = await this.call('GET', `${PATHS[p.type] ?? PATHS.SMS}/${encodeURIComponent(r.key)}`);
          const status = (a.body as { status?: { value?: unknown; detail?: unknown } } | null)?.status;
          if (a.status === 200 && typeof status?.value === 'string') {
            value = status.value;
            detail = typeof status.detail === 'string' ? status.detail : null;
          }
        } catch {
          // Asked again later.
        }
        if (FINAL.has(value)) {
          events.push({ kind: 'receipt', connector: this.name, upstreamId: r.key, status: value as ReceiptStatus, detail, at: now });
          return;
        }
        const next = now + Math.min(MAX_POLL_INTERVAL_MS, this.settings.pollAfterMs * 2 ** (p.polls + 1));
        if (next <= p.until) later.push({ key: r.key, data: { ...p, polls: p.polls + 1 }, dueAt: next, lane: r.lane });
      }),
    );
    if (events.length > 0) await ctx.emit(events);
    return later;
  }

  routes(): ConnectorRoute[] {
    return [
      { method: 'POST', path: '/status', access: 'public', handle: (req) => this.onStatus(req) },
      { method: 'POST', path: '/mo', access: 'public', handle: (req) => this.onMo(req) },
    ];
  }

  /** Refuses a callback whose signature does not hold, when the upstream signs them. */
  private unsigned(req: ConnectorHttpRequest): ConnectorHttpResponse | null {
    if (!this.verifier) return null;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? (v[0] ?? '') : (v ?? '')]));
    try {
      this.verifier.verify(req.rawBody, headers);
      return null;
    } catch {
      return { status: 401, body: { error: 'the webhook signature does not verify with this connector’s webhookSecret' } };
    }
  }

  /** A status callback of the upstream: the message object, `messageId` and `status.value`. */
  private async onStatus(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse> {
    const refused = this.unsigned(req);
    if (refused) return refused;
    const b = req.body as { messageId?: unknown; status?: { value?: unknown; detail?: unknown; deliveryDate?: unknown } } | null;
    if (!b || typeof b !== 'object' || typeof b.messageId !== 'string' || typeof b.status?.value !== 'string') {
      return { status: 400, body: { error: 'expected a message object with messageId and status.value' } };
    }
    const value = b.status.value;
    if (!FINAL.has(value)) return { status: 200, body: { status: 'ignored' } };
    const at = typeof b.status.deliveryDate === 'string' && !Number.isNaN(Date.parse(b.status.deliveryDate)) ? Date.parse(b.status.deliveryDate) : Date.now();
    const ctx = this.context();
    await ctx.emit([
      {
        kind: 'receipt',
        connector: this.name,
        upstreamId: b.messageId,
        status: value as ReceiptStatus,
        detail: typeof b.status.detail === 'string' ? b.status.detail : null,
        at,
      },
    ]);
    // The status came: nothing to ask for any more.
    await ctx.records.put([{ key: b.messageId, data: { done: true }, dueAt: null }]);
    return { status: 200, body: { status: 'received' } };
  }

  /** A reply through the upstream: the message object with `direction: "MO"`, `from` the person, `recipient.to` ours. */
  private async onMo(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse> {
    const refused = this.unsigned(req);
    if (refused) return refused;
    const b = req.body as { from?: unknown; recipient?: { to?: unknown }; body?: unknown; type?: unknown; acceptedAt?: unknown } | null;
    if (!b || typeof b !== 'object' || typeof b.from !== 'string' || typeof b.recipient?.to !== 'string' || typeof b.body !== 'object' || b.body === null) {
      return { status: 400, body: { error: 'expected an MO message object with from, recipient.to and body' } };
    }
    await this.context().emit([
      {
        kind: 'mo',
        connector: this.name,
        type: b.type === 'RCS' ? 'RCS' : 'SMS',
        from: b.from,
        to: b.recipient.to,
        body: b.body as Record<string, unknown>,
        at: Date.now(),
      },
    ]);
    return { status: 200, body: { status: 'received' } };
  }
}
