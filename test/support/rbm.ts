/**
 * A fake of Google RCS Business Messaging (RBM) for tests, faithful to its published contract:
 * - the REST reference of rcsbusinessmessaging v1 (phones.agentMessages.create / .delete, phones.getCapabilities)
 *   and the types of Google's generated client (rcs-business-messaging/rbm-api-examples,
 *   nodejs/rbm-api-helper/src/rcsbusinessmessaging/v1.d.ts: AgentContentMessage, RichCard, StandaloneCard,
 *   CarouselCard, CardContent, Media, ContentInfo, Suggestion, SuggestedReply, SuggestedAction and its actions);
 * - the "Send messages" guide (404 NOT_FOUND for a user without RCS, ttl/expireTime, messageTrafficType, limits);
 * - the "Receive events", "Receive messages" and "Webhooks" guides (verification with clientToken and secret,
 *   Pub/Sub push envelopes signed in X-Goog-Signature = base64(HMAC-SHA512(client token, decoded data)));
 * - Google's OAuth 2.0 for service accounts (RFC 7523): the token endpoint checks the RS256 assertion's signature
 *   against the service account's public key and its claims (iss, scope, aud, iat, exp).
 * Errors are Google's shape, `{error: {code, message, status}}`; unknown fields are refused as the API's strict
 * JSON parsing refuses them (400 INVALID_ARGUMENT, "Unknown name").
 */
import { createHmac, createVerify, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RBM_SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const E164 = /^\+[1-9][0-9]{6,14}$/;
const TRAFFIC_TYPES = ['MESSAGE_TRAFFIC_TYPE_UNSPECIFIED', 'AUTHENTICATION', 'TRANSACTION', 'PROMOTION', 'SERVICEREQUEST', 'ACKNOWLEDGEMENT'];
const MAX_TTL_SECONDS = 15 * 86_400;

export interface StoredAgentMessage {
  phone: string;
  messageId: string;
  agentId: string;
  body: Record<string, any>;
  revoked: boolean;
  at: number;
}

export interface FakeRbmOptions {
  agentId: string;
  clientToken: string;
  /** Numbers (E.164) that are not RCS users: 404 NOT_FOUND. */
  notRcs?: string[];
  /** Numbers (E.164) that are not testers of the unlaunched agent: 403 PERMISSION_DENIED. */
  notTesters?: string[];
  /** How long an access token lives, in seconds. */
  tokenSeconds?: number;
  /** How long the answer to a message it took takes to leave (a sender may crash meanwhile). */
  answerDelayMs?: number;
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string): never => {
  throw new Refusal(400, 'INVALID_ARGUMENT', message);
};

/** Checks an object has only the fields named, as the API's JSON parsing does. */
function only(o: unknown, path: string, fields: string[]): Record<string, any> {
  if (!o || typeof o !== 'object' || Array.isArray(o)) bad(`Invalid value at '${path}': expected an object`);
  for (const k of Object.keys(o as object)) if (!fields.includes(k)) bad(`Invalid JSON payload received. Unknown name "${k}" at '${path}': Cannot find field.`);
  return o as Record<string, any>;
}

function string(v: unknown, path: string, max = Infinity, required = false): void {
  if (v === undefined) {
    if (required) bad(`${path} is required`);
    return;
  }
  if (typeof v !== 'string') bad(`Invalid value at '${path}': expected a string`);
  if ([...(v as string)].length > max) bad(`${path} exceeds the maximum length of ${max}`);
}

function url(v: unknown, path: string): void {
  string(v, path, 2048, true);
  try {
    const u = new URL(v as string);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') bad(`${path} must be an http(s) URL`);
  } catch {
    bad(`${path} must be a URL`);
  }
}

function exactlyOne(o: Record<string, any>, path: string, fields: string[]): string {
  const set = fields.filter((f) => o[f] !== undefined);
  if (set.length !== 1) bad(`${path} must set exactly one of ${fields.join(', ')}`);
  return set[0]!;
}

function checkContentInfo(v: unknown, path: string): void {
  const c = only(v, path, ['fileUrl', 'thumbnailUrl', 'forceRefresh']);
  url(c.fileUrl, `${path}.fileUrl`);
  if (c.thumbnailUrl !== undefined) url(c.thumbnailUrl, `${path}.thumbnailUrl`);
  if (c.forceRefresh !== undefined && typeof c.forceRefresh !== 'boolean') bad(`${path}.forceRefresh must be a boolean`);
}

function timestamp(v: unknown, path: string): void {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) || Number.isNaN(Date.parse(v))) {
    bad(`Invalid value at '${path}': expected an RFC 3339 timestamp`);
  }
}

