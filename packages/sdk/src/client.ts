import { randomUUID } from 'node:crypto';
import { items, type Page, type PageOptions, pages } from './pagination.ts';
import { DEFAULT_RETRY, type RetryOptions } from './retry.ts';
import { type RetryEvent, sendWithRetries } from './transport.ts';
import type { Answer, AnswerOf, Body, MethodsOf, OperationOf, paths, Query, RcsMessage, RequestInput } from './types.ts';

export interface TernOptions {
  /** Where Tern answers, e.g. `https://tern.example.com` (no trailing path). */
  baseUrl: string;
  /** A channel's API key, or the operator key (TERN_ADMIN_KEY) for the admin calls. */
  apiKey: string;
  retry?: RetryOptions;
  /** The longest a single try may take before it is abandoned (and tried again when safe); default 30 s. */
  timeoutMs?: number;
  /** Told of each wait before a retry. */
  onRetry?: (event: RetryEvent) => void;
  /** Another fetch (a proxy's, a test's); default the global one. */
  fetch?: typeof fetch;
}

type Json = Record<string, unknown>;

/** Fills `{name}` segments of a path with the encoded parameters. */
function fillPath(path: string, params: Json | undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new TypeError(`path parameter ${name} of ${path} is missing`);
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Json | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * A client of Tern's REST API. Every call is typed from the OpenAPI document; errors are thrown as TernApiError
 * subclasses. A 429 is tried again after the wait its Retry-After asks for; a 503, a lost connection or a timeout only
 * when the request is safe to repeat: a read, or a send, which carries an Idempotency-Key generated for it and kept
 * across its tries, so Tern answers a repeated send with the first one's message instead of sending it twice.
 */
export class Tern {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #retry: Required<RetryOptions>;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: TernOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? fetch;
    this.#onRetry = options.onRetry;
  }

  /** Any operation of the API, by its method and path as the document writes them (`/sms/v1/messages/{id}`). */
  async request<P extends keyof paths, M extends MethodsOf<P>>(
    method: M,
    path: P,
    ...[input]: RequestInput<OperationOf<P, M>> extends { path: unknown } | { body: unknown }
      ? [RequestInput<OperationOf<P, M>>]
      : [RequestInput<OperationOf<P, M>>?]
  ): Promise<AnswerOf<OperationOf<P, M>>> {
    const init = (input ?? {}) as {
      path?: Json;
      query?: Json;
      body?: unknown;
      headers?: Record<string, string>;
      idempotencyKey?: string;
      signal?: AbortSignal;
    };
    const verb = method.toUpperCase();
    const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': this.#apiKey, ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.idempotencyKey !== undefined) headers['idempotency-key'] = init.idempotencyKey;
    const res = await sendWithRetries(
      {
        method: verb,
        baseUrl: this.#baseUrl,
        path,
        url: this.#baseUrl + fillPath(path, init.path) + queryString(init.query),
        headers,
        ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
        repeatable: verb === 'GET' || verb === 'PUT' || verb === 'DELETE' || init.idempotencyKey !== undefined,
        ...(init.signal && { signal: init.signal }),
      },
      { retry: this.#retry, timeoutMs: this.#timeoutMs, fetch: this.#fetch, ...(this.#onRetry && { onRetry: this.#onRetry }) },
    );
    const text = await res.text();
    if (text === '' || !(res.headers.get('content-type') ?? '').includes('json')) return (text === '' ? undefined : text) as AnswerOf<OperationOf<P, M>>;
    return JSON.parse(text) as AnswerOf<OperationOf<P, M>>;
  }

  /** A send: its Idempotency-Key is the caller's or a new one, the same for every try. */
  #send<P extends keyof paths>(path: P, input: { path?: Json; body: unknown }, idempotencyKey: string | undefined) {
    return this.request('post' as MethodsOf<P>, path, { ...input, idempotencyKey: idempotencyKey ?? randomUUID() } as never);
  }

  readonly sms = {
    /** Sends one SMS (201: the message, with its status). */
    send: (message: Body<'createSmsMessage'>, options: SendOptions = {}): Promise<Answer<'createSmsMessage'>> =>
      this.#send('/sms/v1/messages', { body: message }, options.idempotencyKey) as Promise<Answer<'createSmsMessage'>>,
    get: (id: string): Promise<Answer<'getSmsMessage'>> => this.request('get', '/sms/v1/messages/{id}', { path: { id } }),
    /** One page of messages (10 a page unless `pageSize` says otherwise; the last 10 days unless dated). */
    list: (query: Query<'listSmsMessages'> = {}): Promise<Answer<'listSmsMessages'>> => this.request('get', '/sms/v1/messages', { query }),
    /** Every message the query finds, page after page. */
    iterate: (query: Query<'listSmsMessages'> = {}, options: PageOptions = {}) =>
      items((page, pageSize) => this.sms.list({ ...query, page, pageSize }), { pageSize: query.pageSize, ...options }),
    pages: (query: Query<'listSmsMessages'> = {}, options: PageOptions = {}) =>
      pages((page, pageSize) => this.sms.list({ ...query, page, pageSize }), { pageSize: query.pageSize, ...options }),
    events: (id: string): Promise<Answer<'listSmsMessageEvents'>> => this.request('get', '/sms/v1/messages/{id}/events', { path: { id } }),
    /** Cancels a scheduled message (refunded). */
    cancel: (id: string): Promise<Answer<'deleteSmsMessage'>> => this.request('delete', '/sms/v1/messages/{id}', { path: { id } }),
    quote: (message: Body<'quoteSmsMessages'>): Promise<Answer<'quoteSmsMessages'>> => this.request('post', '/sms/v1/messages/quote', { body: message }),
  };

  readonly rcs = {
    /** Sends one RCS message: text, a rich card, a carousel, suggestions; an SMS fallback when the handset has no RCS. */
    send: (message: RcsMessage, options: SendOptions = {}): Promise<Answer<'createRcsMessage'>> =>
      this.#send('/rcs/v1/messages', { body: message }, options.idempotencyKey) as Promise<Answer<'createRcsMessage'>>,
    get: (id: string): Promise<Answer<'getRcsMessage'>> => this.request('get', '/rcs/v1/messages/{id}', { path: { id } }),
    list: (query: Query<'listRcsMessages'> = {}): Promise<Answer<'listRcsMessages'>> => this.request('get', '/rcs/v1/messages', { query }),
    iterate: (query: Query<'listRcsMessages'> = {}, options: PageOptions = {}) =>
      items((page, pageSize) => this.rcs.list({ ...query, page, pageSize }), { pageSize: query.pageSize, ...options }),
    /** Whether a number can receive RCS, and what it supports. */
    capability: (msisdn: string): Promise<Answer<'getRcsCapability'>> => this.request('get', '/rcs/v1/capabilities/{msisdn}', { path: { msisdn } }),
  };

  readonly otp = {
    /** Sends a one-time code; Tern makes and keeps it, the answer never shows it. */
    send: (request: Body<'createSmsOtp'>): Promise<Answer<'createSmsOtp'>> => this.request('post', '/sms/v1/otp', { body: request }),
    check: (id: string, check: Body<'checkSmsOtp'>): Promise<Answer<'checkSmsOtp'>> =>
      this.request('post', '/sms/v1/otp/{id}/check', { path: { id }, body: check }),
    get: (id: string): Promise<Answer<'getSmsOtp'>> => this.request('get', '/sms/v1/otp/{id}', { path: { id } }),
  };

  /** The network, carrier and validity of a number (`lookup:read`). */
  lookup(msisdn: string): Promise<Answer<'getCommonsLookup'>> {
    return this.request('get', '/commons/v1/lookup/{msisdn}', { path: { msisdn } });
  }

  readonly organisations = {
    list: (): Promise<Answer<'listCommonsOrganisations'>> => this.request('get', '/commons/v1/organisations'),
    get: (id: string): Promise<Answer<'getCommonsOrganisation'>> => this.request('get', '/commons/v1/organisations/{id}', { path: { id } }),
    /** The organisation's balance. */
    balance: async (id: string): Promise<Answer<'getCommonsOrganisation'>['balance']> => (await this.organisations.get(id)).balance,
    /** Moves funds between an organisation and one of its sub-accounts (idempotent like a send). */
    transfer: (
      id: string,
      transfer: Body<'createCommonsOrganisationTransfer'>,
      options: SendOptions = {},
    ): Promise<Answer<'createCommonsOrganisationTransfer'>> =>
      this.#send('/commons/v1/organisations/{id}/transfers', { path: { id }, body: transfer }, options.idempotencyKey) as Promise<
        Answer<'createCommonsOrganisationTransfer'>
      >,
    transfers: (id: string, query: Query<'listCommonsOrganisationTransfers'> = {}, options: PageOptions = {}) =>
      items(
        (page, pageSize) =>
          this.request('get', '/commons/v1/organisations/{id}/transfers', { path: { id }, query: { ...query, page, pageSize } }) as Promise<
            Page<Answer<'listCommonsOrganisationTransfers'>['items'][number]>
          >,
        { pageSize: query.pageSize, ...options },
      ),
  };

  readonly webhooks = {
    /** Every webhook delivery the query finds, page after page. */
    deliveries: (query: Query<'listCommonsWebhooksDeliveries'> = {}, options: PageOptions = {}) =>
      items((page, pageSize) => this.request('get', '/commons/v1/webhooks/deliveries', { query: { ...query, page, pageSize } }), {
        pageSize: query.pageSize,
        ...options,
      }),
    replay: (id: string): Promise<Answer<'replayCommonsWebhooksDelivery'>> =>
      this.request('post', '/commons/v1/webhooks/deliveries/{id}/replay', { path: { id } }),
    /** The channel's signing secret(s), for verifyWebhook. */
    secret: (channelId: string): Promise<Answer<'getCommonsChannelWebhookSecret'>> =>
      this.request('get', '/commons/v1/channels/{id}/webhook-secret', { path: { id: channelId } }),
  };

  /** The operator's calls: a client made with the operator key (TERN_ADMIN_KEY). */
  readonly admin = {
    createOrganisation: (organisation: Body<'createAdminOrganisation'>): Promise<Answer<'createAdminOrganisation'>> =>
      this.request('post', '/admin/v1/organisations', { body: organisation }),
    organisations: (options: PageOptions = {}) =>
      items((page, pageSize) => this.request('get', '/admin/v1/organisations', { query: { page, pageSize } }), options),
    createChannel: (organisationId: string, channel: Body<'createAdminOrganisationChannel'>): Promise<Answer<'createAdminOrganisationChannel'>> =>
      this.request('post', '/admin/v1/organisations/{id}/channels', { path: { id: organisationId }, body: channel }),
    createKey: (channelId: string, key: Body<'createAdminChannelCredential'>): Promise<Answer<'createAdminChannelCredential'>> =>
      this.request('post', '/admin/v1/channels/{id}/credentials', { path: { id: channelId }, body: key }),
    credit: (organisationId: string, credit: Body<'creditAdminOrganisation'>): Promise<Answer<'creditAdminOrganisation'>> =>
      this.request('post', '/admin/v1/organisations/{id}/credit', { path: { id: organisationId }, body: credit }),
    setRateLimits: (organisationId: string, limits: Body<'setAdminOrganisationRateLimits'>): Promise<Answer<'setAdminOrganisationRateLimits'>> =>
      this.request('put', '/admin/v1/organisations/{id}/rate-limits', { path: { id: organisationId }, body: limits }),
  };
}

export interface SendOptions {
  /** The send's Idempotency-Key (1–255 visible ASCII characters); default a new UUID. Reuse it to repeat a send safely. */
  idempotencyKey?: string;
}
