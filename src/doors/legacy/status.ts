import type { MessageStatus } from '../../domain/status.ts';

/**
 * The legacy HTTP 1.6 message status codes and their REST equivalents: one table, read both ways. Every code of the
 * legacy annex is listed with what it means in REST terms; the rows marked `emit` are the ones Tern answers for a
 * REST status (and detail, and message type), so the forward mapping is a pure lookup in the same rows.
 */

/** What a REST status (with its detail) looks like; `detail: undefined` means any detail. */
export interface RestStatus {
  status: MessageStatus;
  detail: string | null;
}

interface LegacyStatusRow {
  code: number;
  description: string;
  /** The REST status this code stands for, or null when it describes a group of messages, not one. */
  rest: RestStatus | null;
  /** Tern answers this code for these REST statuses. `details` undefined = any detail not matched by another row. */
  emit?: { status: MessageStatus; details?: readonly (string | null)[]; types?: readonly string[] };
}

const ROWS: readonly LegacyStatusRow[] = [
  { code: 0, description: 'Sent', rest: { status: 'ENROUTE', detail: null } },
  { code: 1, description: 'In progress', rest: { status: 'ENROUTE', detail: null } },
  { code: 2, description: 'Internal error', rest: { status: 'UNDELIVERABLE', detail: 'OPERATOR_ERROR' } },
  { code: 10, description: 'Scheduled', rest: { status: 'SCHEDULED', detail: null }, emit: { status: 'SCHEDULED' } },
  {
    code: 11,
    description: 'Received',
    rest: { status: 'DELIVERED', detail: null },
    emit: { status: 'DELIVERED', types: ['SMS', 'RCS'] },
  },
  { code: 12, description: 'Partially delivered', rest: null },
  { code: 13, description: 'Handed to operator', rest: { status: 'ENROUTE', detail: null }, emit: { status: 'ENROUTE' } },
  { code: 14, description: 'Issued', rest: { status: 'ENROUTE', detail: null } },
  { code: 15, description: 'Partially received', rest: null },
  {
    code: 16,
    description: 'Listened',
    rest: { status: 'DELIVERED', detail: null },
    emit: { status: 'DELIVERED', types: ['VOICE'] },
  },
  { code: 21, description: 'Not deliverable', rest: { status: 'UNDELIVERABLE', detail: null }, emit: { status: 'UNDELIVERABLE' } },
  {
    code: 22,
    description: 'Rejected',
    rest: { status: 'UNDELIVERABLE', detail: 'REJECTED' },
    emit: { status: 'UNDELIVERABLE', details: ['REJECTED', 'DAILY_LIMIT_EXCEEDED', 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED'] },
  },
  {
    code: 33,
    description: 'No credit',
    rest: { status: 'UNDELIVERABLE', detail: 'INSUFFICIENT_CREDIT' },
    emit: { status: 'UNDELIVERABLE', details: ['INSUFFICIENT_CREDIT'] },
  },
  { code: 34, description: 'Routing error', rest: { status: 'UNDELIVERABLE', detail: 'NOT_ROUTABLE' } },
  { code: 35, description: 'Reception error', rest: { status: 'UNDELIVERED', detail: null } },
  { code: 36, description: 'Message error', rest: { status: 'UNDELIVERABLE', detail: 'REJECTED' } },
  {
    code: 37,
    description: 'Expired',
    rest: { status: 'UNDELIVERED', detail: 'EXPIRED' },
    emit: { status: 'UNDELIVERED', details: ['EXPIRED'] },
  },
  { code: 38, description: 'Too long', rest: { status: 'UNDELIVERABLE', detail: 'REJECTED' } },
  { code: 50, description: 'Not delivered', rest: { status: 'UNDELIVERED', detail: null }, emit: { status: 'UNDELIVERED' } },
  { code: 100, description: 'Read', rest: { status: 'READ', detail: null }, emit: { status: 'READ' } },
  { code: 101, description: 'Not read', rest: { status: 'DELIVERED', detail: null } },
  { code: 3501, description: 'Temporary error: operator', rest: { status: 'UNDELIVERED', detail: 'OPERATOR_ERROR' } },
  { code: 3502, description: 'Temporary error: absent subscriber', rest: { status: 'UNDELIVERED', detail: null } },
  { code: 3503, description: 'Temporary error: phone', rest: { status: 'UNDELIVERED', detail: null } },
  { code: 3504, description: 'Temporary error: portability', rest: { status: 'UNDELIVERED', detail: null } },
  {
    code: 3521,
    description: 'Permanent error: operator',
    rest: { status: 'UNDELIVERABLE', detail: 'OPERATOR_ERROR' },
    emit: { status: 'UNDELIVERABLE', details: ['OPERATOR_ERROR'] },
  },
  {
    code: 3522,
    description: 'Permanent error: absent subscriber',
    rest: { status: 'UNDELIVERABLE', detail: 'ABSENT_SUBSCRIBER' },
    emit: { status: 'UNDELIVERABLE', details: ['ABSENT_SUBSCRIBER'] },
  },
  { code: 3523, description: 'Permanent error: phone', rest: { status: 'UNDELIVERABLE', detail: null } },
  {
    code: 3524,
    description: 'Permanent error: spam',
    rest: { status: 'UNDELIVERABLE', detail: 'SPAM' },
    emit: { status: 'UNDELIVERABLE', details: ['SPAM'] },
  },
  { code: 3525, description: 'Permanent error: content', rest: { status: 'UNDELIVERABLE', detail: 'REJECTED' } },
  { code: 3526, description: 'Permanent error: portability', rest: { status: 'UNDELIVERABLE', detail: null } },
  { code: 3527, description: 'Permanent error: roaming', rest: { status: 'UNDELIVERABLE', detail: null } },
  {
    code: 3560,
    description: 'Not routable',
    rest: { status: 'UNDELIVERABLE', detail: 'NOT_ROUTABLE' },
    emit: { status: 'UNDELIVERABLE', details: ['NOT_ROUTABLE', 'ROUTE_AT_LOSS'] },
  },
  { code: 3599, description: 'Other error', rest: { status: 'UNDELIVERABLE', detail: null } },
  {
    code: 3998,
    description: 'Invalid recipient',
    rest: { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' },
    emit: { status: 'UNDELIVERABLE', details: ['INVALID_PHONE_NUMBER'] },
  },
  {
    code: 3999,
    description: 'Blacklisted',
    rest: { status: 'UNDELIVERABLE', detail: 'BLACKLISTED' },
    emit: { status: 'UNDELIVERABLE', details: ['BLACKLISTED'] },
  },
];

const BY_CODE = new Map<number, LegacyStatusRow>(ROWS.map((row) => [row.code, row]));

/** Every legacy status code, in ascending order. */
export const LEGACY_STATUS_CODES: readonly number[] = [...BY_CODE.keys()].sort((a, b) => a - b);

export const LEGACY_PARTIALLY_DELIVERED = 12;

export interface LegacyStatus {
  code: number;
  description: string;
}

/**
 * The legacy code Tern answers for a message's REST status, detail and type. A message-specific row (its detail,
 * its type) wins over the catch-all row of the same status. CANCELLED has none: a cancelled message is a deleted
 * one (`deleteSMS.do`), which the legacy interface no longer shows; the answer is null.
 */
export function legacyStatusOf(status: MessageStatus, detail: string | null, type = 'SMS'): LegacyStatus | null {
  let fallback: LegacyStatusRow | null = null;
  for (const row of ROWS) {
    const e = row.emit;
    if (!e || e.status !== status) continue;
    if (e.types && !e.types.includes(type)) continue;
    if (e.details === undefined) {
      fallback ??= row;
      continue;
    }
    if (e.details.includes(detail)) return { code: row.code, description: row.description };
  }
  return fallback ? { code: fallback.code, description: fallback.description } : null;
}

/** What a legacy code stands for in REST terms; null for unknown codes and for codes that describe a group. */
export function restStatusOfLegacy(code: number): RestStatus | null {
  return BY_CODE.get(code)?.rest ?? null;
}

export function legacyStatusDescription(code: number): string | null {
  return BY_CODE.get(code)?.description ?? null;
}

/**
 * The overall status of a legacy send to several numbers (`smsStatus.do`): the members' common code when they all
 * agree; while any member is still on its way, the first in-progress code (scheduled before handed to operator);
 * once all are final, "partially delivered" when some were delivered, read or listened, else the first member's.
 */
export function legacyGroupStatus(members: readonly LegacyStatus[]): LegacyStatus | null {
  if (members.length === 0) return null;
  const first = members[0]!;
  if (members.every((m) => m.code === first.code)) return first;
  const pending = members.filter((m) => {
    const rest = restStatusOfLegacy(m.code);
    return rest !== null && (rest.status === 'SCHEDULED' || rest.status === 'ENROUTE');
  });
  if (pending.length > 0) {
    return pending.find((m) => m.code === 10) ?? pending[0]!;
  }
  const reached = members.some((m) => {
    const rest = restStatusOfLegacy(m.code);
    return rest !== null && (rest.status === 'DELIVERED' || rest.status === 'READ');
  });
  if (reached) return { code: LEGACY_PARTIALLY_DELIVERED, description: legacyStatusDescription(LEGACY_PARTIALLY_DELIVERED)! };
  return first;
}
