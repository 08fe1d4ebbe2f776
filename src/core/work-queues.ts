import type { Store } from '../store/db.ts';
import { LOOKUP_BATCH_QUEUE } from '../store/lookup-batches.ts';
import { OTP_TIMER_QUEUE } from '../store/otp.ts';
import {
  CONNECTOR_RECORD_QUEUE,
  DISPATCH_QUEUE,
  queueBacklogs,
  queuesWithWorkDue,
  SMPP_OUTBOX_QUEUE,
  UNMATCHED_RECEIPT_QUEUE,
  WEBHOOK_QUEUE,
} from '../store/queue.ts';
import type { Signal } from '../store/signals.ts';

/** Every leased queue a node's workers read. */
const QUEUES = [
  DISPATCH_QUEUE,
  WEBHOOK_QUEUE,
  SMPP_OUTBOX_QUEUE,
  CONNECTOR_RECORD_QUEUE,
  UNMATCHED_RECEIPT_QUEUE,
  OTP_TIMER_QUEUE,
  LOOKUP_BATCH_QUEUE,
] as const;

/** The queues whose backlog is watched (the metrics), by the name they are reported under. */
const WATCHED = new Map([
  [DISPATCH_QUEUE.signal, 'dispatch'],
  [WEBHOOK_QUEUE.signal, 'webhooks'],
  [SMPP_OUTBOX_QUEUE.signal, 'smpp_outbox'],
  [CONNECTOR_RECORD_QUEUE.signal, 'connector_records'],
  [UNMATCHED_RECEIPT_QUEUE.signal, 'unmatched_receipts'],
]);
const WATCHED_QUEUES = QUEUES.filter((q) => WATCHED.has(q.signal));

/** A queue's depth is counted up to this: a deeper one reads as this, and costs no more to count. */
export const QUEUE_DEPTH_CAP = 100_000;

/**
 * The work queues seen together, for what no wake-up announces: work left behind by a lost wake-up, or by a node
 * that stopped with rows leased. Found work is handed to this node's workers through their queue's signal, as if
 * its notification had come.
 */
export class WorkQueues {
  constructor(private readonly store: Store) {}

  /** Wakes this node's workers of each queue holding work that is due and held by no one (one statement). */
  async wakeWhereDue(now = Date.now()): Promise<Signal[]> {
    const due = await queuesWithWorkDue(this.store, QUEUES, now);
    for (const signal of due) this.store.signals.fire(signal);
    return due;
  }

  /**
   * The backlog of the watched queues, all nodes, in one statement: rows waiting (up to {@link QUEUE_DEPTH_CAP}) and
   * how long the oldest due one has been due, in seconds (null: none is due).
   */
  async backlog(now = Date.now()): Promise<Array<{ queue: string; depth: number; oldestDueSeconds: number | null }>> {
    const rows = await queueBacklogs(this.store, WATCHED_QUEUES, now, QUEUE_DEPTH_CAP);
    return rows.map((r) => ({
      queue: WATCHED.get(r.signal)!,
      depth: r.depth,
      oldestDueSeconds: r.oldestDue === null ? null : Math.max(0, (now - r.oldestDue) / 1000),
    }));
  }

  /**
   * Wakes this node's workers of every queue (but those of `except`): they claim what is free, and look again when
   * their next work is due.
   */
  wakeAll(except: readonly Signal[] = []): void {
    for (const q of QUEUES) if (!except.includes(q.signal)) this.store.signals.fire(q.signal);
  }

  /**
   * Wakes the other nodes' workers of every queue, as this node leaves: the work it had scheduled for itself (retries,
   * timers) becomes theirs to schedule.
   */
  async handOver(): Promise<void> {
    for (const q of QUEUES) await this.store.signals.raise(this.store.db, q.signal, true);
  }
}
