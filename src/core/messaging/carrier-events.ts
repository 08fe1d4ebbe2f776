import { decideReceipt } from '../domain/delivery.ts';
import type { CarrierEvent, InboundEvent, ReceiptEvent } from '../ports.ts';
import type { Store } from '../../store/db.ts';
import { findByUpstreamIds, findMessages, type MessageRow } from '../../store/messages.ts';
import type { StatusChange } from './status.ts';
import type { MessagingService } from './service.ts';

export type InboundHandler = (events: InboundEvent[]) => Promise<void>;

export interface ReceiptPolicy {
  /** Calls placed in all before a busy or unanswered one is given up. */
  callAttempts: number;
  /** Delay before a busy or unanswered call is placed again. */
  callRetryMs: number;
}

/**
 * Turns connector events into status changes, retries and inbound messages, by the core's policy
 * (`decideReceipt`): a busy or unanswered call is placed again later, a message that never reached the person is
 * refunded. Receipts without Tern's id are matched on the connector's upstream id; a receipt that matches nothing
 * is dropped (it is late for a message purged or unknown).
 */
export function carrierEventSink(store: Store, messaging: MessagingService, inbound: InboundHandler, policy: ReceiptPolicy) {
  return async (events: CarrierEvent[]): Promise<void> => {
    const receipts = events.filter((e): e is ReceiptEvent => e.kind === 'receipt');
    const mo = events.filter((e): e is InboundEvent => e.kind === 'mo');
    const unresolved = receipts.filter((r) => !r.messageId && r.upstreamId);
    const byUpstream = new Map<string, string>();
    for (const connector of new Set(unresolved.map((r) => r.connector))) {
      const ids = unresolved.filter((r) => r.connector === connector).map((r) => r.upstreamId!);
      for (const m of await findByUpstreamIds(store.db, connector, ids)) byUpstream.set(`${connector}|${m.upstream_id}`, m.id);
    }
    const matched = receipts
      .map((r) => ({ r, id: r.messageId ?? byUpstream.get(`${r.connector}|${r.upstreamId}`) }))
      .filter((x): x is { r: ReceiptEvent; id: string } => x.id !== undefined);

    // Only a failed delivery can mean another attempt: the message decides (its type, its placements so far).
    const failed = matched.filter((x) => x.r.status === 'UNDELIVERED').map((x) => x.id);
    const rows = new Map<string, MessageRow>((await findMessages(store.db, [...new Set(failed)])).map((m) => [m.id, m]));

    const changes: StatusChange[] = [];
    const retries: string[] = [];
    for (const { r, id } of matched) {
      const m = rows.get(id);
      // A report on a placement whose outcome the dispatcher has not recorded yet counts that placement too.
      const placements = m ? m.attempts + (r.upstreamId !== undefined && m.upstream_id !== r.upstreamId ? 1 : 0) : 1;
      const decision = decideReceipt({ type: m?.type ?? '' }, r, placements, policy.callAttempts);
      if (decision.kind === 'retry') retries.push(id);
      else changes.push({ messageId: id, status: r.status, detail: r.detail ?? null, at: r.at, refund: decision.refund });
    }
    if (changes.length > 0) await messaging.updateStatuses(changes);
    if (retries.length > 0) await messaging.placeAgain(retries, Date.now() + policy.callRetryMs);
    if (mo.length > 0) await inbound(mo);
  };
}
