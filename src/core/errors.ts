/**
 * The catalogue of every error Tern answers. `code` is the REST `errorCode` ("<http status>.<nnn>"); the legacy
 * HTTP and SMPP doors map the same kinds to their own codes.
 */
export const ERRORS = {
  INVALID_REQUEST: { status: 400, code: '400.001', message: 'Invalid request' },
  MALFORMED_JSON: { status: 400, code: '400.002', message: 'Malformed JSON body' },
  INVALID_PHONE_NUMBER: { status: 400, code: '400.003', message: 'Invalid phone number' },
  TOO_MANY_PARTS: { status: 400, code: '400.004', message: 'Message too long' },
  INVALID_SENDER: { status: 400, code: '400.005', message: 'Sender not allowed' },
  INVALID_AMOUNT: { status: 400, code: '400.006', message: 'Invalid amount' },
  INVALID_DATE: { status: 400, code: '400.007', message: 'Invalid date' },
  MISSING_API_KEY: { status: 401, code: '401.001', message: 'Missing API key' },
  INVALID_API_KEY: { status: 401, code: '401.002', message: 'Invalid API key' },
  FORBIDDEN_ROLE: { status: 403, code: '403.001', message: 'Operation not allowed for this key' },
  FORBIDDEN_ORGANISATION: { status: 403, code: '403.002', message: 'Organisation not accessible' },
  FORBIDDEN_TRANSFER: { status: 403, code: '403.003', message: 'Transfer not allowed' },
  FORBIDDEN_ADMIN: { status: 403, code: '403.004', message: 'Operator key required' },
  CHANNEL_TYPE_MISMATCH: { status: 403, code: '403.005', message: 'Channel type mismatch' },
  NOT_FOUND: { status: 404, code: '404.001', message: 'Resource not found' },
  ROUTE_NOT_FOUND: { status: 404, code: '404.002', message: 'Unknown path' },
  METHOD_NOT_ALLOWED: { status: 405, code: '405.001', message: 'Method not allowed' },
  CONFLICT: { status: 409, code: '409.001', message: 'Conflict with the current state' },
  INSUFFICIENT_FUNDS: { status: 409, code: '409.002', message: 'Insufficient funds' },
  IDEMPOTENCY_IN_PROGRESS: { status: 409, code: '409.003', message: 'Request with this Idempotency-Key in progress' },
  PAYLOAD_TOO_LARGE: { status: 413, code: '413.001', message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: '415.001', message: 'Unsupported content type' },
  IDEMPOTENCY_MISMATCH: { status: 422, code: '422.001', message: 'Idempotency-Key reused with another request' },
  RATE_LIMITED: { status: 429, code: '429.001', message: 'Too many requests' },
  INTERNAL: { status: 500, code: '500.001', message: 'Internal error' },
  UNAVAILABLE: { status: 503, code: '503.001', message: 'Service unavailable' },
} as const;

export type ErrorKind = keyof typeof ERRORS;

export class ServiceError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly detail: string = ERRORS[kind].message,
  ) {
    super(`${ERRORS[kind].message}: ${detail}`);
    this.name = 'ServiceError';
  }

  get status(): number {
    return ERRORS[this.kind].status;
  }

  get code(): string {
    return ERRORS[this.kind].code;
  }
}

export function fail(kind: ErrorKind, detail?: string): never {
  throw new ServiceError(kind, detail);
}
