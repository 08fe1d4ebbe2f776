import { EventEmitter } from 'node:events';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { AddressRefusedError, guardedLookup, isPublicAddress, type LookupAll } from './address-guard.ts';

/**
 * `delivered`: the receiver answered 2xx. `gone`: it answered 410, stop retrying this delivery. `retry`: any other
 * answer, a network error or a timeout. `refused`: the URL can never work (malformed, not http(s), private address).
 */
/** `fenced`: not sent, the sender's claim of the delivery ran out while it waited (another node sends it). */
export type AttemptOutcome = 'delivered' | 'retry' | 'gone' | 'refused' | 'fenced';

export interface AttemptResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  /** Time spent on the HTTP exchange itself, not waiting for a free slot for the destination. */
  latencyMs: number;
  error: string | null;
  /** The start of the response body (at most 1 KiB), for the attempt record. */
  responseSnippet: string | null;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface WebhookRequest {
  method: 'POST' | 'GET';
  url: string;
  /** JSON text for POST. GET (legacy 1.6 callbacks) carries its data in `query` instead. */
  body?: string;
  headers?: Readonly<Record<string, string>>;
  /** Appended to the URL's own query string; null and undefined values are left out. */
  query?: Readonly<Record<string, QueryValue>>;
  /** Asked once a connection is free, right before the request goes out: false leaves it unsent (`fenced`). */
  stillHeld?: () => boolean;
}

export interface WebhookHttpClientOptions {
  /** Allow private, loopback and link-local destinations (TERN_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Budget for one attempt: connect, response headers and the part of the body that is read. */
  timeoutMs?: number;
  /** Attempts in flight to one origin at a time; more wait in that origin's queue. */
  maxConcurrentPerHost?: number;
  /** Attempts that may wait for one origin before further ones are turned back at once as `retry`. */
  maxQueuedPerHost?: number;
  /** Attempts that may wait across all origins. */
  maxQueuedTotal?: number;
  /** An origin's connection pool is closed after this long without attempts. */
  idlePoolMs?: number;
  userAgent?: string;
  /** Name resolution; the system resolver by default. Tests substitute a fake DNS. */
  lookupAll?: LookupAll;
}

/** How much of a response body is read before the connection is dropped, and how much of it is kept. */
const RESPONSE_READ_LIMIT = 4096;
const SNIPPET_BYTES = 1024;

/** Attempts to one origin, which has its own pool of connections and its own queue. */
interface Destination {
  readonly origin: string;
  readonly pool: Pool;
  active: number;
  /** Each waiter is called with true when it gets a slot, false when the client closes. */
  readonly waiting: Array<(granted: boolean) => void>;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * Makes single webhook attempts and reports precisely how each went; scheduling retries is the caller's job.
 *
 * Concurrency is bounded per destination *origin* (scheme, host and port): a receiver that hangs only ties up its
 * own origin's slots, and every other origin keeps its own. `localhost:8080` and `127.0.0.1:8080` are therefore two
 * destinations, as are two ports of one host.
 */
export class WebhookHttpClient {
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  private readonly maxConcurrentPerHost: number;
  private readonly maxQueuedPerHost: number;
  private readonly maxQueuedTotal: number;
  private readonly idlePoolMs: number;
  private readonly userAgent: string;
  private readonly lookup: LookupFunction;
  private readonly destinations = new Map<string, Destination>();
  private queuedTotal = 0;
  private closed = false;

  constructor(options: WebhookHttpClientOptions) {
    this.allowPrivate = options.allowPrivate;
    this.timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
    this.maxConcurrentPerHost = positive('maxConcurrentPerHost', options.maxConcurrentPerHost ?? 8);
    this.maxQueuedPerHost = nonNegative('maxQueuedPerHost', options.maxQueuedPerHost ?? 1_000);
    this.maxQueuedTotal = nonNegative('maxQueuedTotal', options.maxQueuedTotal ?? 10_000);
    this.idlePoolMs = positive('idlePoolMs', options.idlePoolMs ?? 60_000);
    this.userAgent = options.userAgent ?? 'Tern-Webhooks/1';
    this.lookup = guardedLookup(this.allowPrivate, options.lookupAll);
  }

  async send(request: WebhookRequest): Promise<AttemptResult> {
    if (request.method === 'GET' && request.body !== undefined) {
      throw new TypeError('a GET webhook carries no body: pass its data as query parameters');
    }
    const target = this.targetUrl(request);
    if (typeof target === 'string') return failure('refused', target, 0);
    if (this.closed) return failure('retry', 'webhook client is closed', 0);

    const destination = this.destinationFor(target.origin);
    const denied = await this.acquire(destination);
    if (denied !== null) return failure('retry', denied, 0);
    try {
      if (request.stillHeld && !request.stillHeld()) return failure('fenced', 'the claim of this delivery ran out before it was sent', 0);
      return await this.attempt(destination.pool, target, request);
    } finally {
      this.release(destination);
    }
  }

  /** Attempts in flight or waiting for the origin of `urlOrOrigin`. */
  pending(urlOrOrigin: string): number {
    const destination = this.destinations.get(originOf(urlOrOrigin) ?? '');
    return destination ? destination.active + destination.waiting.length : 0;
  }

  /** Origins that currently have a connection pool. */
  openOrigins(): string[] {
    return [...this.destinations.keys()];
  }

