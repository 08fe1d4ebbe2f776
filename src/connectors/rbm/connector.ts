import { createHash, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { fail } from '../../core/errors.ts';
import type {
  Connector,
  ConnectorContext,
  ConnectorHttpRequest,
  ConnectorHttpResponse,
  ConnectorRoute,
  ConnectorStats,
  OutboundMessage,
  RcsCapabilityAnswer,
  SubmitFence,
  SubmitResult,
} from '../../core/ports.ts';
import { fenced } from '../../core/ports.ts';
import type { RcsBody, RcsBodyProblem } from '../../domain/rcs.ts';
import { agentMessage, rbmBodyProblem } from './agent-message.ts';
import { AccessTokens, type ServiceAccountKey } from './auth.ts';
import { coreEvents, readWebhook, signatureHolds } from './events.ts';

export interface RbmSettings {
  agentId: string;
  baseUrl: string;
  serviceAccountKey: ServiceAccountKey;
  webhookClientToken: string;
  timeoutMs: number;
}

interface Answer {
  status: number;
  body: { error?: { code?: unknown; message?: unknown; status?: unknown } } & Record<string, unknown>;
}

/** What the connector keeps of a placement, by Tern's message id, to revoke it later. */
interface Placement {
  messageId: string;
  phone: string;
}

/** A connection dropped under the request (often a kept-alive one the server had just closed). */
const RESET = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);

/** Errors after which the request may have reached RBM (as opposed to a connection never made). */
const MAYBE_SENT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * RBM's messageId of a placement: the message's own id (a UUID) for its first, a UUID derived from the id and the
 * attempt for the next ones. The same placement submitted again after a crash carries the same id, which RBM
 * refuses with 409 ALREADY_EXISTS: the first submit was taken.
 */
