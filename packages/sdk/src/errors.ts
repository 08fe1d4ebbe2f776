/** The body of every error Tern answers over REST. */
export interface ErrorBody {
  /** `<status>.<nnn>`, e.g. `400.003` for a phone number that is not one. */
  errorCode: string;
  message: string;
  /** What was wrong, naming the field when there is one (`body.recipient.to: …`). */
  detail: string;
}

/** An error answer of the API: its HTTP status, the `{errorCode, message, detail}` body and the request's id. */
export class TernApiError extends Error implements ErrorBody {
  override readonly name: string = 'TernApiError';
  readonly errorCode: string;
  readonly detail: string;

  constructor(
    readonly status: number,
    body: ErrorBody,
    /** The `X-Request-Id` of the answer, for the server's logs. */
    readonly requestId: string | undefined,
  ) {
    super(`${body.errorCode} ${body.message}: ${body.detail}`);
    this.errorCode = body.errorCode;
    this.detail = body.detail;
  }
}

/** 400 and 422: the request is wrong; sending it again will not help. */
export class TernInvalidRequestError extends TernApiError {
  override readonly name = 'TernInvalidRequestError';
}

/** 401 and 403: the key is missing, wrong, or may not do this. */
export class TernAuthError extends TernApiError {
  override readonly name = 'TernAuthError';
}

export class TernNotFoundError extends TernApiError {
  override readonly name = 'TernNotFoundError';
}

/** 409: the state forbids it (a message no longer cancellable, funds short, an Idempotency-Key still in progress). */
export class TernConflictError extends TernApiError {
  override readonly name = 'TernConflictError';
}

/** 429 after every retry: the traffic limit held. */
export class TernRateLimitError extends TernApiError {
  override readonly name = 'TernRateLimitError';
  constructor(
    status: number,
    body: ErrorBody,
    requestId: string | undefined,
    /** What the last answer's Retry-After asked for, in seconds. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(status, body, requestId);
  }
}

/** 5xx after every retry. */
export class TernServerError extends TernApiError {
  override readonly name = 'TernServerError';
}

/** No answer at all: the connection failed or timed out, after every retry. */
export class TernConnectionError extends Error {
  override readonly name = 'TernConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The error class of an answer's status. */
export function apiError(status: number, body: ErrorBody, requestId: string | undefined, retryAfterSeconds?: number): TernApiError {
  if (status === 429) return new TernRateLimitError(status, body, requestId, retryAfterSeconds);
  if (status === 400 || status === 422) return new TernInvalidRequestError(status, body, requestId);
  if (status === 401 || status === 403) return new TernAuthError(status, body, requestId);
  if (status === 404) return new TernNotFoundError(status, body, requestId);
  if (status === 409) return new TernConflictError(status, body, requestId);
  if (status >= 500) return new TernServerError(status, body, requestId);
  return new TernApiError(status, body, requestId);
}

/** The error body of an answer, or one made up from its status when it is not Tern's JSON (a proxy's page). */
export function errorBodyOf(status: number, statusText: string, text: string): ErrorBody {
  try {
    const parsed = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof parsed.errorCode === 'string' && typeof parsed.message === 'string') {
      return { errorCode: parsed.errorCode, message: parsed.message, detail: typeof parsed.detail === 'string' ? parsed.detail : '' };
    }
  } catch {
    // not JSON
  }
  return { errorCode: String(status), message: statusText || `HTTP ${status}`, detail: text.slice(0, 500) };
}
