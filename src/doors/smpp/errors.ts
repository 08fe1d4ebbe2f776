import type { ErrorKind } from '../../core/errors.ts';
import { SmppStatus } from '../../protocols/smpp/pdu.ts';

/** command_status of a submit refused by the core with an error (nothing stored), by the error's kind. */
const BY_KIND: Readonly<Record<ErrorKind, number>> = {
  INVALID_REQUEST: SmppStatus.ESME_RSUBMITFAIL,
  INVALID_PHONE_NUMBER: SmppStatus.ESME_RINVDSTADR,
  TOO_MANY_PARTS: SmppStatus.ESME_RINVMSGLEN,
  INVALID_SENDER: SmppStatus.ESME_RINVSRCADR,
  INVALID_AMOUNT: SmppStatus.ESME_RSUBMITFAIL,
  INVALID_DATE: SmppStatus.ESME_RINVSCHED,
  MISSING_API_KEY: SmppStatus.ESME_RSUBMITFAIL,
  INVALID_API_KEY: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_ROLE: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_ORGANISATION: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_TRANSFER: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_ADMIN: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_CHANNEL: SmppStatus.ESME_RSUBMITFAIL,
  FORBIDDEN_CSRF: SmppStatus.ESME_RSUBMITFAIL,
  INVALID_LOGIN: SmppStatus.ESME_RSUBMITFAIL,
  CHANNEL_TYPE_MISMATCH: SmppStatus.ESME_RSUBMITFAIL,
  NOT_FOUND: SmppStatus.ESME_RSUBMITFAIL,
  CONFLICT: SmppStatus.ESME_RSUBMITFAIL,
  INSUFFICIENT_FUNDS: SmppStatus.ESME_RSUBMITFAIL,
  IDEMPOTENCY_IN_PROGRESS: SmppStatus.ESME_RSUBMITFAIL,
  IDEMPOTENCY_MISMATCH: SmppStatus.ESME_RSUBMITFAIL,
  RATE_LIMITED: SmppStatus.ESME_RTHROTTLED,
  UNAVAILABLE: SmppStatus.ESME_RSYSERR,
  // The client keeps its bind and submits again later.
  STORAGE_UNAVAILABLE: SmppStatus.ESME_RSYSERR,
  STORAGE_FULL: SmppStatus.ESME_RSYSERR,
};

export function submitErrorStatus(kind: ErrorKind): number {
  return BY_KIND[kind];
}

/** command_status of a message the core stored UNDELIVERABLE at accept (free, never sent), by its status detail. */
const BY_REFUSAL: Readonly<Record<string, number>> = {
  INVALID_PHONE_NUMBER: SmppStatus.ESME_RINVDSTADR,
  INSUFFICIENT_CREDIT: SmppStatus.ESME_RSUBMITFAIL,
  BLACKLISTED: SmppStatus.ESME_RSUBMITFAIL,
  // Spending limits: a throttled ESME slows down and tries again later, when the limit may have been raised.
  DAILY_LIMIT_EXCEEDED: SmppStatus.ESME_RTHROTTLED,
  ORGANISATION_MONTHLY_LIMIT_EXCEEDED: SmppStatus.ESME_RTHROTTLED,
};

export function refusalStatus(detail: string | null): number {
  return BY_REFUSAL[detail ?? ''] ?? SmppStatus.ESME_RSUBMITFAIL;
}
