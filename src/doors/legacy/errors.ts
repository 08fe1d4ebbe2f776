import { asCoreError, type CoreError, type ErrorKind } from '../../core/errors.ts';

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
const BY_KIND: Readonly<Record<ErrorKind, { code: number; httpStatus: number; accountCode?: number; newAccountCode?: number }>> = {
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
  FORBIDDEN_CHANNEL: { code: 32, httpStatus: 403 },
  FORBIDDEN_CSRF: { code: 32, httpStatus: 403 },
  INVALID_LOGIN: { code: 32, httpStatus: 401 },
  CHANNEL_TYPE_MISMATCH: { code: 32, httpStatus: 403 },
  NOT_FOUND: { code: 61, httpStatus: 404, accountCode: 41 },
  CONFLICT: { code: 35, httpStatus: 409, newAccountCode: 41 },
  INSUFFICIENT_FUNDS: { code: 33, httpStatus: 409 },
  IDEMPOTENCY_IN_PROGRESS: { code: 35, httpStatus: 409 },
  IDEMPOTENCY_MISMATCH: { code: 35, httpStatus: 422 },
  RATE_LIMITED: { code: 35, httpStatus: 429 },
  UNAVAILABLE: { code: 31, httpStatus: 503 },
  STORAGE_UNAVAILABLE: { code: 50, httpStatus: 503 },
  STORAGE_FULL: { code: 50, httpStatus: 507 },
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
  /** What the line says after its code. */
  description: string;
  line: string;
}

/** A field of an answer line; a `|` or a line break inside it would split the line, so it is written `/`. */
const clean = (s: string) => s.replace(/[|\r\n]+/g, '/').trim();

/** One `code | description[ | id]` line. */
export function legacyLine(code: number, description: string, id?: string): string {
  return id === undefined ? `${code} | ${clean(description)}` : `${code} | ${clean(description)} | ${clean(id)}`;
}

/** credit.do's balance, always with a decimal part (`100.0`, `212.5`): the libraries read it with `^-?\d+\.\d+$`. */
export function legacyCredit(euros: number): string {
  const text = String(euros === 0 ? 0 : euros);
  return text.includes('.') ? text : `${text}.0`;
}

/** One row of a list answer (smsList.do, responseList.do): its fields separated by ` | `. */
export function legacyRow(fields: readonly string[]): string {
  return fields.map(clean).join(' | ');
}

/** The error's detail with its field named as the legacy parameter that carried it. */
export function legacyDetail(err: CoreError): string {
  if (!err.field) return err.reason;
  const param = PARAMETERS[err.field.replace(/\[\d+\]/g, '[]')] ?? err.field;
  return `${param}: ${err.reason}`;
}

/**
 * What an operation is about, for the codes that depend on it: `message` (61 for an unknown message), `account` (41
 * for an unknown target account: creditTransfert.do, deleteSubAccount.do), `newAccount` (41 for a login already
 * taken: createSubAccount.do).
 */
export type LegacyOperationKind = 'message' | 'account' | 'newAccount';

/**
 * The legacy answer for an error thrown while serving a legacy call: authentication and permission → 32, funds → 33,
 * request errors → 35 (the detail naming the parameter), an unknown message → 61 (41 as `op` says), the database
 * out of reach or its disk full → 50 (temporarily unavailable), anything else → 31.
 */
export function legacyFailureOf(thrown: unknown, op: LegacyOperationKind = 'message'): LegacyFailure {
  const err = asCoreError(thrown);
  if (!err) {
    const description = `${LABELS[31]}: an internal error occurred; it has been logged`;
    return { code: 31, httpStatus: 500, description, line: legacyLine(31, description) };
  }
  const entry = BY_KIND[err.kind];
  const code = (op === 'account' ? entry.accountCode : op === 'newAccount' ? entry.newAccountCode : undefined) ?? entry.code;
  const label = op === 'newAccount' && code === 41 ? 'Login already taken' : LABELS[code];
  const description = `${label}: ${legacyDetail(err)}`;
  return { code, httpStatus: entry.httpStatus, description, line: legacyLine(code, description) };
}