function checkSuggestion(v: unknown, path: string): void {
  const s = only(v, path, ['reply', 'action']);
  const which = exactlyOne(s, path, ['reply', 'action']);
  if (which === 'reply') {
    const r = only(s.reply, `${path}.reply`, ['text', 'postbackData']);
    string(r.text, `${path}.reply.text`, 25, true);
    string(r.postbackData, `${path}.reply.postbackData`, 2048);
    return;
  }
  const actions = ['dialAction', 'viewLocationAction', 'createCalendarEventAction', 'openUrlAction', 'shareLocationAction'];
  const a = only(s.action, `${path}.action`, ['text', 'postbackData', 'fallbackUrl', ...actions]);
  string(a.text, `${path}.action.text`, 25, true);
  string(a.postbackData, `${path}.action.postbackData`, 2048);
  if (a.fallbackUrl !== undefined) url(a.fallbackUrl, `${path}.action.fallbackUrl`);
  const kind = exactlyOne(a, `${path}.action`, actions);
  const p = `${path}.action.${kind}`;
  switch (kind) {
    case 'dialAction': {
      const d = only(a.dialAction, p, ['phoneNumber']);
      if (typeof d.phoneNumber !== 'string' || !E164.test(d.phoneNumber)) bad(`${p}.phoneNumber must be in E.164 format`);
      break;
    }
    case 'openUrlAction':
      url(only(a.openUrlAction, p, ['url']).url, `${p}.url`);
      break;
    case 'shareLocationAction':
      only(a.shareLocationAction, p, []);
      break;
    case 'viewLocationAction': {
      const l = only(a.viewLocationAction, p, ['latLong', 'label', 'query']);
      if (l.latLong !== undefined) {
        const ll = only(l.latLong, `${p}.latLong`, ['latitude', 'longitude']);
        if (typeof ll.latitude !== 'number' || ll.latitude < -90 || ll.latitude > 90) bad(`${p}.latLong.latitude must be in [-90, 90]`);
        if (typeof ll.longitude !== 'number' || ll.longitude < -180 || ll.longitude > 180) bad(`${p}.latLong.longitude must be in [-180, 180]`);
      } else if (l.query === undefined) bad(`${p} needs latLong or query`);
      string(l.label, `${p}.label`, 100);
      string(l.query, `${p}.query`);
      break;
    }
    case 'createCalendarEventAction': {
      const c = only(a.createCalendarEventAction, p, ['startTime', 'endTime', 'title', 'description']);
      timestamp(c.startTime, `${p}.startTime`);
      timestamp(c.endTime, `${p}.endTime`);
      string(c.title, `${p}.title`, 100, true);
      string(c.description, `${p}.description`, 500);
      break;
    }
  }
}

function checkSuggestions(v: unknown, path: string, max: number): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) bad(`Invalid value at '${path}': expected a list`);
  if ((v as unknown[]).length > max) bad(`${path} has more than ${max} suggestions`);
  (v as unknown[]).forEach((s, i) => checkSuggestion(s, `${path}[${i}]`));
}

function checkCardContent(v: unknown, path: string, cardWidth: string | null): void {
  const c = only(v, path, ['title', 'description', 'media', 'suggestions']);
  string(c.title, `${path}.title`, 200);
  string(c.description, `${path}.description`, 2000);
  if (c.title === undefined && c.description === undefined && c.media === undefined) bad(`${path} needs a title, a description or media`);
  if (c.media !== undefined) {
    const m = only(c.media, `${path}.media`, ['height', 'contentInfo', 'fileName']);
    if (!['SHORT', 'MEDIUM', 'TALL'].includes(m.height)) bad(`${path}.media.height must be SHORT, MEDIUM or TALL`);
    if (m.height === 'TALL' && cardWidth === 'SMALL') bad(`${path}.media.height TALL is not available for SMALL carousel cards`);
    exactlyOne(m, `${path}.media`, ['contentInfo', 'fileName']);
    if (m.contentInfo !== undefined) checkContentInfo(m.contentInfo, `${path}.media.contentInfo`);
  }
  checkSuggestions(c.suggestions, `${path}.suggestions`, 4);
}

