import type { FastifyError, FastifyRequest } from 'fastify';
import { asCoreError, type CoreError, ERROR_KINDS, type ErrorKind } from '../../core/errors.ts';

/** Failures of the HTTP exchange itself, which never reach the core. */
const TRANSPORT = {
  MALFORMED_JSON: { status: 400, code: '400.002', message: 'Malformed JSON body' },
  ROUTE_NOT_FOUND: { status: 404, code: '404.002', message: 'Unknown path' },
  METHOD_NOT_ALLOWED: { status: 405, code: '405.001', message: 'Method not allowed' },
  PAYLOAD_TOO_LARGE: { status: 413, code: '413.001', message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: '415.001', message: 'Unsupported content type' },
  INTERNAL: { status: 500, code: '500.001', message: 'Internal error' },
} as const;

/** Each core error kind as REST answers it: the HTTP status, and the `errorCode` ("<status>.<nnn>"). */
const CORE: Readonly<Record<ErrorKind, { status: number; code: string }>> = {
  INVALID_REQUEST: { status: 400, code: '400.001' },
  INVALID_PHONE_NUMBER: { status: 400, code: '400.003' },
  TOO_MANY_PARTS: { status: 400, code: '400.004' },
  INVALID_SENDER: { status: 400, code: '400.005' },
  INVALID_AMOUNT: { status: 400, code: '400.006' },
  INVALID_DATE: { status: 400, code: '400.007' },
  MISSING_API_KEY: { status: 401, code: '401.001' },
  INVALID_API_KEY: { status: 401, code: '401.002' },
  INVALID_LOGIN: { status: 401, code: '401.003' },
  FORBIDDEN_ROLE: { status: 403, code: '403.001' },
  FORBIDDEN_ORGANISATION: { status: 403, code: '403.002' },
  FORBIDDEN_TRANSFER: { status: 403, code: '403.003' },
  FORBIDDEN_ADMIN: { status: 403, code: '403.004' },
  FORBIDDEN_CHANNEL: { status: 403, code: '403.006' },
  FORBIDDEN_CSRF: { status: 403, code: '403.007' },
  CHANNEL_TYPE_MISMATCH: { status: 403, code: '403.005' },
  NOT_FOUND: { status: 404, code: '404.001' },
  CONFLICT: { status: 409, code: '409.001' },
  INSUFFICIENT_FUNDS: { status: 409, code: '409.002' },
  IDEMPOTENCY_IN_PROGRESS: { status: 409, code: '409.003' },
  IDEMPOTENCY_MISMATCH: { status: 422, code: '422.001' },
  RATE_LIMITED: { status: 429, code: '429.001' },
  UNAVAILABLE: { status: 503, code: '503.001' },
  STORAGE_UNAVAILABLE: { status: 503, code: '503.002' },
  STORAGE_FULL: { status: 507, code: '507.001' },
};

export type RestErrorKind = ErrorKind | keyof typeof TRANSPORT;

export interface ErrorPayload {
  errorCode: string;
  message: string;
  detail: string;
}

function entry(kind: RestErrorKind): { status: number; code: string; message: string } {
  if (kind in TRANSPORT) return TRANSPORT[kind as keyof typeof TRANSPORT];
  return { ...CORE[kind as ErrorKind], message: ERROR_KINDS[kind as ErrorKind] };
}

export function errorStatus(kind: RestErrorKind): number {
  return entry(kind).status;
}

export function errorPayload(kind: RestErrorKind, detail?: string): ErrorPayload {
  const e = entry(kind);
  return { errorCode: e.code, message: e.message, detail: detail ?? e.message };
}

/** A core error's REST body; its field is named as the request names it (`body.recipient.to`). */
export function coreErrorPayload(err: CoreError): ErrorPayload {
  return errorPayload(err.kind, err.detail);
}

interface AjvError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

const CONTEXT_NAMES: Record<string, string> = { querystring: 'query', params: 'path', headers: 'header' };

/** "body.recipient.to: is required" from an AJV error, so the detail names the field. */
export function describeValidation(errors: AjvError[], context: string | undefined): string {
  const err = errors[0];
  if (!err) return 'invalid request';
  const base = CONTEXT_NAMES[context ?? 'body'] ?? context ?? 'body';
  const segments = (err.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = base;
  for (const s of segments) path += /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  if (err.keyword === 'required' && typeof err.params?.missingProperty === 'string') {
    return `${path}.${err.params.missingProperty}: is required`;
  }
  if (err.keyword === 'additionalProperties' && typeof err.params?.additionalProperty === 'string') {
    return `${path}.${err.params.additionalProperty}: is not an allowed field`;
  }
  if (err.keyword === 'enum' && Array.isArray(err.params?.allowedValues)) {
    return `${path}: must be one of ${(err.params.allowedValues as unknown[]).join(', ')}`;
  }
  return `${path}: ${err.message ?? 'is invalid'}`;
}

/** Maps any error thrown while serving a request to Tern's JSON error body; 5xx never leak internals. */
export function toErrorReply(err: FastifyError | Error, req: FastifyRequest): { status: number; body: ErrorPayload } {
  const core = asCoreError(err);
  if (core) return { status: errorStatus(core.kind), body: coreErrorPayload(core) };
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    return { status: 400, body: errorPayload('INVALID_REQUEST', describeValidation(fe.validation, fe.validationContext)) };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: errorPayload('UNSUPPORTED_MEDIA_TYPE', `content type "${req.headers['content-type'] ?? ''}" is not supported; send application/json`),
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorPayload('PAYLOAD_TOO_LARGE', 'the request body is larger than this route accepts') };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: errorPayload('MALFORMED_JSON', 'the body is empty but the content type is application/json') };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: errorPayload('INVALID_REQUEST', 'invalid Content-Length') };
  }
  if (fe.statusCode === 400 && (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY')) {
    return { status: 400, body: errorPayload('MALFORMED_JSON', `the body is not valid JSON: ${err.message}`) };
  }
  if (fe.statusCode === 429) return { status: 429, body: errorPayload('RATE_LIMITED', fe.message) };
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: { errorCode: `${fe.statusCode}.000`, message: 'Request rejected', detail: fe.message } };
  }
  return { status: 500, body: errorPayload('INTERNAL', 'an internal error occurred; it has been logged') };
}
