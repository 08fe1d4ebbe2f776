import { isStorageError } from '../../core/errors.ts';
import type { Logger } from 'pino';
import { backoffDelay } from '../../domain/retry.ts';
import { GroupCommitter } from '../../core/group-commit.ts';
import type { SmppOutbox, SmppOutboxHandoff, SmppOutboxRow } from '../../core/smpp/outbox.ts';
import type { DeliverSmFields } from '../../protocols/smpp/deliver-sm.ts';
import { Loop, onRetryGrid } from '../../workers/loop.ts';
import { decodeOutboxPdus } from './gateway.ts';

/** What the worker needs of the SMPP server. */
export interface SmppDeliverTarget {
  /** Resolves true only when every deliver_sm was answered with status 0. */
  deliver(principalKey: string, pdus: DeliverSmFields[]): Promise<boolean>;
  /** Sessions of a principal that can take deliver_sm here (receivers and transceivers; not transmitters). */
  receiverCount(principalKey: string): number;
}

export interface SmppOutboxOptions {
  claimBatch?: number;
  /** deliver_sm calls waiting for their response at once, all credentials together. */
  maxInFlight?: number;
  /** How long a claimed row is reserved for the pass that claimed it. */
  leaseMs?: number;
  /** A slow poll of its own behind the wake-ups (default none: the node's safety poll wakes it). */
  safetyPollMs?: number | null;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Rows past their expiry are dropped by a pass at most this often (they are never delivered meanwhile). */
  expirySweepMs?: number;
}

/** Rows written are claimed this long after their wake-up, with whatever else is written meanwhile. */
const CLAIM_LINGER_MS = 5;
/** Outcomes (rows to delete or retry) are recorded together when they come within this long of each other. */
const SETTLE_LINGER_MS = 20;
/**
 * A worker stopped for want of room claims again once this share of its room is free: at every delivery that
 * ended it claimed one or two rows (50,000 receipts: 11,786 claims and as many commits).
 */
const REFILL_AT = 0.75;

interface Outcome {
  row: SmppOutboxRow;
  ok: boolean;
  /** No session of the credential is bound here any more: not an attempt, it waits for the next bind. */
  unbound: boolean;
  at: number;
}

/**
 * Sends the SMPP outbox (delivery receipts and MO waiting as deliver_sm) to bound receiver and transceiver sessions
 * of their credential. Only credentials with a receiver on this node are claimed; a row is deleted only when its
 * deliver_sm_resp came back with status 0, else retried with backoff. A receiver binding makes its credential's rows
 * due at once; rows past their expiry are dropped. Woken when rows are written (their signal), when a receiver binds
 * or a delivery ends, at the next row's time, and by the node's safety poll (rows due or expired that no wake-up
 * announced). Rows written on this node while it has room and nothing older waiting are handed to it as they commit
 * (SmppOutboxHandoff): a receipt goes out without a claim.
 */
export class SmppOutboxWorker implements SmppOutboxHandoff {
  private readonly loop: Loop;
  /** Credentials with a receiver or transceiver bound on this node (checked against the server on each pass). */
  private readonly receivers = new Set<string>();
  /** Credentials that just bound a receiver: their waiting rows become due. */
  private readonly justBound = new Set<string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The last pass stopped for want of room: deliveries finishing wake the loop once a quarter of it is free again. */
  private full = false;
  /**
   * Rows may be due that the last claim did not take (it filled its room, or no pass has run since the start): rows
   * written meanwhile are not handed over, so they do not overtake them.
   */
  private behind = true;
  /** Rows reserved for a handoff whose transaction has not ended yet. */
  private reserved = 0;
  private readonly recorder: GroupCommitter<Outcome, void>;
  private lastExpiry = 0;
  private readonly claimBatch: number;
  private readonly maxInFlight: number;
  private readonly leaseMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly expirySweepMs: number;

  constructor(
    private readonly outbox: SmppOutbox,
    private readonly target: SmppDeliverTarget,
    private readonly logger: Logger,
    opts: SmppOutboxOptions = {},
  ) {
    this.claimBatch = opts.claimBatch ?? 200;
    this.maxInFlight = opts.maxInFlight ?? 500;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.retryBaseMs = opts.retryBaseMs ?? 1_000;
    this.retryMaxMs = opts.retryMaxMs ?? 60_000;
    this.expirySweepMs = opts.expirySweepMs ?? 10_000;
    this.loop = new Loop(
      () => this.run(),
      opts.safetyPollMs ?? null,
      (err) => this.logger.error({ err }, 'smpp outbox pass failed; retrying'),
    );
    this.recorder = new GroupCommitter((items) => this.record(items), 500, SETTLE_LINGER_MS);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all([...this.inFlight.values()]);
    await this.recorder.idle();
  }

