import type { Db, Store } from '../../store/db.ts';
import { insertOutbox, type SmppOutboxRow } from '../../store/smpp.ts';

/** The SMPP outbox: deliver_sm (receipts and MO) waiting for a receiver bind of their credential. */

/** Writes outbox rows in `tx`, the transaction of the events they come from. */
export async function enqueue(tx: Db, rows: SmppOutboxRow[]): Promise<void> {
  await insertOutbox(tx, rows);
}

/** Writes outbox rows on their own, for what has no event transaction to join (a receipt for a refused part). */
export async function enqueueNow(store: Store, rows: SmppOutboxRow[]): Promise<void> {
  await insertOutbox(store.db, rows);
}