  /** Turns away waiting attempts, lets those in flight finish (each within its timeout) and closes every pool. */
  async close(): Promise<void> {
    this.closed = true;
    const destinations = [...this.destinations.values()];
    this.destinations.clear();
    for (const destination of destinations) {
      clearTimeout(destination.idleTimer);
      for (const wake of destination.waiting.splice(0)) wake(false);
    }
    this.queuedTotal = 0;
    await Promise.all(destinations.map((destination) => destination.pool.close()));
  }

  /** The URL to request, or why it is refused. Literal IPs are judged here: sockets never look them up. */
  private targetUrl(request: WebhookRequest): URL | string {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return `invalid webhook URL: ${JSON.stringify(request.url)}`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return `webhook URL must use http or https, not ${url.protocol.slice(0, -1)}`;
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (!this.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) {
      return new AddressRefusedError(host, host).message;
    }
    const extra = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== null && value !== undefined) extra.append(name, String(value));
    }
    // Appended as text so the customer's own query string keeps its exact encoding.
    if (extra.size > 0) url.search = url.search === '' ? extra.toString() : `${url.search.slice(1)}&${extra}`;
    return url;
  }

  private async attempt(pool: Pool, url: URL, request: WebhookRequest): Promise<AttemptResult> {
    // The attempt's deadline, told to undici through an emitter: an AbortController (a signal, its listeners as
    // events) cost about a tenth of an attempt's CPU.
    const deadline = new EventEmitter();
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      deadline.emit('abort');
    }, this.timeoutMs);
    const started = performance.now();
    try {
      const { statusCode, body } = await pool.request({
        method: request.method,
        path: url.pathname + url.search,
        headers: this.headersFor(url, request),
        body: request.body,
        signal: deadline,
      });
      const responseSnippet = await readSnippet(body);
      const outcome = outcomeFor(statusCode);
      return {
        outcome,
        httpStatus: statusCode,
        latencyMs: elapsedSince(started),
        error: outcome === 'delivered' ? null : `receiver answered HTTP ${statusCode}`,
        responseSnippet,
      };
    } catch (err) {
      // An invalid argument (a header undici will not send) fails the same way on every retry.
      const code = (err as { code?: unknown } | null)?.code;
      const refused = err instanceof AddressRefusedError || code === 'UND_ERR_INVALID_ARG';
      const error = expired ? `no answer within ${this.timeoutMs} ms` : describeError(err);
      return failure(refused ? 'refused' : 'retry', error, elapsedSince(started));
    } finally {
      clearTimeout(timer);
    }
  }

  private headersFor(url: URL, request: WebhookRequest): Record<string, string> {
    const headers: Record<string, string> = { 'user-agent': this.userAgent };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (url.username !== '' || url.password !== '') {
      const credentials = `${percentDecoded(url.username)}:${percentDecoded(url.password)}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    return headers;
  }

  private destinationFor(origin: string): Destination {
    let destination = this.destinations.get(origin);
    if (!destination) {
      const pool = new Pool(origin, {
        connections: this.maxConcurrentPerHost,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        connect: { timeout: this.timeoutMs, lookup: this.lookup },
      });
      destination = { origin, pool, active: 0, waiting: [], idleTimer: undefined };
      this.destinations.set(origin, destination);
    }
    return destination;
  }

  /** Takes a slot for the destination, waiting for one if need be; returns why not when the queue is full. */
  private async acquire(destination: Destination): Promise<string | null> {
    clearTimeout(destination.idleTimer);
    destination.idleTimer = undefined;
    if (destination.active < this.maxConcurrentPerHost) {
      destination.active++;
      return null;
    }
    if (destination.waiting.length >= this.maxQueuedPerHost) {
      return `${destination.waiting.length} attempts already waiting for ${destination.origin}`;
    }
    if (this.queuedTotal >= this.maxQueuedTotal) {
      return `${this.queuedTotal} webhook attempts already waiting in total`;
    }
    this.queuedTotal++;
    const granted = await new Promise<boolean>((resolve) => destination.waiting.push(resolve));
    return granted ? null : 'webhook client is closed';
  }

  /** Hands the slot to the next waiter, or frees it and arms the idle timer when nothing is left. */
  private release(destination: Destination): void {
    const next = destination.waiting.shift();
    if (next) {
      this.queuedTotal--;
      next(true);
      return;
    }
    destination.active--;
    if (destination.active > 0 || this.closed) return;
    destination.idleTimer = setTimeout(() => {
      if (destination.active > 0 || this.destinations.get(destination.origin) !== destination) return;
      this.destinations.delete(destination.origin);
      destination.pool.close().catch(() => {});
    }, this.idlePoolMs);
    destination.idleTimer.unref();
  }
}

function outcomeFor(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  return 'retry';
}

function failure(outcome: AttemptOutcome, error: string, latencyMs: number): AttemptResult {
  return { outcome, httpStatus: null, latencyMs, error, responseSnippet: null };
}

/** Reads at most a few KiB and drops the rest; an answer whose status arrived stands even if its body breaks. */
async function readSnippet(body: Readable): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_READ_LIMIT) break; // leaving the loop destroys the body and its connection
    }
  } catch {
    // The status line already said how the attempt went.
  }
  if (size === 0) return null;
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof AddressRefusedError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  // Node reports a failed happy-eyeballs connect as an AggregateError with an empty message.
  const message =
    err.message !== '' || !(err instanceof AggregateError)
      ? err.message
      : err.errors.map((inner: Error) => inner.message).join('; ');
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** URL userinfo is percent-encoded; a malformed escape is kept as written rather than failing the attempt. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function originOf(urlOrOrigin: string): string | null {
  try {
    return new URL(urlOrOrigin).origin;
  } catch {
    return null;
  }
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be an integer >= 0, got ${value}`);
  return value;
}
