import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new secret API key: a readable prefix and 32 random bytes in base64url. */
export function generateApiKey(prefix = 'tern'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** Every authenticated request hashes its key (twice with the lockout's pair): the one-shot `hash` is 4× cheaper. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex hashes of equal length. */
export function hashesEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && ba.length > 0 && timingSafeEqual(ba, bb);
}

/** Channel signing secrets are Standard Webhooks secrets: this prefix, then base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new channel signing secret: `whsec_` followed by 24 random bytes in base64. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The first characters of a key, kept to recognise it in listings without revealing it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 12);
}
