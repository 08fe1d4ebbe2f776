// Verifies Tern's webhook signatures: the Standard Webhooks scheme (https://www.standardwebhooks.com), an HMAC-SHA256
// of `<webhook-id>.<webhook-timestamp>.<body>` under the channel's `whsec_…` secret, in `webhook-signature` as
// `v1,<base64>` (several, space-separated, while a secret is being rotated).
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** The request's headers: a fetch `Headers`, or Node's `IncomingMessage.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300): older deliveries are refused as replays. */
  toleranceSeconds?: number;
  /** The time to compare with (default now). */
  now?: Date;
}

export interface VerifiedWebhook<T> {
  /** The event id, the same for every attempt of one event: keep it to skip a delivery seen before. */
  id: string;
  timestamp: Date;
  payload: T;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new WebhookVerificationError(`a webhook secret starts with ${PREFIX}`);
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  if (key.length === 0) throw new WebhookVerificationError('the webhook secret is empty after its prefix');
  return key;
}

function sign(key: Buffer, id: string, seconds: string, body: string): Buffer {
  return createHmac('sha256', key).update(`${id}.${seconds}.${body}`, 'utf8').digest();
}

/**
 * Checks a delivery's signature against the channel's secret (or secrets: the current one and, during a rotation, the
 * previous) and its timestamp against the clock; returns the parsed body. `body` is the raw body exactly as received
 * (a re-serialised object does not verify). Throws WebhookVerificationError when anything does not match.
 */
export function verifyWebhook<T = unknown>(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): VerifiedWebhook<T> {
  const id = header(headers, 'webhook-id');
  const seconds = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !seconds || !signature) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d+$/.test(seconds)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const timestamp = new Date(Number(seconds) * 1000);
  const now = (options.now ?? new Date()).getTime();
  const tolerance = (options.toleranceSeconds ?? 300) * 1000;
  if (Math.abs(now - timestamp.getTime()) > tolerance) throw new WebhookVerificationError('webhook-timestamp is too far from now (a replay, or a clock off)');
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const offered = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const matches = secrets.some((s) => {
    const expected = sign(keyOf(s), id, seconds, text);
    return offered.some((o) => o.length === expected.length && timingSafeEqual(o, expected));
  });
  if (!matches) throw new WebhookVerificationError('no webhook signature matches the secret');
  let payload: T;
  try {
    payload = JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError('the webhook body is not JSON');
  }
  return { id, timestamp, payload };
}

/** The headers Tern would send for a body: for testing a receiver without a Tern. */
export function signWebhook(
  secret: string,
  id: string,
  body: string,
  timestamp = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  return { 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': `v1,${sign(keyOf(secret), id, seconds, body).toString('base64')}` };
}
