import { createHash } from 'node:crypto';
import { callingCodeOf } from './phone.ts';

/**
 * Personal data rules: how a phone number is masked where it is shown to operators (logs), what is left of a
 * message's body once its content is erased, and the stable stand-in of an erased number.
 */

/**
 * A number masked for a log: its country calling code and its last 2 digits kept, every other digit a star
 * (`+33612345678` → `+33*******78`). A `+` in front is kept; what is not a number is returned as it is.
 */
export function maskMsisdn(value: string): string {
  const match = /^(\+?)(\d{6,15})$/.exec(value);
  if (!match) return value;
  const [, plus, digits] = match as unknown as [string, string, string];
  const code = callingCodeOf(digits) ?? '';
  const hidden = digits.length - code.length - 2;
  if (hidden <= 0) return value;
  return `${plus}${code}${'*'.repeat(hidden)}${digits.slice(-2)}`;
}

/** Keys of a message body that say how it was sent, not what it said: kept when its content is erased. */
const FORM_KEYS = new Set(['encoding', 'stop', 'type', 'language', 'locale', 'voice', 'templateId']);

/**
 * A message body with its content erased: `text` emptied, every other field gone (template values, rich cards,
 * suggestions, media and links) but those that only say how it was sent (encoding, stop mention, RCS type, voice).
 */
export function erasedBody(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = 'text' in body ? { text: '' } : {};
  for (const [key, value] of Object.entries(body)) {
    if (FORM_KEYS.has(key) && (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number')) out[key] = value;
  }
  return Object.keys(out).length === 0 ? { text: '' } : out;
}

/** The same body as JSON text; a body that is not a JSON object becomes `{"text":""}`. */
export function erasedBodyJson(json: string): string {
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    body = null;
  }
  return JSON.stringify(body !== null && typeof body === 'object' && !Array.isArray(body) ? erasedBody(body as Record<string, unknown>) : { text: '' });
}

/** What an erased number is replaced by in a row kept for accounting: the same for the same number and organisation. */
export function erasedNumber(secret: string, organisationId: string, msisdn: string): string {
  return `erased:${createHash('sha256').update(`tern erasure\u0000${secret}\u0000${organisationId}\u0000${msisdn}`, 'utf8').digest('hex').slice(0, 24)}`;
}

/**
 * A message object (JSON text of a webhook body) with its content erased, and, when `number` is given, that number
 * replaced by `standIn` wherever it is the recipient or sender.
 */
export function erasedMessageObjectJson(json: string, erasedAt: string, number?: { msisdn: string; standIn: string }): string {
  let obj: Record<string, unknown>;
  try {
    const parsed = JSON.parse(json) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return json;
    obj = parsed as Record<string, unknown>;
  } catch {
    return json;
  }
  if (obj.body && typeof obj.body === 'object' && !Array.isArray(obj.body)) obj.body = erasedBody(obj.body as Record<string, unknown>);
  obj.contentErasedAt = erasedAt;
  if (number) {
    const recipient = obj.recipient as { to?: unknown } | undefined;
    if (recipient && typeof recipient === 'object' && recipient.to === number.msisdn) recipient.to = number.standIn;
    if (obj.from === number.msisdn) obj.from = number.standIn;
  }
  return JSON.stringify(obj);
}
