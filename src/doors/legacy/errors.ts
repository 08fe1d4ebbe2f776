import { CoreError, type ErrorKind } from '../../core/errors.ts';

/** Answer codes of the legacy interface (research §11). */
export const LEGACY_CODES = {
  OK: 0,
  INTERNAL_ERROR: 31,
  AUTHENTICATION_ERROR: 32,
  INSUFFICIENT_CREDIT: 33,
  BAD_PARAMETER: 35,
  UNKNOWN_TARGET: 41,
  UNAVAILABLE: 50,
  NOT_FOUND: 61,
} as const;

const LABELS: Record<number, string> = {
  0: 'Accepted',
  31: 'Internal error',
  32: 'Authentication error',
  33: 'Insufficient credit',
  35: 'Missing or invalid parameter',
  41: 'Unknown target account',
  50: 'Temporarily unavailable',
  61: 'SMS not found',
};

/**
 * Each core error kind as the legacy interface answers it: the answer code and the HTTP status that goes with it
 * (the statuses REST answers for the same errors). An unknown smsID is 61, an unknown transfer target 41.
 */
const BY_KIND: Readonly<Record<ErrorKind, { code: number; httpStatus: number; transferCode?: number }>> = {
  INVALID_REQUEST: { code: 35, httpStatus: 400 },
  INVALID_PHONE_NUMBER: { code: 35, httpStatus: 400 },
  TOO_MANY_PARTS: { code: 35, httpStatus: 400 },
  INVALID_SENDER: { code: 35, httpStatus: 400 },
  INVALID_AMOUNT: { code: 35, httpStatus: 400 },
  INVALID_DATE: { code: 35, httpStatus: 400 },
  MISSING_API_KEY: { code: 32, httpStatus: 401 },
  INVALID_API_KEY: { code: 32, httpStatus: 401 },
  FORBIDDEN_ROLE: { code: 32, httpStatus: 403 },
  FORBIDDEN_ORGANISATION: { code: 32, httpStatus: 403 },
  FORBIDDEN_TRANSFER: { code: 41, httpStatus: 403 },
  FORBIDDEN_ADMIN: { code: 32, httpStatus: 403 },
  CHANNEL_TYPE_MISMATCH: { code: 32, httpStatus: 403 },
  NOT_FOUND: { code: 61, httpStatus: 404, transferCode: 41 },
  CONFLICT: { code: 35, httpStatus: 409 },
  INSUFFICIENT_FUNDS: { code: 33, httpStatus: 409 },
  IDEMPOTENCY_IN_PROGRESS: { code: 35, httpStatus: 409 },
  IDEMPOTENCY_MISMATCH: { code: 35, httpStatus: 422 },
  RATE_LIMITED: { code: 35, httpStatus: 429 },
  UNAVAILABLE: { code: 31, httpStatus: 503 },
};

/**
 * Fields of the message object, as the legacy parameters that carry them. `recipients[]` stands for any index.
 * A field not listed here is already a legacy parameter name.
 */
const PARAMETERS: Readonly<Record<string, string>> = {
  'body.text': 'message',
  'body.title': 'title',
  'body.language': 'language',
  from: 'emetteur',
  sentDate: 'date_envoi',
  refClient: 'refClient',
  callbackUrlStatus: 'notification_url',
  callbackUrlMo: 'notification_url_reponse',
  'recipient.to': 'numero',
  recipients: 'numero',
  'recipients[].to': 'numero',
};

/** A legacy error answer: its code and line, and the HTTP status it goes with. */
export interface LegacyFailure {
  code: number;
  httpStatus: number;
  line: string;
}

/** One `code | description[ | id]` line; a `|` inside a field would split it, so it is written `/`. */
export function legacyLine(code: number, description: string, id?: string): string {
  const clean = (s: string) => s.replace(/[|\r\n]+/g, '/').trim();
  return id === undefined ? `${code} | ${clean(description)}` : `${code} | ${clean(description)} | ${clean(id)}`;
}

/** The error's detail with its field named as the legacy parameter that carried it. */
export function legacyDetail(err: CoreError): string {
  if (!err.field) return err.reason;
  const param = PARAMETERS[err.field.replace(/\[\d+\]/g, '[]')] ?? err.field;
  return `${param}: ${err.reason}`;
}

/**
 * The legacy answer for an error thrown while serving a legacy call: authentication and permission → 32, funds → 33,
 * request errors → 35 (the detail naming the parameter), an unknown message → 61 (an unknown target account → 41
 * for a transfer), anything else → 31.
 */
export function legacyFailureOf(err: unknown, op: 'message' | 'transfer' = 'message'): LegacyFailure {
  if (!(err instanceof CoreError)) {
    return { code: 31, httpStatus: 500, line: legacyLine(31, `${LABELS[31]}: an internal error occurred; it has been logged`) };
  }
  const entry = BY_KIND[err.kind];
  const code = op === 'transfer' ? (entry.transferCode ?? entry.code) : entry.code;
  return { code, httpStatus: entry.httpStatus, line: legacyLine(code, `${LABELS[code]}: ${legacyDetail(err)}`) };
}
