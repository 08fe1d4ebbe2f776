import { apiError, errorBodyOf, TernConnectionError } from './errors.ts';
import { retryableStatus, retryAfterMs, retryDelayMs, type RetryOptions } from './retry.ts';

export interface RetryEvent {
  method: string;
  path: string;
  /** The try about to be made, from 2. */
  attempt: number;
  delayMs: number;
  /** The status that caused it, or the error when there was no answer. */
  status?: number;
  error?: unknown;
}

/** How requests are sent and tried again: the Tern client's, or another client's rules built on the same loop. */
export interface TransportOptions {
  retry: Required<RetryOptions>;
  /** The longest a single try may take before it is abandoned (and tried again when safe); none when absent. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Told of each wait before a retry. */
  onRetry?: (event: RetryEvent) => void;
  /** Whether an error answer is tried again; default retryableStatus. */
  retryable?: (status: number, errorCode: string, repeatable: boolean, retryAfter: string | null) => boolean;
  /** Whether a repeatable request that got no answer is tried again (default true). */
  retryNoAnswer?: boolean;
  /** The wait before try `attempt` (2 for the first retry); default retryDelayMs with `retry`. */
  delayMs?: (attempt: number, retryAfter: string | null) => number;
}

export interface OutgoingRequest {
  method: string;
  /** Where Tern answers (for the error saying it does not). */
  baseUrl: string;
  /** The path the retry events and errors name; the request goes to `url`. */
  path: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Safe to send again: a read, a PUT, a DELETE, or a send with its Idempotency-Key. */
  repeatable: boolean;
  signal?: AbortSignal;
}

/** Waits `ms`, or rejects when `signal` aborts first (its listener removed either way: one signal may serve many calls). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Sends a request, trying it again as `options` say, and answers the first successful answer with its body unread.
 * An error answer is thrown as a TernApiError subclass (its body read), no answer as a TernConnectionError.
 */
export async function sendWithRetries(request: OutgoingRequest, options: TransportOptions): Promise<Response> {
  const { method, path, signal } = request;
  const doFetch = options.fetch ?? fetch;
  const retryable = options.retryable ?? retryableStatus;
  const delayMs = options.delayMs ?? ((attempt: number, retryAfter: string | null) => retryDelayMs(attempt - 1, retryAfter, options.retry));
  const wait = async (event: Omit<RetryEvent, 'delayMs'>, retryAfter: string | null) => {
    const ms = delayMs(event.attempt, retryAfter);
    options.onRetry?.({ ...event, delayMs: ms });
    await sleep(ms, signal);
  };
  for (let attempt = 1; ; attempt++) {
    const timeout = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const trySignal = signal && timeout ? AbortSignal.any([signal, timeout]) : (signal ?? timeout);
    let res: Response;
    try {
      res = await doFetch(request.url, { method, headers: request.headers, body: request.body, ...(trySignal && { signal: trySignal }) });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (!request.repeatable || options.retryNoAnswer === false || attempt > options.retry.retries) {
        throw new TernConnectionError(`${method} ${path}: no answer from ${request.baseUrl} (${(error as Error).message})`, { cause: error });
      }
      await wait({ method, path, attempt: attempt + 1, error }, null);
      continue;
    }
    if (res.ok) return res;
    const text = await res.text();
    const error = errorBodyOf(res.status, res.statusText, text);
    const retryAfter = res.headers.get('retry-after');
    if (attempt <= options.retry.retries && retryable(res.status, error.errorCode, request.repeatable, retryAfter)) {
      await wait({ method, path, attempt: attempt + 1, status: res.status }, retryAfter);
      continue;
    }
    const seconds = retryAfterMs(retryAfter);
    throw apiError(res.status, error, res.headers.get('x-request-id') ?? undefined, seconds === undefined ? undefined : seconds / 1000);
  }
}
