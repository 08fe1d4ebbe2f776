import { EventEmitter } from 'node:events';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import { buildConnector, Client, type Dispatcher } from 'undici';
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
  /**
   * Whose delivery it is (an organisation): a tenant's attempts and sockets are bounded together, its origins have
   * connections of their own, and tenants take turns at the connections in all. None: one tenant of its own.
   */
  tenant?: string;
}

export interface WebhookHttpClientOptions {
  /** Allow private, loopback and link-local destinations (TERN_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Budget for one attempt: connect, response headers and the part of the body that is read. */
  timeoutMs?: number;
  /** Attempts in flight to one origin (of one tenant) at a time; more wait in that origin's queue. */
  maxConcurrentPerHost?: number;
  /**
   * Sockets open to receivers at once, idle ones kept for the next attempt included, in all and for one tenant;
   * attempts in flight are bounded by the same numbers. Attempts past them wait, taking turns tenant by tenant.
   */
  maxSockets?: number;
  maxSocketsPerTenant?: number;
  /** How long a socket is kept idle for a next attempt to its origin, at most (whatever the receiver suggests). */
  keepAliveMs?: number;
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

/** One connection (an undici client of one socket at a time) to a destination: in use by an attempt, or idle. */
interface Connection {
  readonly client: Client;
  busy: boolean;
  /** Its socket is open (or opening): it holds a place in the socket budget. */
  open: boolean;
  /** Closed to make room in the budget, its socket not closed yet. */
  closingForRoom: boolean;
  /** When its last attempt ended: the idle connection unused the longest is closed first to make room. */
  idleSince: number;
}

/** Attempts to one origin for one tenant, which have their own connections and their own queue. */
interface Destination {
  readonly key: string;
  readonly origin: string;
  readonly tenant: Tenant;
  /** At most `maxConcurrentPerHost`: each attempt in flight has one of its own. */
  readonly connections: Connection[];
  active: number;
  /** Sockets of its connections open (or opening), each holding its place in the socket budget until it closes. */
  sockets: number;
  /** Each waiter is called with true when it gets a slot, false when the client closes. */
  readonly waiting: Array<(granted: boolean) => void>;
  idleTimer: NodeJS.Timeout | undefined;
}

/** A tenant's attempts in flight and sockets open, and its destinations with attempts waiting (taken in turn). */
interface Tenant {
  readonly id: string;
  active: number;
  sockets: number;
  readonly ready: Set<Destination>;
  readonly destinations: Set<Destination>;
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
  private readonly maxSockets: number;
  private readonly maxSocketsPerTenant: number;
  private readonly keepAliveMs: number;
  private readonly destinations = new Map<string, Destination>();
  private readonly tenants = new Map<string, Tenant>();
  /** Tenants with attempts waiting, in the order they take turns. */
  private readonly waitingTenants = new Set<Tenant>();
  private queuedTotal = 0;
  private activeTotal = 0;
  private socketsTotal = 0;
  /** Connections closed to make room whose sockets have not closed yet (room on its way). */
  private closingForRoom = 0;
  /** New connections waiting for room in the socket budget. */
  private readonly socketWaiters: Array<{ destination: Destination; go: (granted: boolean) => void }> = [];
  private closed = false;

  constructor(options: WebhookHttpClientOptions) {
    this.allowPrivate = options.allowPrivate;
    this.timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
    this.maxConcurrentPerHost = positive('maxConcurrentPerHost', options.maxConcurrentPerHost ?? 8);
    this.maxSockets = positive('maxSockets', options.maxSockets ?? 256);
    this.maxSocketsPerTenant = Math.min(this.maxSockets, positive('maxSocketsPerTenant', options.maxSocketsPerTenant ?? 64));
    this.keepAliveMs = positive('keepAliveMs', options.keepAliveMs ?? 4_000);
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

    const destination = this.destinationFor(request.tenant ?? '', target.origin);
    const denied = await this.acquire(destination);
    if (denied !== null) return failure('retry', denied, 0);
    const connection = this.connectionFor(destination);
    try {
      if (request.stillHeld && !request.stillHeld()) return failure('fenced', 'the claim of this delivery ran out before it was sent', 0);
      return await this.attempt(connection.client, target, request);
    } finally {
      connection.busy = false;
      connection.idleSince = Date.now();
      this.release(destination);
    }
  }

  /** Attempts in flight or waiting for the origin of `urlOrOrigin`, every tenant's. */
  pending(urlOrOrigin: string): number {
    const origin = originOf(urlOrOrigin);
    let n = 0;
    for (const d of this.destinations.values()) if (d.origin === origin) n += d.active + d.waiting.length;
    return n;
  }

  /** Origins that currently have a connection pool. */
  openOrigins(): string[] {
    return [...new Set([...this.destinations.values()].map((d) => d.origin))];
  }

