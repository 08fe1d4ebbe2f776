// Batch lookups for list cleaning: up to MAX_BULK_LOOKUPS numbers accepted at once, looked up in the background, the
// results POSTed to the caller's URL as one signed webhook (`lookup.completed`, or `lookup.failed` when nothing could
// be charged), with the retries and replay of every webhook. A batch is stored before it is answered (202) and
// deleted with the webhook that answers it, in one transaction: one that a node was running when it stopped or died
// is run again by any node once its lease runs out.
import { uuidv7 } from '../../domain/ids.ts';
import type { Channel } from '../../store/channels.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import {
  countLookupBatchAttempt,
  deleteLookupBatch,
  insertLookupBatch,
  LOOKUP_BATCH_QUEUE,
  type LookupBatchRow,
  retryLookupBatchAt,
} from '../../store/lookup-batches.ts';
import { LeasedQueue } from '../../store/queue.ts';
import { CoreError, fail } from '../errors.ts';
import { checkCallbackUrl } from '../messaging/prepare.ts';
import { writeEventWebhook } from '../webhooks/events.ts';
import { type BulkLookupItem, type LookupService, MAX_BULK_LOOKUPS } from './service.ts';

export interface LookupBatch {
  batchId: string;
  count: number;
  callbackUrl: string;
  acceptedAt: number;
}

/** How a door writes a batch's outcome: its items, or why none was looked up. */
export type BatchOutcomeFormat = (batch: LookupBatch, outcome: { items: BulkLookupItem[] } | { error: CoreError }) => Record<string, unknown>;

export interface BatchLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * How long a node owns a batch it took: far longer than a thousand lookups take (each bounded by its connector's
 * timeout, a few at once), so that only a batch whose node stopped or died is taken by another.
 */
const BATCH_LEASE_MS = 10 * 60_000;
/** Batches a node runs at once. */
const BATCHES_AT_ONCE = 2;
/** A batch that failed for a reason of the moment is tried again this much later. */
const RETRY_AFTER_MS = 30_000;
/** A batch tried this many times without its webhook written is answered `lookup.failed`. */
const MAX_ATTEMPTS = 3;

export class LookupBatches {
  private readonly running = new Set<Promise<void>>();
  private readonly queue: LeasedQueue<LookupBatchRow>;
  private format: BatchOutcomeFormat | null = null;
  private roomFreed: () => void = () => undefined;

  constructor(
    private readonly store: Store,
    private readonly lookups: LookupService,
    private readonly channelOf: (id: string) => Promise<Channel>,
    private readonly logger: BatchLogger,
  ) {
    this.queue = new LeasedQueue(store, LOOKUP_BATCH_QUEUE);
  }

  /** Declared once by the composition root: how the webhook answering a batch is written (the REST door's shape). */
  formatWith(format: BatchOutcomeFormat): void {
    this.format = format;
  }

  /** Declared once by the composition root: told when a batch ends, so that the worker takes the next. */
  onRoom(listener: () => void): void {
    this.roomFreed = listener;
  }

  /**
   * Checks a batch and stores it: the answer comes at once, the results by webhook to `callbackUrl` (or the channel's
   * default status URL). Throws INVALID_REQUEST for an empty or too long list or no URL; nothing is stored then.
   */
  async start(channel: Channel, inputs: readonly string[], callbackUrl: string | undefined, now = Date.now()): Promise<LookupBatch> {
    if (inputs.length === 0) fail('INVALID_REQUEST', 'at least one number', 'msisdns');
    if (inputs.length > MAX_BULK_LOOKUPS) fail('INVALID_REQUEST', `at most ${MAX_BULK_LOOKUPS} numbers per request, got ${inputs.length}`, 'msisdns');
    const url = checkCallbackUrl(callbackUrl, 'callbackUrl') ?? channel.defaultCallbackUrlStatus;
    if (!url) fail('INVALID_REQUEST', 'is required: where the results are sent (or set the channel’s defaultCallbackUrlStatus)', 'callbackUrl');
    const batch: LookupBatch = { batchId: uuidv7(now), count: inputs.length, callbackUrl: url, acceptedAt: now };
    await inTransaction(this.store, async (trx) => {
      await insertLookupBatch(trx, {
        id: batch.batchId,
        organisation_id: channel.organisationId,
        channel_id: channel.id,
        numbers: JSON.stringify(inputs),
        callback_url: url,
        accepted_at: now,
        due_at: now,
      });
      await this.queue.wake(trx);
    });
    return batch;
  }

  /**
   * Takes the batches due for this node and runs them in the background; answers when to look again (null: when
   * woken). A batch taken stays leased while it runs.
   */
  async pass(now: number): Promise<number | null> {
    const room = BATCHES_AT_ONCE - this.running.size;
    if (room <= 0 || this.format === null) return null;
    const { rows, nextDue } = await this.queue.claimWithNextDue({ now, limit: room, leaseMs: BATCH_LEASE_MS });
    for (const row of rows) {
      const run = this.run(row).finally(() => {
        this.running.delete(run);
        this.roomFreed();
      });
      this.running.add(run);
    }
    return nextDue;
  }

  /** Resolves once the batches under way have written their webhook (a node stopping waits for them). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async run(row: LookupBatchRow): Promise<void> {
    const format = this.format!;
    let channel: Channel;
    try {
      channel = await this.channelOf(row.channel_id);
    } catch (err) {
      if (err instanceof CoreError) {
        // Its channel was deleted meanwhile: nobody left to answer.
        this.logger.warn({ batchId: row.id, channelId: row.channel_id }, 'a lookup batch’s channel is gone; the batch is dropped');
        await deleteLookupBatch(this.store.db, row.id).catch(() => undefined);
      } else await this.later(row, err);
      return;
    }
    const inputs = JSON.parse(row.numbers) as string[];
    const batch: LookupBatch = { batchId: row.id, count: inputs.length, callbackUrl: row.callback_url, acceptedAt: Number(row.accepted_at) };
    let outcome: { items: BulkLookupItem[] } | { error: CoreError };
    try {
      await countLookupBatchAttempt(this.store.db, row.id);
      outcome =
        row.attempts >= MAX_ATTEMPTS
          ? { error: new CoreError('UNAVAILABLE', `the batch could not be looked up in ${MAX_ATTEMPTS} tries; nothing more was charged`) }
          : { items: await this.lookups.lookupMany(channel, inputs) };
    } catch (err) {
      if (!(err instanceof CoreError)) return this.later(row, err);
      outcome = { error: err };
    }
    try {
      await inTransaction(this.store, async (trx) => {
        await writeEventWebhook(this.store, trx, {
          kind: 'LOOKUP',
          event: 'error' in outcome ? 'lookup.failed' : 'lookup.completed',
          messageId: batch.batchId,
          organisationId: channel.organisationId,
          channelId: channel.id,
          url: batch.callbackUrl,
          at: Date.now(),
          body: format(batch, outcome),
        });
        await deleteLookupBatch(trx, row.id);
      });
    } catch (err) {
      await this.later(row, err);
    }
  }

  /** A batch that failed for a reason of the moment (the database): run again a little later, by any node. */
  private async later(row: LookupBatchRow, err: unknown): Promise<void> {
    this.logger.warn({ err, batchId: row.id }, 'a lookup batch failed; it is tried again shortly');
    await retryLookupBatchAt(this.store.db, row.id, Date.now() + RETRY_AFTER_MS).catch(() => undefined);
  }
}
