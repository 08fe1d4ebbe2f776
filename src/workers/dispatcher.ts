import type { Logger } from 'pino';
import { type DispatchHandoff, handedClaims } from '../core/messaging/handoff.ts';
import type { Dispatch } from '../core/messaging/dispatch.ts';
import type { Claim } from '../store/dispatch.ts';
import type { MessageRow } from '../store/messages.ts';
import { Loop } from './loop.ts';

/** Handed messages waiting in memory beyond which new accepts are queued for claims instead. */
const MAX_HANDED = 5_000;

/**
 * The dispatcher: runs dispatch passes whenever messages may be due — when this node accepted messages (handed to
 * it in memory), when accepts or retries are committed elsewhere (another node, on PostgreSQL), when the earliest
 * queued message falls due, and on a slow safety poll. Handed batches go first, then claims from the queue.
 */
export class Dispatcher extends Loop implements DispatchHandoff {
  private readonly handed: Array<{ claim: Claim; rows: MessageRow[] }> = [];
  private handedCount = 0;

  constructor(
    private readonly dispatch: Dispatch,
    private readonly nodeId: string,
    private readonly leaseMs: number,
    logger: Logger,
    safetyPollMs = 5_000,
  ) {
    super(() => this.passes(), safetyPollMs, (err) => logger.error({ err }, 'dispatcher pass failed; retrying'));
  }

  lease(now: number): Claim | null {
    if (this.isStopped || this.handedCount >= MAX_HANDED) return null;
    return { claimant: this.nodeId, leaseUntil: now + this.leaseMs };
  }

  take(claim: Claim, rows: MessageRow[]): void {
    this.handed.push({ claim, rows });
    this.handedCount += rows.length;
    this.wake();
  }

  /** Stops; messages handed to it and not dispatched yet are given back to the queue for any node. */
  override async stop(): Promise<void> {
    await super.stop();
    for (const { claim, rows } of this.handed.splice(0)) {
      this.handedCount -= rows.length;
      await this.dispatch.release(claim, rows.map((m) => m.id)).catch(() => undefined);
    }
  }

  private async passes(): Promise<number | null> {
    for (;;) {
      const next = this.handed.shift();
      if (!next) break;
      this.handedCount -= next.rows.length;
      // A failure leaves them leased: they are claimed again when the lease runs out.
      await this.dispatch.process(handedClaims(next.claim, next.rows), Date.now(), next.rows);
      if (this.isStopped) return null;
    }
    for (;;) {
      const n = await this.dispatch.pass(Date.now());
      if (n < this.dispatch.batchSize || this.isStopped) break;
    }
    return this.dispatch.nextDue(Date.now());
  }
}

export function dispatcherLoop(dispatch: Dispatch, nodeId: string, leaseMs: number, logger: Logger, safetyPollMs = 5_000): Dispatcher {
  return new Dispatcher(dispatch, nodeId, leaseMs, logger, safetyPollMs);
}
