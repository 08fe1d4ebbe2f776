import { HIGH_LANE } from '../../domain/fair-queue.ts';
import type { Claim, DispatchClaim } from '../../store/dispatch.ts';
import type { MessageRow } from '../../store/messages.ts';

/**
 * Messages of the high lane (OTP, TRANSACTIONAL) accepted on a node and due at once go straight to that node's
 * dispatcher: their queue rows are written
 * already claimed by it (in the accept transaction, so a crash leaves them to be claimed again when the lease runs
 * out), and the rows it accepted are handed over in memory once committed — no claim and no read back per batch.
 */
export interface DispatchHandoff {
  /** The claim to write handed messages' queue rows with, or null when the dispatcher has enough waiting already. */
  lease(now: number): Claim | null;
  /** After the accept committed: messages whose queue rows were written with `claim`. */
  take(claim: Claim, rows: MessageRow[]): void;
}

/** The queue rows of handed messages, as a claim of them would have returned them. */
export function handedClaims(claim: Claim, rows: MessageRow[]): DispatchClaim[] {
  return rows.map((m) => ({
    message_id: m.id,
    due_at: m.send_at,
    attempts: 0,
    claimed_by: claim.claimant,
    lease_until: claim.leaseUntil,
    waiting_on: null,
    previous_claimant: null,
    lane: HIGH_LANE,
    rank: m.send_at,
    waiting: 0,
  }));
}
