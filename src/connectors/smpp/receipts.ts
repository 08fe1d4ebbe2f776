import type { ConnectorContext, ReceiptEvent, ReceiptStatus } from '../../core/ports.ts';

/** What a receipt's `stat:` means for the message; null while the SMSC still holds it (not final). */
export function receiptOutcome(stat: string): { status: ReceiptStatus; detail: string | null } | null {
  switch (stat) {
    case 'DELIVRD':
      return { status: 'DELIVERED', detail: null };
    case 'ACCEPTD':
    case 'ENROUTE':
    case 'ACKED':
    case 'BUFFRED':
    case 'BUFFERD':
      return null;
    case 'EXPIRED':
      return { status: 'UNDELIVERED', detail: 'EXPIRED' };
    case 'DELETED':
      return { status: 'UNDELIVERED', detail: 'DELETED' };
    case 'REJECTD':
      return { status: 'UNDELIVERABLE', detail: 'REJECTED' };
    case 'UNDELIV':
      return { status: 'UNDELIVERED', detail: 'OPERATOR_ERROR' };
    default:
      return { status: 'UNDELIVERED', detail: stat === 'UNKNOWN' ? 'UNKNOWN' : 'OPERATOR_ERROR' };
  }
}

/** A receipt as read from the SMSC, its id normalised. */
export interface SmscReceipt {
  id: string;
  status: ReceiptStatus;
  detail: string | null;
  at: number;
}

/** Kept for each part of a long message: the message (its first part's id) and all its parts. */
interface PartOf {
  message: string;
  parts: string[];
}

export const partKey = (id: string) => `part:${id}`;
const reportKey = (message: string, part: string) => `report:${message}:${part}`;

/** The parts of a long message, as records: receipts on any part then find the message. */
export function partRecords(parts: string[]): Array<{ key: string; data: Record<string, unknown>; dueAt: null }> {
  const data: PartOf = { message: parts[0]!, parts };
  return parts.map((p) => ({ key: partKey(p), data: data as unknown as Record<string, unknown>, dueAt: null }));
}

const SEVERITY: Readonly<Record<ReceiptStatus, number>> = { DELIVERED: 0, READ: 0, UNDELIVERED: 1, UNDELIVERABLE: 2 };

/**
 * Turns SMSC receipts into receipt events. A single-part message is known by the id its submit_sm_resp gave — and
 * named by its message when `submittedHere` knows the id (a single-part submit of this node); a long message by its
 * first part's id, and the receipts of its parts are kept (in the connector's records, so any node and any bind may
 * get them) until they decide: a failed part fails the message at once, and it is DELIVERED when every part is. A
 * receipt for an id nobody knows goes to the core as it is: it may be for a submit whose answer is not recorded yet
 * (the core keeps it and matches it again).
 */
export async function receiptEvents(
  ctx: ConnectorContext,
  connector: string,
  receipts: SmscReceipt[],
  submittedHere: (id: string) => string | undefined = () => undefined,
): Promise<ReceiptEvent[]> {
  const asIs = (r: SmscReceipt, messageId?: string): ReceiptEvent => ({
    kind: 'receipt',
    connector,
    ...(messageId !== undefined && { messageId }),
    upstreamId: r.id,
    status: r.status,
    detail: r.detail,
    at: r.at,
  });
  const events: ReceiptEvent[] = [];
  const others: SmscReceipt[] = [];
  for (const r of receipts) {
    const messageId = submittedHere(r.id);
    if (messageId !== undefined) events.push(asIs(r, messageId));
    else others.push(r);
  }
  if (others.length === 0) return events;
  const known = await ctx.records.get([...new Set(others.map((r) => partKey(r.id)))]);
  const reports: Array<{ r: SmscReceipt; of: PartOf }> = [];
  for (const r of others) {
    const of = known.get(partKey(r.id))?.data as PartOf | undefined;
    if (of) reports.push({ r, of });
    else events.push(asIs(r));
  }
  if (reports.length === 0) return events;
  await ctx.records.put(
    reports.map(({ r, of }) => ({ key: reportKey(of.message, r.id), data: { status: r.status, detail: r.detail, at: r.at }, dueAt: null })),
  );
  const messages = new Map(reports.map(({ of }) => [of.message, of]));
  const keys = [...messages.values()].flatMap((of) => of.parts.map((p) => reportKey(of.message, p)));
  const stored = await ctx.records.get(keys);
  for (const of of messages.values()) {
    const got = of.parts.map((p) => stored.get(reportKey(of.message, p))?.data as { status: ReceiptStatus; detail: string | null; at: number } | undefined);
    const failed = got.filter((g) => g && SEVERITY[g.status] > 0).sort((a, b) => SEVERITY[b!.status] - SEVERITY[a!.status])[0];
    if (failed) events.push({ kind: 'receipt', connector, upstreamId: of.message, status: failed.status, detail: failed.detail, at: failed.at });
    else if (got.every((g) => g !== undefined)) {
      events.push({ kind: 'receipt', connector, upstreamId: of.message, status: 'DELIVERED', detail: null, at: Math.max(...got.map((g) => g!.at)) });
    }
  }
  return events;
}