  /** Sockets open to receivers (idle ones included), and attempts in flight, in all and by tenant. */
  usage(): { sockets: number; active: number; tenants: Map<string, { sockets: number; active: number }> } {
    const tenants = new Map<string, { sockets: number; active: number }>();
    for (const t of this.tenants.values()) if (t.sockets > 0 || t.active > 0) tenants.set(t.id, { sockets: t.sockets, active: t.active });
    return { sockets: this.socketsTotal, active: this.activeTotal, tenants };
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
    this.waitingTenants.clear();
    for (const w of this.socketWaiters.splice(0)) w.go(false);
    this.queuedTotal = 0;
    await Promise.all(destinations.flatMap((destination) => destination.connections.map((c) => c.client.close())));
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

  private async attempt(pool: Dispatcher, url: URL, request: WebhookRequest): Promise<AttemptResult> {
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

  private destinationFor(tenantId: string, origin: string): Destination {
    const key = `${tenantId}\n${origin}`;
    let destination = this.destinations.get(key);
    if (!destination) {
      let tenant = this.tenants.get(tenantId);
      if (!tenant) {
        tenant = { id: tenantId, active: 0, sockets: 0, ready: new Set(), destinations: new Set() };
        this.tenants.set(tenantId, tenant);
      }
      destination = { key, origin, tenant, connections: [], active: 0, sockets: 0, waiting: [], idleTimer: undefined };
      tenant.destinations.add(destination);
      this.destinations.set(key, destination);
    }
    return destination;
  }

  /**
   * A connection for an attempt that has its slot: an idle one with its socket open, else an idle one to open again,
   * else a new one (a destination never has more attempts in flight than `maxConcurrentPerHost`, nor connections).
   */
  private connectionFor(destination: Destination): Connection {
    const idle = destination.connections.filter((c) => !c.busy);
    const connection = idle.find((c) => c.open) ?? idle[0] ?? this.newConnection(destination);
    connection.busy = true;
    return connection;
  }

  private newConnection(destination: Destination): Connection {
    const base = buildConnector({ timeout: this.timeoutMs, lookup: this.lookup });
    const client = new Client(destination.origin, {
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: Math.min(this.keepAliveMs, 4_000),
      keepAliveMaxTimeout: this.keepAliveMs,
      // Every new socket takes its place in the budget first, and gives it back when it closes.
      connect: (options, callback) => {
        void this.openSocket(destination).then((granted) => {
          if (!granted) return callback(new Error('webhook client is closed'), null);
          connection.open = true;
          base(options, (err, socket) => {
            if (err || !socket) {
              this.socketClosed(destination, connection);
              return callback(err ?? new Error('no socket'), null);
            }
            (socket as Socket).once('close', () => this.socketClosed(destination, connection));
            callback(null, socket);
          });
        });
      },
    });
    const connection: Connection = { client, busy: false, open: false, closingForRoom: false, idleSince: Date.now() };
    destination.connections.push(connection);
    return connection;
  }

  private mayStart(destination: Destination): boolean {
    return destination.active < this.maxConcurrentPerHost && destination.tenant.active < this.maxSocketsPerTenant && this.activeTotal < this.maxSockets;
  }

  private start(destination: Destination): void {
    destination.active++;
    destination.tenant.active++;
    this.activeTotal++;
  }

  /** Takes a slot for the destination, waiting for one if need be; returns why not when the queue is full. */
  private async acquire(destination: Destination): Promise<string | null> {
    clearTimeout(destination.idleTimer);
    destination.idleTimer = undefined;
    if (destination.waiting.length === 0 && this.mayStart(destination)) {
      this.start(destination);
      return null;
    }
    if (destination.waiting.length >= this.maxQueuedPerHost) {
      return `${destination.waiting.length} attempts already waiting for ${destination.origin}`;
    }
    if (this.queuedTotal >= this.maxQueuedTotal) {
      return `${this.queuedTotal} webhook attempts already waiting in total`;
    }
    this.queuedTotal++;
    const granted = new Promise<boolean>((resolve) => destination.waiting.push(resolve));
    destination.tenant.ready.add(destination);
    this.waitingTenants.add(destination.tenant);
    this.pump();
    return (await granted) ? null : 'webhook client is closed';
  }

  /** Frees the slot and hands slots to waiting attempts; arms the idle timer of a destination left with nothing. */
  private release(destination: Destination): void {
    destination.active--;
    destination.tenant.active--;
    this.activeTotal--;
    this.pump();
    // Connections wait for room in the budget: the connection just idle may give it.
    this.makeRoom();
    if (destination.active === 0 && destination.waiting.length === 0 && !this.closed) this.armIdleTimer(destination);
  }

  /**
   * Starts waiting attempts while there is room: tenants take turns (each its oldest waiting attempt of the next of
   * its origins with room), so one with thousands of attempts waiting holds back no other's.
   */
  private pump(): void {
    while (this.activeTotal < this.maxSockets && this.waitingTenants.size > 0) {
      let started = false;
      for (const tenant of [...this.waitingTenants]) {
        if (this.activeTotal >= this.maxSockets) break;
        if (tenant.active >= this.maxSocketsPerTenant) continue;
        const destination = [...tenant.ready].find((d) => d.active < this.maxConcurrentPerHost);
        if (!destination) continue;
        const wake = destination.waiting.shift()!;
        this.queuedTotal--;
        this.start(destination);
        // The next turn goes to the next tenant, and within this one to its next origin.
        tenant.ready.delete(destination);
        if (destination.waiting.length > 0) tenant.ready.add(destination);
        this.waitingTenants.delete(tenant);
        if (tenant.ready.size > 0) this.waitingTenants.add(tenant);
        started = true;
        wake(true);
      }
      if (!started) return;
    }
  }

  private armIdleTimer(destination: Destination): void {
    clearTimeout(destination.idleTimer);
    destination.idleTimer = setTimeout(() => {
      if (destination.active > 0 || destination.waiting.length > 0 || this.destinations.get(destination.key) !== destination) return;
      this.retire(destination);
    }, this.idlePoolMs);
    destination.idleTimer.unref();
  }

  /** Closes a destination's connections (it has nothing in flight or waiting): its idle sockets close, giving back their room. */
  private retire(destination: Destination): void {
    clearTimeout(destination.idleTimer);
    if (this.destinations.get(destination.key) === destination) this.destinations.delete(destination.key);
    destination.tenant.destinations.delete(destination);
    this.forgetIfUnused(destination.tenant);
    for (const c of destination.connections.splice(0)) c.client.close().catch(() => {});
  }

  /** A tenant with nothing left here (no pool, no socket still closing) is forgotten. */
  private forgetIfUnused(tenant: Tenant): void {
    if (tenant.destinations.size === 0 && tenant.sockets === 0 && tenant.active === 0 && this.tenants.get(tenant.id) === tenant) this.tenants.delete(tenant.id);
  }

  /** Room in the socket budget for a new socket of `destination`, waiting for it (false: the client closed). */
  private async openSocket(destination: Destination): Promise<boolean> {
    if (this.closed) return false;
    if (this.socketWaiters.length === 0 && this.socketFits(destination.tenant)) {
      this.socketTaken(destination);
      return true;
    }
    // Counted as it is granted (admitSockets), so the next waiter sees the room taken.
    const granted = new Promise<boolean>((go) => this.socketWaiters.push({ destination, go }));
    this.makeRoom();
    return granted;
  }

  private socketFits(tenant: Tenant): boolean {
    return this.socketsTotal < this.maxSockets && tenant.sockets < this.maxSocketsPerTenant;
  }

  private socketTaken(destination: Destination): void {
    destination.sockets++;
    destination.tenant.sockets++;
    this.socketsTotal++;
  }

  private socketClosed(destination: Destination, connection: Connection): void {
    connection.open = false;
    if (connection.closingForRoom) {
      connection.closingForRoom = false;
      this.closingForRoom--;
    }
    destination.sockets--;
    destination.tenant.sockets--;
    this.socketsTotal--;
    this.admitSockets();
    this.forgetIfUnused(destination.tenant);
  }

  /** Gives room to waiting connections, oldest first, each when its tenant's share and the total allow. */
  private admitSockets(): void {
    for (let i = 0; i < this.socketWaiters.length;) {
      const w = this.socketWaiters[i]!;
      if (this.socketFits(w.destination.tenant)) {
        this.socketWaiters.splice(i, 1);
        this.socketTaken(w.destination);
        w.go(true);
      } else i++;
    }
  }

  /**
   * New connections wait for room: attempts in flight are bounded by the same numbers as sockets, so some socket is
   * idle — of the waiter's tenant when its share is what is full. For each waiter not already getting room from a
   * connection closing, the idle connection unused the longest is closed, leaving alone those a destination is about
   * to take up (an attempt there has its slot and no connection yet).
   */
  private makeRoom(): void {
    let owed = this.closingForRoom;
    for (const w of this.socketWaiters) {
      if (this.socketFits(w.destination.tenant)) continue;
      if (owed > 0) {
        owed--;
        continue;
      }
      const tenant = w.destination.tenant;
      const own = tenant.sockets >= this.maxSocketsPerTenant;
      let oldest: { destination: Destination; connection: Connection } | null = null;
      for (const d of own ? tenant.destinations : this.destinations.values()) {
        if (d.active > d.connections.filter((c) => c.busy).length) continue;
        for (const c of d.connections) {
          if (c.busy || !c.open || c.closingForRoom) continue;
          if (oldest === null || c.idleSince < oldest.connection.idleSince) oldest = { destination: d, connection: c };
        }
      }
      if (!oldest) return;
      const { destination, connection } = oldest;
      destination.connections.splice(destination.connections.indexOf(connection), 1);
      connection.closingForRoom = true;
      this.closingForRoom++;
      connection.client.close().catch(() => {});
    }
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
  const message = err.message !== '' || !(err instanceof AggregateError) ? err.message : err.errors.map((inner: Error) => inner.message).join('; ');
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
