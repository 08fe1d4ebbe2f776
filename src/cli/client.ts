import { CliError, EXIT } from './io.ts';
import type { Connection } from './profile.ts';

/** An error answer of the API, `{errorCode, message, detail}`. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly detail: string,
  ) {
    super(`${errorCode}: ${detail}`, exitCodeOf(status));
  }
}

export function exitCodeOf(status: number): number {
  if (status === 401 || status === 403) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 409) return EXIT.CONFLICT;
  if (status === 429 || status >= 500) return EXIT.UNAVAILABLE;
  return EXIT.FAILED;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Use the operator key. */
  admin?: boolean;
  /**
   * How many times a 429 (or a 503 with Retry-After) is tried again after the wait Retry-After asks for (default
   * DEFAULT_RETRIES; Infinity for a command that must finish).
   */
  retries?: number;
  /** Told of each wait, in milliseconds, before it starts. */
  onWait?: (ms: number) => void;
}

/** A request answered 429 is tried again this many times unless the command says otherwise. */
export const DEFAULT_RETRIES = 5;

/** The longest wait between two tries, whatever Retry-After says. */
const MAX_WAIT_MS = 60_000;

/**
 * How long to wait before trying again: Retry-After in seconds or as an HTTP date, else a backoff doubling from one
 * second with the attempt. At most MAX_WAIT_MS, at least 100 ms.
 */
export function retryDelayMs(retryAfter: string | null, attempt: number, now = Date.now()): number {
  const backoff = Math.min(MAX_WAIT_MS, 1000 * 2 ** Math.min(attempt, 6));
  let ms = backoff;
  const value = retryAfter?.trim() ?? '';
  if (/^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else if (value !== '' && Number.isFinite(Date.parse(value))) ms = Date.parse(value) - now;
  return Math.min(MAX_WAIT_MS, Math.max(100, ms));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The REST API of one Tern, with the connection's keys: the CLI's only way in. */
export class Client {
  constructor(readonly conn: Connection) {}

  key(admin = false): string {
    const k = admin ? this.conn.adminKey : this.conn.apiKey;
    if (!k) {
      throw new CliError(
        admin
          ? 'no operator key: set TERN_ADMIN_KEY or run tern login --admin'
          : 'no API key: set TERN_API_KEY (a channel key printed by tern serve --demo) or run tern login',
        EXIT.AUTH,
      );
    }
    return k;
  }

  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': this.key(opts.admin), 'x-tern-client': 'cli', ...opts.headers };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.conn.url + path, {
        method,
        headers,
        ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `Tern does not answer at ${this.conn.url} (${cause?.code ?? cause?.message ?? (err as Error).message}): is it running? (TERN_URL)`,
        EXIT.UNAVAILABLE,
      );
    }
  }

  /** `raw`, tried again after the wait a 429 (or a 503 with Retry-After) asks for, `opts.retries` times. */
  async patient(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const retries = opts.retries ?? DEFAULT_RETRIES;
    for (let attempt = 0; ; attempt++) {
      const res = await this.raw(method, path, opts);
      const retryAfter = res.headers.get('retry-after');
      if (attempt >= retries || !(res.status === 429 || (res.status === 503 && retryAfter !== null))) return res;
      await res.arrayBuffer();
      const ms = retryDelayMs(retryAfter, attempt);
      opts.onWait?.(ms);
      await sleep(ms);
    }
  }

  async call<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<{ body: T; headers: Headers }> {
    const res = await this.patient(method, path, opts);
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
    if (!res.ok) {
      const e = (typeof body === 'object' && body !== null ? body : {}) as { errorCode?: string; detail?: string; message?: string };
      throw new ApiError(res.status, e.errorCode ?? `${res.status}`, e.detail ?? e.message ?? (text || res.statusText));
    }
    return { body: body as T, headers: res.headers };
  }

  async get<T = any>(path: string, opts?: RequestOptions): Promise<T> {
    return (await this.call<T>('GET', path, opts)).body;
  }

  async post<T = any>(path: string, body: unknown = {}, opts: RequestOptions = {}): Promise<T> {
    return (await this.call<T>('POST', path, { ...opts, body })).body;
  }
}

/** `?a=1&b=2` without the empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface LiveEvent {
  eventId: string;
  kind: string;
  status: string;
  detail?: string;
  date: string;
  message: any;
}

/**
 * Follows GET /commons/v1/events until `signal` aborts or `onEvent` returns false; `onReady` runs when the stream
 * listens (read the current state then: nothing committed later is missed). Reconnects after a drop, resuming from
 * the last event id.
 */
export async function follow(
  client: Client,
  opts: { type?: string; onEvent: (e: LiveEvent) => boolean | void; onReady?: () => Promise<void> | void; signal?: AbortSignal },
): Promise<void> {
  let lastId: string | null = null;
  let failures = 0;
  const path = `/commons/v1/events${query({ 'searchBy[channel.type]': opts.type })}`;
  while (!opts.signal?.aborted) {
    let res: Response;
    try {
      res = await fetch(client.conn.url + path, {
        headers: { 'x-api-key': client.key(), accept: 'text/event-stream', ...(lastId && { 'last-event-id': lastId }) },
        ...(opts.signal && { signal: opts.signal }),
      });
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (++failures >= 5) throw new CliError(`the event stream of ${client.conn.url} cannot be reached: ${(err as Error).message}`, EXIT.UNAVAILABLE);
      await new Promise((r) => setTimeout(r, 1000 * failures));
      continue;
    }
    if (!res.ok || !res.body) {
      const text = await res.text();
      let e: { errorCode?: string; detail?: string } = {};
      try {
        e = JSON.parse(text);
      } catch {
        // not JSON
      }
      throw new ApiError(res.status, e.errorCode ?? String(res.status), e.detail ?? text);
    }
    failures = 0;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
            else if (line.startsWith('id: ')) lastId = line.slice(4);
          }
          if (event === 'ready') await opts.onReady?.();
          else if (event === 'message' && data && opts.onEvent(JSON.parse(data) as LiveEvent) === false) return;
        }
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      if ((err as Error).name !== 'TypeError' && !(err as Error).message?.includes('terminated')) throw err;
    }
  }
}
