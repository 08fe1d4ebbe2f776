export { Tern, type SendOptions, type TernOptions } from './client.ts';
export {
  apiError,
  type ErrorBody,
  errorBodyOf,
  TernApiError,
  TernAuthError,
  TernConflictError,
  TernConnectionError,
  TernInvalidRequestError,
  TernNotFoundError,
  TernRateLimitError,
  TernServerError,
} from './errors.ts';
export { items, type Page, type PageOptions, pages } from './pagination.ts';
export { DEFAULT_RETRY, type RetryOptions, retryAfterMs, retryDelayMs } from './retry.ts';
export { type OutgoingRequest, type RetryEvent, sendWithRetries, type TransportOptions } from './transport.ts';
export type * from './types.ts';
export { signWebhook, type VerifiedWebhook, type VerifyOptions, verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.ts';
