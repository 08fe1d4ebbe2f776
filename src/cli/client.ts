import {
  apiError,
  errorBodyOf,
  retryDelayMs as backoffMs,
  sendWithRetries,
  TernApiError,
  TernAuthError,
  TernConflictError,
  TernConnectionError,
  TernNotFoundError,
  TernRateLimitError,
  TernServerError,
} from '@tern/sdk';
import { CliError, EXIT } from './io.ts';
import type { Connection } from './profile.ts';

/** An error answer of the API, `{errorCode, message, detail}`: the SDK's error, with the exit code its kind means. */
export class ApiError extends CliError {
  readonly status: number;
  readonly errorCode: string;
  readonly detail: string;

  constructor(readonly answer: TernApiError) {
    const detail = answer.detail || answer.message;
    super(`${answer.errorCode}: ${detail}`, exitCodeOf(answer));
    this.status = answer.status;
    this.errorCode = answer.errorCode;
    this.detail = detail;
  }
}

export function exitCodeOf(err: TernApiError): number {
  if (err instanceof TernAuthError) return EXIT.AUTH;
  if (err instanceof TernNotFoundError) return EXIT.NOT_FOUND;
  if (err instanceof TernConflictError) return EXIT.CONFLICT;
  if (err instanceof TernRateLimitError || err instanceof TernServerError) return EXIT.UNAVAILABLE;
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

/**
 * The SDK's waits without their jitter (a command's waits are shown and counted), doubling from one second, at most a
 * minute whatever Retry-After says.
 */
const WAITS = { retries: DEFAULT_RETRIES, baseDelayMs: 1000, maxDelayMs: 60_000 };

/**
 * How long to wait before trying again: Retry-After in seconds or as an HTTP date, else a backoff doubling from one
 * second with the attempt (0 for the first retry). At most a minute, at least 100 ms.
 */
export function retryDelayMs(retryAfter: string | null, attempt: number, now = Date.now()): number {
  return Math.max(
    100,
    backoffMs(attempt + 1, retryAfter, WAITS, () => 1, now),
  );
}

/**
 * The CLI tries again only what Tern refused before doing anything: a 429, and a 503 with Retry-After (the database
 * unavailable for a moment). Anything else, and no answer at all, is said at once.
 */
const refusedForNow = (status: number, _errorCode: string, _repeatable: boolean, retryAfter: string | null) =>
  status === 429 || (status === 503 && retryAfter !== null);

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

  /** A successful answer, its body unread; an error answer is thrown as ApiError, after the retries `opts` allow. */
  async send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': this.key(opts.admin), 'x-tern-client': 'cli', ...opts.headers };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await sendWithRetries(
        {
          method,
          baseUrl: this.conn.url,
          path,
          url: this.conn.url + path,
          headers,
          ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
          repeatable: method === 'GET' || method === 'PUT' || method === 'DELETE' || headers['idempotency-key'] !== undefined,
        },
        {
          retry: { ...WAITS, retries: opts.retries ?? DEFAULT_RETRIES },
          retryable: refusedForNow,
          retryNoAnswer: false,
          delayMs: (attempt, retryAfter) => retryDelayMs(retryAfter, attempt - 2),
          ...(opts.onWait && { onRetry: (e: { delayMs: number }) => opts.onWait!(e.delayMs) }),
        },
      );
    } catch (err) {
      if (err instanceof TernApiError) throw new ApiError(err);
      if (!(err instanceof TernConnectionError)) throw err;
      const failure = err.cause as Error & { cause?: { code?: string; message?: string } };
      throw new CliError(
        `Tern does not answer at ${this.conn.url} (${failure.cause?.code ?? failure.cause?.message ?? failure.message}): is it running? (TERN_URL)`,
        EXIT.UNAVAILABLE,
      );
    }
  }

  async call<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<{ body: T; headers: Headers }> {
    const res = await this.send(method, path, opts);
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
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
      throw new ApiError(apiError(res.status, errorBodyOf(res.status, res.statusText, await res.text()), res.headers.get('x-request-id') ?? undefined));
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
