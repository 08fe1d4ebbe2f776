import type { FastifyError, FastifyRequest } from 'fastify';
import { ERRORS, type ErrorKind, ServiceError } from '../../core/errors.ts';

export interface ErrorPayload {
  errorCode: string;
  message: string;
  detail: string;
}

export function errorPayload(kind: ErrorKind, detail?: string): ErrorPayload {
  const e = ERRORS[kind];
  return { errorCode: e.code, message: e.message, detail: detail ?? e.message };
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
  if (err instanceof ServiceError) {
    return { status: err.status, body: errorPayload(err.kind, err.detail) };
  }
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
