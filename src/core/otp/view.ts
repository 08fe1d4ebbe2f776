import { present } from '../../domain/absent.ts';
import { type OtpChannel, type OtpStatus, statusAt } from '../../domain/otp.ts';
import type { OtpRow } from '../../store/otp.ts';

/** A one-time password as the verify API answers it and as its webhooks carry it; the code is never part of it. */
export interface OtpObject {
  otpId: string;
  recipient: { to: string };
  /** How its latest code went: a text message, or a call. */
  channel: OtpChannel;
  status: OtpStatus;
  /** Why it was cancelled: MAX_ATTEMPTS, CANCELLED_BY_USER, or why its message was refused (COUNTRY_NOT_ALLOWED…). */
  detail?: string;
  createdAt: string;
  expiresAt: string;
  attempts: { max: number; used: number };
  /** The message that carried its latest code. */
  messageId: string;
  refClient?: string;
  href: string;
}

/** The object of a one-time password as it stands at `now` (a pending code past its end is EXPIRED). */
export function otpObject(o: OtpRow, base: string, now: number): OtpObject {
  return {
    otpId: o.id,
    recipient: { to: o.recipient },
    channel: o.last_channel as OtpChannel,
    status: statusAt({ status: o.status as OtpStatus, expiresAt: o.expires_at }, now),
    ...present('detail', o.detail),
    createdAt: new Date(o.created_at).toISOString(),
    expiresAt: new Date(o.expires_at).toISOString(),
    attempts: { max: o.max_attempts, used: o.attempts },
    messageId: o.last_message_id,
    ...present('refClient', o.ref_client),
    href: `${base}/sms/v1/otp/${o.id}`,
  };
}
