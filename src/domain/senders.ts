/**
 * The senders an organisation may send from: alphanumeric sender IDs, short codes and long numbers, each allowed
 * in some countries (or all) once the operator approved it.
 */

export const SENDER_KINDS = ['ALPHANUMERIC', 'SHORT_CODE', 'LONG_NUMBER'] as const;
export type SenderKind = (typeof SENDER_KINDS)[number];
export const SENDER_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type SenderStatus = (typeof SENDER_STATUSES)[number];

export const MAX_ALPHANUMERIC_SENDER_LENGTH = 11;

export interface RegisteredSender {
  id: string;
  organisationId: string;
  value: string;
  kind: SenderKind;
  /** ISO 3166 alpha-2 codes; empty: every country. */
  countries: string[];
  status: SenderStatus;
  createdAt: number;
  updatedAt: number;
}

/** The kind of a sender value, or why it cannot be one. */
export function senderKindOf(value: string): { ok: true; kind: SenderKind } | { ok: false; reason: string } {
  if (/^\d{3,8}$/.test(value)) return { ok: true, kind: 'SHORT_CODE' };
  if (/^\d{9,15}$/.test(value)) return { ok: true, kind: 'LONG_NUMBER' };
  if (/^\d+$/.test(value)) return { ok: false, reason: `"${value}": a number is 3 to 15 digits` };
  if (value.length === 0 || value.length > MAX_ALPHANUMERIC_SENDER_LENGTH) {
    return { ok: false, reason: `"${value}": an alphanumeric sender is 1 to ${MAX_ALPHANUMERIC_SENDER_LENGTH} characters` };
  }
  if (!/^[A-Za-z0-9 .\-_&]+$/.test(value)) return { ok: false, reason: `"${value}": letters, digits, spaces and . - _ & only` };
  return { ok: true, kind: 'ALPHANUMERIC' };
}

/**
 * Why a registered sender may not send to `country`, or null when it may; `anyCountry` checks its status alone (a
 * campaign's shared fields, before its recipients are known).
 */
export function senderRefusal(sender: RegisteredSender, country: string | null, anyCountry = false): string | null {
  if (sender.status !== 'APPROVED') return `sender "${sender.value}" is ${sender.status === 'PENDING' ? 'not approved yet (PENDING)' : 'REJECTED'}`;
  if (anyCountry || sender.countries.length === 0) return null;
  if (country !== null && sender.countries.includes(country)) return null;
  return `sender "${sender.value}" is not approved for ${country ?? 'this destination'} (approved for ${sender.countries.join(', ')})`;
}
