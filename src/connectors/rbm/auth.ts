/**
 * OAuth 2.0 for a Google service account (RFC 7523 JWT bearer grant, as Google's "Using OAuth 2.0 for Server to
 * Server Applications" describes it): an RS256-signed assertion is exchanged at the key's `token_uri` for an access
 * token, which is kept until shortly before it expires.
 */
import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { request } from 'undici';

export const RBM_SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** How long an assertion is good for (Google takes at most an hour). */
const ASSERTION_SECONDS = 3600;
/** A token is renewed this long before its end, so none goes out about to lapse. */
const RENEW_BEFORE_MS = 5 * 60_000;

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  token_uri: string;
}

/** The service account's JSON key, checked; or the reason it is not one. */
export function parseServiceAccountKey(text: string): ServiceAccountKey | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'must be the service account’s JSON key (client_email, private_key, token_uri)';
  }
  const k = v as Partial<Record<keyof ServiceAccountKey, unknown>>;
  if (!k || typeof k !== 'object') return 'must be a JSON object';
  for (const f of ['client_email', 'private_key', 'token_uri'] as const) if (typeof k[f] !== 'string' || k[f] === '') return `has no ${f}`;
  try {
    createPrivateKey(k.private_key as string);
  } catch {
    return 'its private_key is not a PEM private key';
  }
  try {
    const u = new URL(k.token_uri as string);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'its token_uri must be an http(s) URL';
  } catch {
    return 'its token_uri must be an absolute URL';
  }
  return k as ServiceAccountKey;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** The signed assertion: `iss` the account, `scope` RBM's, `aud` the token endpoint, an hour long. */
export function jwtAssertion(key: ServiceAccountKey, privateKey: KeyObject, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iss: key.client_email, scope: RBM_SCOPE, aud: key.token_uri, iat, exp: iat + ASSERTION_SECONDS }));
  const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(privateKey);
  return `${header}.${claims}.${b64url(signature)}`;
}

/** Access tokens of one service account: one asked for at a time, kept until shortly before their end. */
export class AccessTokens {
  private readonly privateKey: KeyObject;
  private current: { token: string; renewAt: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly key: ServiceAccountKey,
    private readonly timeoutMs: number,
  ) {
    this.privateKey = createPrivateKey(key.private_key);
  }

  async token(): Promise<string> {
    if (this.current && Date.now() < this.current.renewAt) return this.current.token;
    this.pending ??= this.fetch().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** Forgets a token the API refused (401), unless a newer one replaced it already. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = null;
  }

  private async fetch(): Promise<string> {
    try {
      return await this.exchange();
    } catch (err) {
      // A kept-alive connection the token endpoint had just closed: the exchange is asked again once.
      if (!['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'].includes((err as { code?: string }).code ?? '')) throw err;
      return this.exchange();
    }
  }

  private async exchange(): Promise<string> {
    const now = Date.now();
    const res = await request(this.key.token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: jwtAssertion(this.key, this.privateKey, now) }).toString(),
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const text = await res.body.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Said below.
    }
    if (res.statusCode !== 200 || typeof body.access_token !== 'string') {
      const why =
        typeof body.error === 'string'
          ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
          : `HTTP ${res.statusCode}`;
      throw new Error(`the token endpoint refused the service account’s assertion (${why})`);
    }
    const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    this.current = { token: body.access_token, renewAt: now + Math.max(seconds * 1000 - RENEW_BEFORE_MS, (seconds * 1000) / 2) };
    return body.access_token;
  }
}
