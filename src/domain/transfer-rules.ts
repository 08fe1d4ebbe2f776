/** Who may move funds between which organisations. */

export interface OrganisationNode {
  id: string;
  parentId: string | null;
}

export type TransferDecision = { allowed: true } | { allowed: false; reason: string };

/** Above this a euro amount no longer converts to micro-euros exactly (2^53 µ€ ≈ 9 × 10^9 €). */
export const MAX_TRANSFER_MICROS = 1_000_000_000 * 1_000_000;

/**
 * Funds move only between an organisation and one of its own (direct) sub-organisations, in either direction.
 * The caller — an ADMIN key's organisation — must be the parent of the pair, or the source when a sub-organisation
 * gives funds back to its parent.
 */
export function transferDecision(callerId: string, source: OrganisationNode, destination: OrganisationNode): TransferDecision {
  if (source.id === destination.id) return { allowed: false, reason: 'the source and the destination are the same organisation' };
  if (destination.parentId === source.id) {
    return callerId === source.id
      ? { allowed: true }
      : { allowed: false, reason: 'only an ADMIN key of the parent organisation may fund its sub-organisation' };
  }
  if (source.parentId === destination.id) {
    return callerId === destination.id || callerId === source.id
      ? { allowed: true }
      : { allowed: false, reason: 'only an ADMIN key of the parent or of the sub-organisation may return funds to the parent' };
  }
  return { allowed: false, reason: 'funds move only between an organisation and its own sub-organisations' };
}
