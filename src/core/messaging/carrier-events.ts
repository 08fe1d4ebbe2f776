import type { CarrierEvent, InboundEvent, ReceiptEvent } from '../ports.ts';
import type { Store } from '../../store/db.ts';
import { findByUpstreamIds } from '../../store/messages.ts';
import type { MessagingService } from './service.ts';

export type InboundHandler = (events: InboundEvent[]) => Promise<void>;

/**
 * Turns carrier events into status changes and inbound messages. Receipts without Tern's id are matched on the
 * connector's upstream id; a receipt that matches nothing is dropped (it is late for a message purged or unknown).
 */
export function carrierEventSink(store: Store, messaging: MessagingService, inbound: InboundHandler) {
  return async (events: CarrierEvent[]): Promise<void> => {
    const receipts = events.filter((e): e is ReceiptEvent => e.kind === 'receipt');
    const mo = events.filter((e): e is InboundEvent => e.kind === 'mo');
    const unresolved = receipts.filter((r) => !r.messageId && r.upstreamId);
    const byUpstream = new Map<string, string>();
    for (const connector of new Set(unresolved.map((r) => r.connector))) {
      const ids = unresolved.filter((r) => r.connector === connector).map((r) => r.upstreamId!);
      for (const m of await findByUpstreamIds(store.db, connector, ids)) byUpstream.set(`${connector}|${m.upstream_id}`, m.id);
    }
    const changes = receipts
      .map((r) => ({ r, id: r.messageId ?? byUpstream.get(`${r.connector}|${r.upstreamId}`) }))
      .filter((x): x is { r: ReceiptEvent; id: string } => x.id !== undefined)
      .map(({ r, id }) => ({
        messageId: id,
        status: r.status,
        detail: r.detail ?? null,
        at: r.at,
        refund: r.refund ?? r.status === 'UNDELIVERABLE',
      }));
    if (changes.length > 0) await messaging.updateStatuses(changes);
    if (mo.length > 0) await inbound(mo);
  };
}
