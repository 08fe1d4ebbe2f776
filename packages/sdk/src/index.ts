export { Tern, type RetryEvent, type SendOptions, type TernOptions } from './client.ts';
export {
  type ErrorBody,
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
export type * from './types.ts';
export { signWebhook, type VerifiedWebhook, type VerifyOptions, verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.ts';
