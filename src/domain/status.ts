/** Public `status.value` of a message. */
export const MESSAGE_STATUSES = ['SCHEDULED', 'ENROUTE', 'DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED', 'READ', 'CANCELLED'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** `status.detail` values: smsmode's, plus Tern's own for operator outcomes. */
export type StatusDetail =
  | 'INSUFFICIENT_CREDIT'
  | 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED'
  | 'DAILY_LIMIT_EXCEEDED'
  | 'SPAM'
  | 'INVALID_PHONE_NUMBER'
  | 'BLACKLISTED'
  | 'REJECTED'
  | 'EXPIRED'
  | 'OPERATOR_ERROR'
  | 'NOT_ROUTABLE'
  | 'CANCELLED_BY_USER'
  | 'NOT_RCS_CAPABLE'
  | 'FALLBACK_SMS'
  | 'BUSY'
  | 'NO_ANSWER'
  /** A live lookup before the send (a route's `lookupBeforeSend`) found the subscriber absent or barred: not sent. */
  | 'ABSENT_SUBSCRIBER'
  /** Fraud guards: a destination country the organisation does not send to; too many one-time passwords to a range. */
  | 'COUNTRY_NOT_ALLOWED'
  | 'VELOCITY_LIMIT_EXCEEDED'
  /** Every connector of its route would have placed it at a loss (cost above its price), and the route does not allow that. */
  | 'ROUTE_AT_LOSS';

const NEXT: Record<MessageStatus, readonly MessageStatus[]> = {
  SCHEDULED: ['ENROUTE', 'CANCELLED', 'UNDELIVERABLE', 'UNDELIVERED'],
  ENROUTE: ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'READ'],
  DELIVERED: ['READ'],
  READ: [],
  UNDELIVERABLE: [],
  UNDELIVERED: [],
  CANCELLED: [],
};

/**
 * Whether a message may move from `current` to `next`. Final statuses never move (a late or duplicate receipt is
 * ignored); DELIVERED may still become READ (RCS); a READ that arrives before its DELIVERED is accepted.
 */
export function canTransition(current: MessageStatus, next: MessageStatus): boolean {
  return NEXT[current].includes(next);
}

export function isFinal(status: MessageStatus): boolean {
  return status !== 'SCHEDULED' && status !== 'ENROUTE';
}

export function isMessageStatus(value: string): value is MessageStatus {
  return (MESSAGE_STATUSES as readonly string[]).includes(value);
}