export function rbmMessageId(m: Pick<OutboundMessage, 'id' | 'attempt'>): string {
  if (m.attempt <= 1) return m.id;
  const h = createHash('sha256').update(`${m.id}:${m.attempt}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const phoneOf = (msisdn: string) => `+${msisdn.replace(/^\+/, '')}`;

/** A body sent without a JSON content type, read as JSON all the same (undefined when it is not). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Google RCS Business Messaging, as one agent: sends RCS messages (`phones.agentMessages.create`), checks
 * capability (`phones.getCapabilities`), revokes (`phones.agentMessages.delete`), and takes RBM's webhook at
 * `…/connectors/{name}/events` (verification, then signed events: receipts and the users' messages). Authenticates
 * as the agent's service account, with an access token kept until shortly before it expires and renewed once when
 * an answer is 401.
 */
export class RbmConnector implements Connector {
  readonly kind = 'RBM';
  private ctx: ConnectorContext | null = null;
  private readonly tokens: AccessTokens;
  private readonly base: string;
  private probeTimer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  private unknownOutcomes = 0;
  private repeatsRecognised = 0;

  constructor(
    readonly name: string,
    private readonly settings: RbmSettings,
  ) {
    this.tokens = new AccessTokens(settings.serviceAccountKey, settings.timeoutMs);
    this.base = settings.baseUrl.replace(/\/$/, '');
  }

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    await this.probe();
  }

  async stop(): Promise<void> {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    this.ctx = null;
  }

  stats(): ConnectorStats {
    return { inFlight: this.inFlight, unknownOutcomes: this.unknownOutcomes, repeatsRecognised: this.repeatsRecognised };
  }

  private context(): ConnectorContext {
    if (!this.ctx) throw new Error(`connector ${this.name} is not started`);
    return this.ctx;
  }

  /** UP once the service account gets a token; while it cannot, DOWN, and asked again every 10 s. */
  private async probe(): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) return;
    try {
      await this.tokens.token();
      if (this.ctx) ctx.health('UP');
    } catch (err) {
      if (!this.ctx) return;
      this.down(`no access token: ${(err as Error).message}`);
    }
  }

  private down(why: string): void {
    this.ctx?.health('DOWN', why);
    if (!this.probeTimer) {
      this.probeTimer = setTimeout(() => {
        this.probeTimer = null;
        void this.probe();
      }, 10_000).unref();
    }
  }

  /** A call to the RBM API with the agent's token; a 401 renews the token and tries once more. */
  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, query: Record<string, string>, body?: unknown): Promise<Answer> {
    for (let tries = 0, resets = 0; ; tries++) {
      const token = await this.tokens.token();
      let res: Awaited<ReturnType<typeof request>>;
      let text: string;
      try {
        res = await request(`${this.base}${path}?${new URLSearchParams(query)}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
          headersTimeout: this.settings.timeoutMs,
          bodyTimeout: this.settings.timeoutMs,
        });
        text = await res.body.text();
      } catch (err) {
        // A kept-alive connection the server closed as it was reused: a read or a revocation is asked again at
        // once; a send is left to the dispatcher, which repeats it under the same messageId.
        if (method !== 'POST' && resets === 0 && RESET.has((err as { code?: string }).code ?? '')) {
          resets++;
          tries--;
          continue;
        }
        throw err;
      }
      let parsed: Answer['body'] = {};
      try {
        parsed = text === '' ? {} : (JSON.parse(text) as Answer['body']);
      } catch {
        parsed = {};
      }
      if (res.statusCode === 401 && tries === 0) {
        this.tokens.invalidate(token);
        continue;
      }
      return { status: res.statusCode, body: parsed ?? {} };
    }
  }

  private static why(a: Answer): string {
    const e = a.body.error;
    const status = typeof e?.status === 'string' ? e.status : `HTTP ${a.status}`;
    return typeof e?.message === 'string' ? `${status}: ${e.message}` : status;
  }

  async submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> {
    const ctx = this.context();
    const results = await Promise.all(batch.map((m) => this.submitOne(m, fence)));
    const placed = batch.flatMap((m, i) => {
      const r = results[i]!;
      return r.ok ? [{ key: m.id, data: { messageId: r.upstreamId, phone: phoneOf(m.recipient) } satisfies Placement, dueAt: null, lane: m.lane }] : [];
    });
    if (placed.length > 0) await ctx.records.put(placed);
    return results;
  }

  private async submitOne(m: OutboundMessage, fence?: SubmitFence): Promise<SubmitResult> {
    if (m.type !== 'RCS') return { ok: false, temporary: false, code: 'UNSUPPORTED_TYPE', reason: `RBM carries RCS messages, not ${m.type}` };
    const body = m.body as unknown as RcsBody;
    const problem = rbmBodyProblem(body);
    if (problem) return { ok: false, temporary: false, code: 'INVALID_ARGUMENT', reason: `body.${problem.path}: ${problem.message}` };
    const messageId = rbmMessageId(m);
    if (fence && !fence.holds(m.id)) return fenced();
    this.inFlight++;
    let a: Answer;
    try {
      a = await this.call(
        'POST',
        `/v1/phones/${phoneOf(m.recipient)}/agentMessages`,
        { messageId, agentId: this.settings.agentId },
        agentMessage(body, m.flow, m.validityUntil, Date.now()),
      );
    } catch (err) {
      const maybeSent = MAYBE_SENT.has((err as { code?: string }).code ?? '');
      if (maybeSent) this.unknownOutcomes++;
      else this.down(`RBM cannot be reached: ${(err as Error).message}`);
      // Sent again with the same messageId: RBM answers ALREADY_EXISTS if it took the first.
      return { ok: false, temporary: true, code: 'CONNECTION', reason: (err as Error).message, ...(maybeSent && { outcomeUnknown: true as const }) };
    } finally {
      this.inFlight--;
    }
    const why = RbmConnector.why(a);
    if (a.status === 200) return { ok: true, upstreamId: messageId };
    if (a.status === 409) {
      this.repeatsRecognised++;
      return { ok: true, upstreamId: messageId };
    }
    if (a.status === 404) return { ok: false, temporary: false, code: 'NOT_FOUND', reason: why, detail: 'NOT_RCS_CAPABLE' };
    if (a.status === 403) return { ok: false, temporary: false, code: 'PERMISSION_DENIED', reason: `${why} (an agent not launched reaches its testers only)` };
    if (a.status === 401) {
      this.down(`RBM refuses the service account’s token: ${why}`);
      return { ok: false, temporary: true, code: 'UNAUTHENTICATED', reason: why };
    }
    if (a.status === 429 || a.status === 408 || a.status >= 500) return { ok: false, temporary: true, code: `HTTP_${a.status}`, reason: why };
    return { ok: false, temporary: false, code: a.status === 400 ? 'INVALID_ARGUMENT' : `HTTP_${a.status}`, reason: why };
  }

  rcsBodyProblem(body: RcsBody): RcsBodyProblem | null {
    return rbmBodyProblem(body);
  }

  /** 200: capable, with the handset's features; 404: not RCS (the core falls back to SMS); 403: a clear error. */
  async rcsCapability(msisdn: string): Promise<RcsCapabilityAnswer> {
    let a: Answer;
    try {
      a = await this.call('GET', `/v1/phones/${phoneOf(msisdn)}/capabilities`, { requestId: randomUUID(), agentId: this.settings.agentId });
    } catch (err) {
      return fail('UNAVAILABLE', `the RCS capability of ${phoneOf(msisdn)} could not be asked of RBM (connector ${this.name}): ${(err as Error).message}`);
    }
    if (a.status === 200) {
      const features = Array.isArray(a.body.features) ? a.body.features.filter((f): f is string => typeof f === 'string') : [];
      return { capable: true, features };
    }
    if (a.status === 404) return { capable: false, features: [] };
    if (a.status === 403) {
      return fail(
        'INVALID_REQUEST',
        `RBM agent ${this.settings.agentId} (connector ${this.name}) may not message ${phoneOf(msisdn)}: until the agent is launched, only its testers can be reached (${RbmConnector.why(a)})`,
      );
    }
    return fail('UNAVAILABLE', `RBM answered the capability check of ${phoneOf(msisdn)} with ${RbmConnector.why(a)} (connector ${this.name})`);
  }

  /** Withdraws messages not delivered yet; RBM answers 200 whether it revoked or was too late (a DELIVERED may come). */
  async revoke(messageIds: string[]): Promise<void> {
    const ctx = this.context();
    const placements = await ctx.records.get(messageIds);
    await Promise.all(
      [...placements.values()].map(async (r) => {
        const p = r.data as unknown as Placement;
        try {
          const a = await this.call('DELETE', `/v1/phones/${p.phone}/agentMessages/${p.messageId}`, { agentId: this.settings.agentId });
          if (a.status !== 200 && a.status !== 404) ctx.logger.warn({ messageId: r.key, answer: RbmConnector.why(a) }, 'RBM did not take the revocation');
        } catch (err) {
          ctx.logger.warn({ err, messageId: r.key }, 'RBM could not be asked to revoke');
        }
      }),
    );
  }

  routes(): ConnectorRoute[] {
    return [{ method: 'POST', path: '/events', access: 'public', handle: (req) => this.onEvents(req) }];
  }

  /** RBM's webhook: the verification handshake, then signed events, applied before they are acknowledged. */
  private async onEvents(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse> {
    const w = readWebhook(typeof req.body === 'string' ? parseJson(req.body) : req.body);
    if (w.kind === 'invalid') return { status: 400, body: { error: w.reason } };
    if (w.kind === 'verification') {
      if (w.clientToken !== this.settings.webhookClientToken)
        return { status: 403, body: { error: 'the client token is not this connector’s webhookClientToken' } };
      return { status: 200, body: w.secret, contentType: 'text/plain; charset=utf-8' };
    }
    if (!signatureHolds(w.data, req.headers['x-goog-signature'], this.settings.webhookClientToken)) {
      return { status: 401, body: { error: 'X-Goog-Signature does not verify with this connector’s webhookClientToken' } };
    }
    const events = coreEvents(w.data, this.name, this.settings.agentId);
    if (events === null) return { status: 400, body: { error: 'message.data is not an RBM event or user message' } };
    if (events.length > 0) await this.context().emit(events);
    return { status: 200, body: {} };
  }
}
