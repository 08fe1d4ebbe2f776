/** The REST API of the Tern that serves this page, called with the key the person signed in with. */

const API_KEY = 'tern.apiKey';
const ADMIN_KEY = 'tern.adminKey';

export interface Keys {
  apiKey: string | null;
  adminKey: string | null;
}

// Keys live in session storage: gone when the tab closes, never in a URL, never sent anywhere but this origin.
export function keys(): Keys {
  return { apiKey: sessionStorage.getItem(API_KEY), adminKey: sessionStorage.getItem(ADMIN_KEY) };
}

export function storeKey(kind: 'api' | 'admin', value: string | null): void {
  const name = kind === 'api' ? API_KEY : ADMIN_KEY;
  if (value === null) sessionStorage.removeItem(name);
  else sessionStorage.setItem(name, value);
}

/**
 * The CSRF token of the signed-in person's session (from /commons/v1/me), sent with every request that changes
 * something; the session itself is an HttpOnly cookie this page never sees.
 */
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface CallOptions {
  body?: unknown;
  /** Use the operator key rather than the channel's API key. */
  admin?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** A key to try instead of the stored one (sign-in). */
  key?: string;
}

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const k = keys();
  const key = opts.key ?? (opts.admin ? k.adminKey : k.apiKey);
  const headers: Record<string, string> = { accept: 'application/json', 'x-tern-client': 'console', ...opts.headers };
  if (key) headers['x-api-key'] = key;
  else if (csrfToken && method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
      ...(opts.signal && { signal: opts.signal }),
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'NETWORK', 'Tern cannot be reached: is it running?');
  }
  const text = await res.text();
  const json = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  if (!res.ok) {
    const e = json as { errorCode?: string; detail?: string; message?: string };
    throw new ApiError(res.status, e.errorCode ?? String(res.status), e.detail ?? e.message ?? res.statusText);
  }
  return json as T;
}

export const get = <T = any>(path: string, opts?: CallOptions) => call<T>('GET', path, opts);
export const post = <T = any>(path: string, body?: unknown, opts?: CallOptions) => call<T>('POST', path, { ...opts, body: body ?? {} });

/** `?a=1&b=2`, leaving out empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The channel API of a channel type: /sms/v1, /rcs/v1, /voice/v1. */
export function apiOf(type: string): string {
  return `/${type.toLowerCase()}/v1`;
}
