import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** What stands in a record where a secret was. */
export const REDACTED = '[Redacted]';

/**
 * Fields whose value is a secret wherever a record carries them, at its top level or one level down: keys, passwords,
 * signing secrets, the legacy door's `accessToken`.
 */
const SECRET_FIELDS = [
  'apiKey',
  'operatorKey',
  'adminKey',
  'accessToken',
  'password',
  'pass',
  'newPass',
  'secret',
  'secretKey',
  'webhookSecret',
  'webhookSecretPrevious',
  'authorization',
];

/** Request and response headers that carry credentials. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'x-api-key', 'cookie', 'set-cookie'];

/** Query parameters whose value is a secret (compared without case): the legacy door's and the usual names. */
const SECRET_PARAMETERS = new Set(
  ['accessToken', 'access_token', 'pass', 'newPass', 'password', 'apiKey', 'api_key', 'token', 'secret', 'key'].map((n) => n.toLowerCase()),
);

/** The paths pino censors in every record (its redaction): fields named as secrets, and credential headers. */
export const REDACTED_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `*.${f}`),
  ...SECRET_HEADERS.map((h) => `headers["${h}"]`),
  ...SECRET_HEADERS.map((h) => `*.headers["${h}"]`),
];

function decoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * A URL as a log may show it: the values of secret query parameters (`accessToken=…` of the legacy door, `pass`, …)
 * replaced; a query whose names cannot be read is replaced whole.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&');
  let changed = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const name = decoded(rawName);
    if (name === null) return `${url.slice(0, q)}?${REDACTED}`;
    if (SECRET_PARAMETERS.has(name.toLowerCase())) {
      parts[i] = `${rawName}=${REDACTED}`;
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q)}?${parts.join('&')}` : url;
}

/** Fields whose value is a phone number (or a list of them) wherever a record carries them. */
const PHONE_FIELDS = new Set([
  'msisdn',
  'msisdns',
  'recipient',
  'recipients',
  'to',
  'from',
  'sender',
  'destination',
  'source',
  'number',
  'numbers',
  'phone',
  'numero',
  'emetteur',
]);

/** A path segment of 8 to 15 digits (with an optional `+`): a phone number (`/commons/v1/lookup/33612345678`). */
const NUMBER_IN_PATH = /(\/(?:\+|%2B)?)(\d{8,15})(?=$|\/)/gi;
/** Query parameters whose value is a phone number or a comma-separated list of them (compared without case). */
const PHONE_PARAMETERS = new Set(['msisdn', 'numero', 'to', 'from', 'recipient', 'emetteur', 'destinataire', 'number', 'phone']);

/** How a phone number is shown in a log (the domain's `maskMsisdn`); what is not a number comes back as it is. */
export type MaskNumber = (value: string) => string;

/** A URL with the phone numbers in its path and in its phone number parameters masked. */
export function maskNumbersInUrl(url: string, mask: MaskNumber): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(NUMBER_IN_PATH, (_, before: string, digits: string) => `${before}${mask(digits)}`);
  if (q < 0) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0 || !PHONE_PARAMETERS.has(part.slice(0, eq).toLowerCase())) return part;
      return `${part.slice(0, eq)}=${part
        .slice(eq + 1)
        .split(/(,|%2C)/i)
        .map((v) => (/^(\+|%2B)?\d+$/i.test(v) ? v.replace(/\d+$/, (d) => mask(d)) : v))
        .join('')}`;
    })
    .join('&');
  return `${path}?${query}`;
}

function maskValue(value: unknown, mask: MaskNumber): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? mask(v) : v));
  if (value !== null && typeof value === 'object' && 'to' in value) return { ...value, to: maskValue((value as { to: unknown }).to, mask) };
  return value;
}

/** A record with the values of its phone number fields masked, at its top level and two levels down. */
export function maskNumbersInRecord(record: Record<string, unknown>, mask: MaskNumber, depth = 0): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(record)) {
    let masked = value;
    if (PHONE_FIELDS.has(key)) masked = maskValue(value, mask);
    else if (key === 'url' && typeof value === 'string') masked = maskNumbersInUrl(value, mask);
    else if (depth < 2 && value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      masked = maskNumbersInRecord(value as Record<string, unknown>, mask, depth + 1);
    }
    if (masked !== value) {
      out ??= { ...record };
      out[key] = masked;
    }
  }
  return out ?? record;
}

interface RequestLike {
  method?: string;
  url?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/**
 * How a request is written in a record (`req`): its method, its URL with secret parameters censored, the client's
 * address and its headers (credential headers censored by the redaction).
 */
export function requestForLog(req: RequestLike): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    remoteAddress: req.ip,
    headers: req.headers,
  };
}

/** How a logger writes personal data: with `maskNumber`, phone numbers are masked (TERN_LOG_MASK_NUMBERS). */
export interface LoggerPrivacy {
  maskNumber?: MaskNumber | null;
}

/**
 * The options of every logger of the server: its level, the redaction of secrets and the serializers, and, when
 * asked, the masking of phone numbers in every record.
 */
export function loggerOptions(level: string, privacy: LoggerPrivacy = {}): LoggerOptions {
  const mask = privacy.maskNumber ?? null;
  return {
    level,
    ...(mask ? { formatters: { log: (record: Record<string, unknown>) => maskNumbersInRecord(record, mask) } } : {}),
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
    serializers: {
      err: pino.stdSerializers.err,
      req: mask
        ? (req: RequestLike) => {
            const r = requestForLog(req);
            return typeof r.url === 'string' ? { ...r, url: maskNumbersInUrl(r.url, mask) } : r;
          }
        : requestForLog,
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
    },
  };
}

/** A logger of the server at `level`, writing to `destination` (standard output when none is given). */
export function createLogger(level: string, destination?: DestinationStream, privacy: LoggerPrivacy = {}): Logger {
  return destination ? pino(loggerOptions(level, privacy), destination) : pino(loggerOptions(level, privacy));
}
