import { type Db, inTransaction, type Store } from '../../store/db.ts';
import { LeasedQueue, SMPP_OUTBOX_QUEUE } from '../../store/queue.ts';
import {
  countOutbox,
  deleteOutbox,
  expireOutbox,
  insertOutbox,
  liveOutboxRowsOf,
  makeOutboxDue,
  rescheduleOutbox,
  type SmppOutboxRow,
} from '../../store/smpp.ts';

export type { SmppOutboxRow };

/**
 * A node's outbox worker taking rows as they are written: rows of a credential it holds a receiver of, due now, when
 * it has room and nothing older waiting. They are written already leased to it and handed over in memory once
 * committed (no claim, no wake-up); a crash leaves them to be claimed when the lease runs out.
 */
export interface SmppOutboxHandoff {
  /** Room for one row of `credentialId` now: the lease to write it with, or null. Each is taken or released. */
  reserve(credentialId: string, now: number): number | null;
  /** Rows reserved and committed. */
  take(rows: SmppOutboxRow[]): void;
  /** Rows reserved whose transaction did not commit. */
  release(count: number): void;
}

/**
 * What is owed to SMPP customers as deliver_sm (receipts, MO), per credential, until a receiver or transceiver of
 * the credential takes it: written in the transaction of the event it reports, claimed by the node that holds a
 * receiver, deleted once answered, rescheduled otherwise, dropped when it expires.
 */
export class SmppOutbox {
  readonly queue: LeasedQueue<SmppOutboxRow>;
  private handoff: SmppOutboxHandoff | null = null;

  constructor(private readonly store: Store) {
    this.queue = new LeasedQueue(store, SMPP_OUTBOX_QUEUE);
  }

  /** This node's worker, to take rows as they are written. */
  handTo(handoff: SmppOutboxHandoff): void {
    this.handoff = handoff;
  }

  /**
   * In the caller's transaction, or alone. Rows this node's worker can take at once are written leased to it and
   * handed over when the transaction commits; for the others the outbox workers are woken.
   */
  async enqueue(rows: SmppOutboxRow[], tx: Db = this.store.db): Promise<void> {
    if (rows.length === 0) return;
    const handoff = this.handoff;
    const handed: SmppOutboxRow[] = [];
    if (handoff) {
      const now = Date.now();
      for (const row of rows) {
        if (row.next_attempt_at > now || row.lease_until !== null) continue;
        const lease = handoff.reserve(row.credential_id, now);
        if (lease === null) continue;
        row.lease_until = lease;
        handed.push(row);
      }
    }
    try {
      await insertOutbox(tx, rows);
      if (handed.length < rows.length) await this.queue.wake(tx);
    } catch (err) {
      if (handed.length > 0) handoff!.release(handed.length);
      throw err;
    }
    if (handed.length > 0)
      this.store.signals.afterCommit(
        tx,
        () => handoff!.take(handed),
        () => handoff!.release(handed.length),
      );
  }

  /** Due rows of these credentials (those with a receiver bound here), reserved for `leaseMs`. */
  async claim(credentialIds: string[], now: number, leaseMs: number, limit: number): Promise<SmppOutboxRow[]> {
    if (credentialIds.length === 0) return [];
    return this.queue.claim({ now, limit, leaseMs, where: this.live(credentialIds, now) });
  }

  /** As `claim`, with when the next row of these credentials falls due once these are taken. */
  async claimWithNextDue(credentialIds: string[], now: number, leaseMs: number, limit: number): Promise<{ rows: SmppOutboxRow[]; nextDue: number | null }> {
    if (credentialIds.length === 0) return { rows: [], nextDue: null };
    return this.queue.claimWithNextDue({ now, limit, leaseMs, where: this.live(credentialIds, now) });
  }

  private live(credentialIds: string[], now: number) {
    return liveOutboxRowsOf(credentialIds, now);
  }

  /** Answered rows go; the others are tried again at their time (attempts counted or not). */
  async settle(delivered: string[], retries: Array<{ id: string; attempts: number; at: number }>): Promise<void> {
    await inTransaction(this.store, async (trx) => {
      await deleteOutbox(trx, delivered);
      for (const r of retries) await rescheduleOutbox(trx, r.id, r.attempts, r.at);
    });
  }

  /** A receiver of these credentials just bound: what waits for them is due now. */
  makeDue(credentialIds: string[], now: number): Promise<void> {
    return makeOutboxDue(this.store.db, credentialIds, now);
  }

  /** Drops rows past their expiry; how many per credential. */
  expire(now: number): Promise<Map<string, number>> {
    return expireOutbox(this.store.db, now);
  }

  pending(): Promise<Array<{ systemId: string; kind: string; count: number }>> {
    return countOutbox(this.store.db);
  }
}
