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
 * it in memory), when accepts or retries are committed (here, or on another node with PostgreSQL), when the earliest
 * queued message falls due, and on a slow safety poll. Handed batches and claims from the queue take turns.
 */
export class Dispatcher extends Loop implements DispatchHandoff {
  private readonly handed: Array<{ claim: Claim; rows: MessageRow[] }> = [];
  private handedCount = 0;
  private queueMayHaveWork = true;

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
    super.wake();
  }

  /** Stops; messages handed to it and not dispatched yet are given back to the queue for any node. */
  override async stop(): Promise<void> {
    await super.stop();
    for (const { claim, rows } of this.handed.splice(0)) {
      this.handedCount -= rows.length;
      await this.dispatch.release(claim, rows.map((m) => m.id)).catch(() => undefined);
    }
  }

  /** Woken by the queue (work written, here or on another node) or by its timer: claims are worth trying. */
  override wake(): void {
    this.queueMayHaveWork = true;
    super.wake();
  }

  private async passes(): Promise<number | null> {
    for (;;) {
      // A handed batch, then a claim from the queue, in turn: handed messages (the high lane) never wait behind a
      // backlog, and the queue's claims (which keep a share for the low lane) are never starved by them either.
      const next = this.handed.shift();
      if (next) {
        this.handedCount -= next.rows.length;
        // A failure leaves them leased: they are claimed again when the lease runs out.
        await this.dispatch.process(handedClaims(next.claim, next.rows), Date.now(), next.rows);
        if (this.isStopped) return null;
      }
      if (this.queueMayHaveWork) {
        this.queueMayHaveWork = false;
        if ((await this.dispatch.pass(Date.now())) >= this.dispatch.batchSize) this.queueMayHaveWork = true;
        if (this.isStopped) return null;
      }
      if (this.handed.length === 0 && !this.queueMayHaveWork) break;
    }
    return this.dispatch.nextDue(Date.now());
  }
}

export function dispatcherLoop(dispatch: Dispatch, nodeId: string, leaseMs: number, logger: Logger, safetyPollMs = 5_000): Dispatcher {
  return new Dispatcher(dispatch, nodeId, leaseMs, logger, safetyPollMs);
}