/** AgentMessage as phones.agentMessages.create takes it; throws a Refusal on what the API refuses. */
export function checkAgentMessage(body: unknown): void {
  const m = only(body, 'agent_message', ['contentMessage', 'messageTrafficType', 'ttl', 'expireTime']);
  if (m.ttl !== undefined && m.expireTime !== undefined) bad('only one of ttl and expireTime may be set');
  if (m.ttl !== undefined) {
    if (typeof m.ttl !== 'string' || !/^\d+(\.\d{1,9})?s$/.test(m.ttl)) bad(`Invalid value at 'agent_message.ttl': expected a Duration such as "3.5s"`);
    if (parseFloat(m.ttl) > MAX_TTL_SECONDS) bad('ttl must be at most 15 days');
  }
  if (m.expireTime !== undefined) timestamp(m.expireTime, 'agent_message.expireTime');
  if (m.messageTrafficType !== undefined && !TRAFFIC_TYPES.includes(m.messageTrafficType)) bad(`Invalid value at 'agent_message.message_traffic_type'`);
  const c = only(m.contentMessage, 'agent_message.content_message', ['text', 'fileName', 'richCard', 'contentInfo', 'suggestions']);
  const kind = exactlyOne(c, 'agent_message.content_message', ['text', 'fileName', 'richCard', 'contentInfo']);
  if (kind === 'text') {
    string(c.text, 'content_message.text', 3072, true);
    if (c.text === '') bad('content_message.text must not be empty');
  }
  if (kind === 'contentInfo') checkContentInfo(c.contentInfo, 'content_message.content_info');
  if (kind === 'richCard') {
    const r = only(c.richCard, 'content_message.rich_card', ['standaloneCard', 'carouselCard']);
    const card = exactlyOne(r, 'content_message.rich_card', ['standaloneCard', 'carouselCard']);
    if (card === 'standaloneCard') {
      const s = only(r.standaloneCard, 'standalone_card', ['cardOrientation', 'thumbnailImageAlignment', 'cardContent']);
      if (!['VERTICAL', 'HORIZONTAL'].includes(s.cardOrientation)) bad('standalone_card.card_orientation must be VERTICAL or HORIZONTAL');
      if (s.thumbnailImageAlignment !== undefined && !['LEFT', 'RIGHT'].includes(s.thumbnailImageAlignment))
        bad('standalone_card.thumbnail_image_alignment must be LEFT or RIGHT');
      checkCardContent(s.cardContent, 'standalone_card.card_content', null);
    } else {
      const k = only(r.carouselCard, 'carousel_card', ['cardWidth', 'cardContents']);
      if (!['SMALL', 'MEDIUM'].includes(k.cardWidth)) bad('carousel_card.card_width must be SMALL or MEDIUM');
      if (!Array.isArray(k.cardContents) || k.cardContents.length < 2 || k.cardContents.length > 10) bad('carousel_card.card_contents must hold 2 to 10 cards');
      k.cardContents.forEach((cc: unknown, i: number) => checkCardContent(cc, `carousel_card.card_contents[${i}]`, k.cardWidth));
    }
  }
  checkSuggestions(c.suggestions, 'content_message.suggestions', 11);
}