  /** A receiver or transceiver of the credential bound here. */
  bound(credentialId: string): void {
    this.receivers.add(credentialId);
    this.justBound.add(credentialId);
    this.loop.wake();
  }

  reserve(credentialId: string, now: number): number | null {
    if (this.loop.isStopped || this.behind || this.full || this.justBound.has(credentialId)) return null;
    if (!this.receivers.has(credentialId) || this.target.receiverCount(credentialId) === 0) return null;
    if (this.inFlight.size + this.reserved >= this.maxInFlight) return null;
    this.reserved++;
    return now + this.leaseMs;
  }

  take(rows: SmppOutboxRow[]): void {
    this.reserved -= rows.length;
    // Stopped meanwhile: the rows stay leased, and are claimed (here or elsewhere) once the lease runs out.
    if (this.loop.isStopped) return;
    for (const row of rows) this.launch(row);
  }

  release(count: number): void {
    this.reserved -= count;
  }

  /** Rows were written: claimed a moment later, so a burst of receipts is one claim rather than one each. */
  wake(): void {
    this.loop.at(Date.now() + CLAIM_LINGER_MS);
  }

  private async run(): Promise<number | null> {
    const now = Date.now();
    if (now - this.lastExpiry >= this.expirySweepMs) {
      this.lastExpiry = now;
      for (const [credentialId, count] of await this.outbox.expire(now)) {
        this.logger.info({ credentialId, count }, 'smpp outbox rows expired before a receiver took them');
      }
    }
    if (this.justBound.size > 0) {
      const ids = [...this.justBound];
      this.justBound.clear();
      await this.outbox.makeDue(ids, now);
    }
    // A node left with only a transmitter of a credential cannot deliver its receipts: it stops claiming them.
    for (const id of this.receivers) if (this.target.receiverCount(id) === 0) this.receivers.delete(id);
    for (;;) {
      if (this.loop.isStopped || this.receivers.size === 0) return null;
      const room = Math.min(this.maxInFlight - this.inFlight.size - this.reserved, this.claimBatch);
      if (room <= 0) {
        // Full: the next delivery to finish wakes the loop.
        this.full = true;
        return null;
      }
      const { rows, nextDue } = await this.outbox.claimWithNextDue([...this.receivers], Date.now(), this.leaseMs, room);
      for (const row of rows) this.launch(row);
      this.behind = rows.length >= room;
      // Rows written wake the loop; what is due later is retries, looked for on the grid.
      if (rows.length < room) return onRetryGrid(nextDue);
    }
  }

  private launch(row: SmppOutboxRow): void {
    const p = this.deliver(row)
      // The database's failures are told by the store (once for a flood); the row is sent again later.
      .catch((err) => {
        if (!isStorageError(err)) this.logger.error({ err, row: row.id }, 'smpp outbox delivery failed unexpectedly');
      })
      .finally(() => {
        this.inFlight.delete(row.id);
        if (this.full && this.inFlight.size <= this.maxInFlight * REFILL_AT) {
          this.full = false;
          this.loop.wake();
        }
      });
    this.inFlight.set(row.id, p);
  }

  private async deliver(row: SmppOutboxRow): Promise<void> {
    let ok = false;
    try {
      ok = await this.target.deliver(row.credential_id, decodeOutboxPdus(row.pdus));
    } catch (err) {
      this.logger.warn({ err, row: row.id }, 'smpp deliver_sm failed');
    }
    const unbound = !ok && this.target.receiverCount(row.credential_id) === 0;
    await this.recorder.submit({ row, ok, unbound, at: Date.now() });
  }

  private async record(items: Outcome[]): Promise<void[]> {
    const retries = items
      .filter((i) => !i.ok)
      .map(({ row, unbound, at }) => {
        if (unbound) return { id: row.id, attempts: row.attempts, at };
        const attempts = row.attempts + 1;
        return { id: row.id, attempts, at: at + this.retryBaseMs + backoffDelay(attempts, this.retryBaseMs, this.retryMaxMs) };
      });
    await this.outbox.settle(
      items.filter((i) => i.ok).map((i) => i.row.id),
      retries,
    );
    // Rows to try again fall due at their time: the loop's timer is told (earliest wins).
    if (retries.length > 0) this.loop.at(onRetryGrid(Math.min(...retries.map((r) => r.at))));
    return items.map((): void => undefined);
  }
}
