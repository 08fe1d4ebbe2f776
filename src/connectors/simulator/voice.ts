/**
 * What the simulated voice network does with a call, by the destination's last four digits (the SMS simulator's
 * endings, with their voice meanings): 0001 → busy, 0002 → no answer, 0003 → invalid number; anything else is
 * answered and listened to in full. Each call placed reports on its own; placing a busy or unanswered call again
 * is the core's decision.
 */
export type CallOutcome = 'ANSWERED' | 'BUSY' | 'NO_ANSWER' | 'INVALID';

export function simulatedCallOutcome(recipient: string): CallOutcome {
  switch (recipient.slice(-4)) {
    case '0001':
      return 'BUSY';
    case '0002':
      return 'NO_ANSWER';
    case '0003':
      return 'INVALID';
    default:
      return 'ANSWERED';
  }
}

export const CALL_REPORTS: Readonly<Record<CallOutcome, { status: 'DELIVERED' | 'UNDELIVERED' | 'UNDELIVERABLE'; detail?: string }>> = {
  ANSWERED: { status: 'DELIVERED' },
  BUSY: { status: 'UNDELIVERED', detail: 'BUSY' },
  NO_ANSWER: { status: 'UNDELIVERED', detail: 'NO_ANSWER' },
  INVALID: { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' },
};
