/** What an operator's report about a message means for it: a final status, a refund, or another attempt. */

/** Calls whose line was busy or that nobody answered are placed this many times in all before they are given up. */
export const VOICE_CALL_ATTEMPTS = 3;

/** A call is billed per started block of this length. */
export const VOICE_BILLING_BLOCK_MS = 30_000;

/** Started blocks of 30 s, at least one: what a call of this length is billed. */
export function voiceBillingUnits(durationMs: number): number {
  return Math.max(1, Math.ceil(durationMs / VOICE_BILLING_BLOCK_MS));
}

/** A call that rang busy or was not answered: the person never heard it, and another call may reach them. */
export function isUnreachedCall(type: string, status: string, detail: string | null | undefined): boolean {
  return type === 'VOICE' && status === 'UNDELIVERED' && (detail === 'BUSY' || detail === 'NO_ANSWER');
}

export type ReceiptDecision = { kind: 'status'; refund: boolean } | { kind: 'retry' };

/**
 * The core's policy for a receipt: a busy or unanswered call is placed again until `maxCallAttempts` calls were
 * made; a message that never reached the person — refused by the operator (UNDELIVERABLE) or a call given up —
 * is refunded; anything else is a final status that keeps its charge.
 *
 * @param placements how many times the message has been placed, the one reported on included
 */
export function decideReceipt(
  message: { type: string },
  receipt: { status: string; detail?: string | null },
  placements: number,
  maxCallAttempts = VOICE_CALL_ATTEMPTS,
): ReceiptDecision {
  if (isUnreachedCall(message.type, receipt.status, receipt.detail)) {
    return placements < maxCallAttempts ? { kind: 'retry' } : { kind: 'status', refund: true };
  }
  return { kind: 'status', refund: receipt.status === 'UNDELIVERABLE' };
}

/** Failure details of a delivery receipt that are the network's or the operator's doing, not the number's. */
const RETRYABLE_FAILURES = new Set(['OPERATOR_ERROR', 'NETWORK_ERROR', 'REJECTED']);

/**
 * Whether a failed delivery (UNDELIVERED) may succeed through another operator: a failure with no reason given or an
 * operator's or network's error may; a number unknown, absent, barred or blacklisted, a call busy or unanswered, a
 * validity that ran out, may not.
 */
export function retryableFailure(detail: string | null | undefined): boolean {
  return detail === null || detail === undefined || RETRYABLE_FAILURES.has(detail);
}

/** The hour a time falls in (its first instant): delivery counters are kept per hour. */
export function hourOf(at: number): number {
  return Math.floor(at / 3_600_000) * 3_600_000;
}