function b64urlJson(part: string): any {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

/** A running fake RBM platform (API host and token endpoint on one port). */
export class FakeRbm {
  readonly agentMessages: StoredAgentMessage[] = [];
  /** Every request, as `METHOD path` with its status. */
  readonly log: Array<{ method: string; path: string; status: number }> = [];
  readonly serviceAccount: { client_email: string; private_key: string; public_key: string };
  readonly tokens = new Map<string, number>();
  /** Assertions the token endpoint accepted. */
  assertions = 0;
  capabilityChecks = 0;
  webhookUrl: string | null = null;
  /** Numbers whose next message is taken and then left unanswered: the connection drops before the answer. */
  readonly loseAnswerFor = new Set<string>();
  private server: Server | null = null;
  url = '';

  constructor(readonly opts: FakeRbmOptions) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.serviceAccount = {
      client_email: `rbm-agent@${opts.agentId.replace(/[^a-z0-9-]/gi, '-')}.iam.gserviceaccount.com`,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      public_key: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  get tokenUri(): string {
    return `${this.url}/token`;
  }

  /** The service account's JSON key, as the RBM console hands it out. */
  serviceAccountKey(): string {
    return JSON.stringify({
      type: 'service_account',
      project_id: 'rbm-test',
      private_key_id: 'fake',
      private_key: this.serviceAccount.private_key,
      client_email: this.serviceAccount.client_email,
      client_id: '1',
      token_uri: this.tokenUri,
    });
  }

  /** Makes every access token issued so far invalid (as a revoked or lapsed token is): the next call gets 401. */
  expireTokens(): void {
    this.tokens.clear();
  }

  private answer(res: ServerResponse, req: IncomingMessage, path: string, status: number, body: unknown): void {
    this.log.push({ method: req.method ?? '', path, status });
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
  }

  private handle(req: IncomingMessage, raw: string, res: ServerResponse): void {
    const u = new URL(req.url ?? '/', this.url);
    try {
      if (u.pathname === '/token' && req.method === 'POST') return this.answer(res, req, u.pathname, 200, this.token(req, raw));
      const auth = String(req.headers.authorization ?? '');
      const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
      const until = this.tokens.get(token);
      if (until === undefined || until < Date.now()) {
        throw new Refusal(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
      }
      const m = /^\/v1\/phones\/([^/]+)\/(agentMessages|capabilities)(?:\/([^/]+))?$/.exec(u.pathname);
      if (!m) throw new Refusal(404, 'NOT_FOUND', `no such method ${req.method} ${u.pathname}`);
      const phone = decodeURIComponent(m[1]!);
      if (!E164.test(phone)) bad(`phone number ${phone} is not in E.164 format`);
      if (u.searchParams.get('agentId') !== this.opts.agentId)
        throw new Refusal(403, 'PERMISSION_DENIED', 'The caller does not have permission for this agent');
      const body = m[2] === 'capabilities' ? this.capabilities(req, u, phone) : this.agentMessage(req, u, phone, m[3], raw);
      if (m[2] === 'agentMessages' && req.method === 'POST' && this.loseAnswerFor.delete(phone)) {
        // Taken, and the answer lost on its way back (the sender's crash, a cut connection).
        this.log.push({ method: 'POST', path: u.pathname, status: 0 });
        req.socket.destroy();
        return;
      }
      if (m[2] === 'agentMessages' && req.method === 'POST' && this.opts.answerDelayMs) {
        setTimeout(() => {
          if (!res.destroyed) this.answer(res, req, u.pathname, 200, body);
        }, this.opts.answerDelayMs).unref();
        return;
      }
      return this.answer(res, req, u.pathname, 200, body);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      // The token endpoint answers in OAuth's own shape (RFC 6749 §5.2).
      if (u.pathname === '/token') return this.answer(res, req, u.pathname, err.code, { error: err.status, error_description: err.message });
      return this.answer(res, req, u.pathname, err.code, { error: { code: err.code, message: err.message, status: err.status } });
    }
  }

  /** The OAuth token endpoint: a JWT-bearer grant whose assertion holds. */
  private token(req: IncomingMessage, raw: string): unknown {
    const form = new URLSearchParams(raw);
    const refuse = (why: string): never => {
      throw new Refusal(400, 'invalid_grant', why);
    };
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) refuse('expected a form');
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') refuse('unsupported grant_type');
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) refuse('the assertion is not a JWT');
    const [h, c, s] = parts as [string, string, string];
    const header = b64urlJson(h);
    if (header.alg !== 'RS256') refuse('alg must be RS256');
    if (!createVerify('RSA-SHA256').update(`${h}.${c}`).verify(this.serviceAccount.public_key, Buffer.from(s, 'base64url'))) refuse('Invalid JWT Signature.');
    const claims = b64urlJson(c);
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== this.serviceAccount.client_email) refuse('iss is not the service account');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(RBM_SCOPE)) refuse('scope lacks rcsbusinessmessaging');
    if (claims.aud !== this.tokenUri) refuse('aud is not the token endpoint');
    if (typeof claims.iat !== 'number' || claims.iat > now + 60) refuse('iat is in the future');
    if (typeof claims.exp !== 'number' || claims.exp <= now || claims.exp - claims.iat > 3600)
      refuse('Invalid JWT: exp must be within an hour of iat, in the future');
    this.assertions++;
    const access = `ya29.${randomUUID()}`;
    const seconds = this.opts.tokenSeconds ?? 3599;
    this.tokens.set(access, Date.now() + seconds * 1000);
    return { access_token: access, expires_in: seconds, token_type: 'Bearer' };
  }

  private byNumber(phone: string): void {
    if (this.opts.notTesters?.includes(phone)) throw new Refusal(403, 'PERMISSION_DENIED', `${phone} is not a tester of this agent, which is not launched`);
    if (this.opts.notRcs?.includes(phone)) throw new Refusal(404, 'NOT_FOUND', 'Requested entity was not found.');
  }

  private capabilities(req: IncomingMessage, u: URL, phone: string): unknown {
    if (req.method !== 'GET') throw new Refusal(405, 'METHOD_NOT_ALLOWED', 'capabilities are read with GET');
    if (!UUID.test(u.searchParams.get('requestId') ?? '')) bad('requestId must be a UUID');
    this.capabilityChecks++;
    this.byNumber(phone);
    return {
      features: [
        'RICHCARD_STANDALONE',
        'RICHCARD_CAROUSEL',
        'ACTION_CREATE_CALENDAR_EVENT',
        'ACTION_DIAL',
        'ACTION_OPEN_URL',
        'ACTION_SHARE_LOCATION',
        'ACTION_VIEW_LOCATION',
      ],
    };
  }

  private agentMessage(req: IncomingMessage, u: URL, phone: string, id: string | undefined, raw: string): unknown {
    if (req.method === 'DELETE' && id) {
      const m = this.agentMessages.find((x) => x.phone === phone && x.messageId === id);
      if (m) m.revoked = true;
      return {};
    }
    if (req.method !== 'POST' || id) throw new Refusal(405, 'METHOD_NOT_ALLOWED', 'not a method of agentMessages');
    if (!String(req.headers['content-type']).startsWith('application/json')) bad('expected application/json');
    const messageId = u.searchParams.get('messageId') ?? '';
    if (!UUID.test(messageId)) bad('messageId must be a UUID (RFC 4122)');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      bad('Invalid JSON payload received.');
    }
    checkAgentMessage(body);
    this.byNumber(phone);
    if (this.agentMessages.some((x) => x.messageId === messageId)) throw new Refusal(409, 'ALREADY_EXISTS', `Message ${messageId} already exists`);
    const stored: StoredAgentMessage = { phone, messageId, agentId: this.opts.agentId, body: body as Record<string, any>, revoked: false, at: Date.now() };
    this.agentMessages.push(stored);
    return { name: `phones/${phone}/agentMessages/${messageId}`, sendTime: new Date().toISOString(), ...(body as object) };
  }

  /** RBM's webhook verification: answered 200 with the secret when the client token matches. */
  async verifyWebhook(webhookUrl: string, clientToken = this.opts.clientToken): Promise<{ status: number; verified: boolean }> {
    const secret = randomUUID();
    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ clientToken, secret }) });
    const text = await res.text();
    const verified = res.status === 200 && text === secret;
    if (verified) this.webhookUrl = webhookUrl;
    return { status: res.status, verified };
  }

  /** Pushes one event as Pub/Sub does; answers the webhook's status. `sign` may be replaced to forge one. */
  async push(
    event: Record<string, unknown>,
    sign: (data: Buffer) => string = (d) => createHmac('sha512', this.opts.clientToken).update(d).digest('base64'),
  ): Promise<number> {
    if (!this.webhookUrl) throw new Error('the webhook is not verified yet');
    const data = Buffer.from(JSON.stringify({ agentId: this.opts.agentId, sendTime: new Date().toISOString(), ...event }));
    const envelope = {
      message: { data: data.toString('base64'), messageId: String(Math.floor(Math.random() * 1e15)), publishTime: new Date().toISOString() },
      subscription: 'projects/rbm-test/subscriptions/rbm-agent-webhook',
    };
    const res = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-signature': sign(data) },
      body: JSON.stringify(envelope),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** A user event (DELIVERED, READ, IS_TYPING) about an agent message. */
  userEvent(eventType: 'DELIVERED' | 'READ' | 'IS_TYPING', m: Pick<StoredAgentMessage, 'phone' | 'messageId'>): Promise<number> {
    return this.push({ senderPhoneNumber: m.phone, eventType, eventId: randomUUID(), messageId: m.messageId });
  }

  /** A server event: the message's ttl ran out and it was revoked. */
  ttlRevoked(m: Pick<StoredAgentMessage, 'phone' | 'messageId'>): Promise<number> {
    if (m) this.agentMessages.find((x) => x.messageId === m.messageId)!.revoked = true;
    return this.push({ phoneNumber: m.phone, messageId: m.messageId, eventType: 'TTL_EXPIRATION_REVOKED', eventId: randomUUID() });
  }

  /** A user's message to the agent: text, suggestionResponse, location or userFile. */
  userMessage(phone: string, content: Record<string, unknown>, messageId = `MsG${randomUUID()}`): Promise<number> {
    return this.push({ senderPhoneNumber: phone, messageId, ...content });
  }
}
