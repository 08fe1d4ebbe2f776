import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { fenceMargin } from '../domain/leases.ts';
import { isStorageError } from '../core/errors.ts';
import { type DispatchHandoff, handedClaims } from '../core/messaging/handoff.ts';
import type { Dispatch } from '../core/messaging/dispatch.ts';
import type { Claim, MessageRow } from '../core/types.ts';
import { Loop } from './loop.ts';

/** Handed messages waiting in memory beyond which new accepts are queued for claims instead. */
const MAX_HANDED = 5_000;
/** Handed batches that waited are sent together up to this many messages (a claim takes fewer: see Dispatch). */
const MAX_HANDED_PASS = 500;

/**
 * The dispatcher, two loops side by side. One sends the high-lane messages this node accepted, handed to it in
 * memory, as soon as they are committed. The other claims from the queue whenever messages may be due there — when
 * accepts or retries are committed (here, or on another node with PostgreSQL), when the earliest queued message
 * falls due, and when woken by the node's safety poll (messages due that no one holds: a lost wake-up, or a node
 * that stopped). An OTP handed over never waits for a campaign's batch being sent.
 */
export class Dispatcher implements DispatchHandoff {
  private readonly handed: Array<{ claim: Claim; rows: MessageRow[] }> = [];
  private handedCount = 0;
  private readonly handedLoop: Loop;
  private readonly claimLoop: Loop;
  private readonly onError: (err: unknown) => void;
  /** Takeovers of stopped nodes' claims: under way, and waiting for their last leases to run out. */
  private readonly takeovers = new Set<Promise<void>>();
  private readonly takeoverTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly dispatch: Dispatch,
    private readonly nodeId: string,
    private readonly leaseMs: number,
    logger: Logger,
    /** A poll of its own (null: none, the node's safety poll wakes it). */
    safetyPollMs: number | null = null,
  ) {
    // The database's failures are told by the store (once for a flood).
    const onError = (err: unknown) => {
      if (!isStorageError(err)) logger.error({ err }, 'dispatcher pass failed; retrying');
    };
    this.onError = onError;
    // Handed batches are in memory: only `take` brings work.
    this.handedLoop = new Loop(() => this.sendHanded(), null, onError);
    this.claimLoop = new Loop(() => this.claimDue(), safetyPollMs, onError);
  }

  get isStopped(): boolean {
    return this.claimLoop.isStopped;
  }

  start(): void {
    this.handedLoop.start();
    this.claimLoop.start();
  }

  /** Work was written to the queue (here or on another node): claim it. */
  wake(): void {
    this.claimLoop.wake();
  }

  lease(now: number): Claim | null {
    if (this.handedLoop.isStopped || this.handedCount >= MAX_HANDED) return null;
    return { claimant: this.nodeId, leaseUntil: now + this.leaseMs };
  }

  take(claim: Claim, rows: MessageRow[]): void {
    this.handed.push({ claim, rows });
    this.handedCount += rows.length;
    this.handedLoop.wake();
  }

  /**
   * Other nodes stopped beating: what they had claimed is dispatched from here as their leases run out — those that
   * ran out now, and the rest a lease later (a lease they renewed last, just before they stopped).
   */
  takeOver(nodes: string[]): void {
    const run = () => {
      const p = (async () => {
        for (;;) {
          if (this.isStopped) return;
          const n = await this.dispatch.takeOver(nodes, Date.now());
          if (n < this.dispatch.batchSize) return;
        }
      })()
        .catch(this.onError)
        .finally(() => this.takeovers.delete(p));
      this.takeovers.add(p);
    };
    run();
    const later = setTimeout(
      () => {
        this.takeoverTimers.delete(later);
        run();
      },
      this.leaseMs + fenceMargin(this.leaseMs),
    );
    later.unref();
    this.takeoverTimers.add(later);
  }

  /** Stops; messages handed to it and not dispatched yet are given back to the queue for any node. */
  async stop(): Promise<void> {
    for (const t of this.takeoverTimers) clearTimeout(t);
    this.takeoverTimers.clear();
    await Promise.all([this.handedLoop.stop(), this.claimLoop.stop(), ...this.takeovers]);
    for (const { claim, rows } of this.handed.splice(0)) {
      this.handedCount -= rows.length;
      await this.dispatch
        .release(
          claim,
          rows.map((m) => m.id),
        )
        .catch(() => undefined);
    }
  }

  private async sendHanded(): Promise<null> {
    for (;;) {
      // Handed batches that waited meanwhile go together, up to a batch: one pass, one submit per connector.
      const batches = this.handed.splice(0, 1);
      if (batches.length === 0) break;
      let size = batches[0]!.rows.length;
      while (this.handed.length > 0 && size + this.handed[0]!.rows.length <= MAX_HANDED_PASS) {
        const next = this.handed.shift()!;
        batches.push(next);
        size += next.rows.length;
      }
      this.handedCount -= size;
      const rows = batches.flatMap((b) => b.rows);
      // A failure leaves them leased: they are claimed again when the lease runs out.
      await this.dispatch.process(
        batches.flatMap((b) => handedClaims(b.claim, b.rows)),
        Date.now(),
        rows,
      );
      if (this.handedLoop.isStopped) return null;
    }
    // What a pass puts back to wait (a temporary refusal) wakes the claim loop through the queue's signal, which then
    // sleeps until it falls due.
    return null;
  }

  private async claimDue(): Promise<number | null> {
    for (;;) {
      const n = await this.dispatch.pass(Date.now());
      if (n < this.dispatch.batchSize || this.claimLoop.isStopped) break;
      // A backlog goes a batch per turn of the event loop: requests, handed messages and receipts waiting meanwhile
      // are seen to in between.
      await nextTurn();
    }
    return this.dispatch.nextDue(Date.now());
  }
}

export function dispatcherLoop(dispatch: Dispatch, nodeId: string, leaseMs: number, logger: Logger, safetyPollMs: number | null = null): Dispatcher {
  return new Dispatcher(dispatch, nodeId, leaseMs, logger, safetyPollMs);
}
