import { fenceMargin } from '../../domain/leases.ts';
import type { SubmitFence } from '../ports.ts';
import type { Store } from '../../store/db.ts';
import { type Claim, renewClaims } from '../../store/dispatch.ts';

/**
 * A dispatch pass's hold on the messages it claimed. A claim (claimant and lease end) is the fencing token: every
 * write of the pass is made only where the database still records it. While the pass runs, the lease is renewed by
 * compare and set — a node that stalled past its lease finds the rows claimed by another and drops them — and
 * `holds` tells the connectors, right before a message goes out, whether this node may still send it: not once its
 * lease is over (less a margin for clocks) by its own clock, which needs no round trip and holds on a node that has
 * just woken from a long pause and not yet heard from the database.
 *
 * A pass may start with messages of several claims (handed batches that waited together): `begin` moves them to one
 * lease, so the pass writes its outcomes under one claim.
 */
export class ClaimHold implements SubmitFence {
  private current: Claim;
  private readonly leases: Map<string, number>;
  private readonly lost = new Set<string>();
  private readonly margin: number;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<boolean> | null = null;

  constructor(
    private readonly store: Store,
    claimant: string,
    /** Each message with the lease it was claimed until. */
    claimed: ReadonlyArray<{ messageId: string; leaseUntil: number }>,
    private readonly leaseMs: number,
  ) {
    this.leases = new Map(claimed.map((c) => [c.messageId, c.leaseUntil]));
    const earliest = Math.min(...this.leases.values());
    this.current = { claimant, leaseUntil: earliest };
    this.margin = fenceMargin(leaseMs);
  }

  /** The claim the pass's outcomes are written under (after `begin`, one for all its messages). */
  get claim(): Claim {
    return this.current;
  }

  holds(messageId: string): boolean {
    return this.leases.has(messageId) && !this.lost.has(messageId) && Date.now() < this.current.leaseUntil - this.margin;
  }

  /** The messages this node may still send. */
  held(): string[] {
    return [...this.leases.keys()].filter((id) => this.holds(id));
  }

  /**
   * Renews the leases now when they differ or less than half of one is left (handed messages that waited in memory),
   * so a pass starts with room under one claim; then keeps renewing every third of the lease until `end`. Throws
   * when leases that differ cannot be renewed (the pass cannot write under one claim): its messages are claimed again
   * when their leases run out.
   */
  async begin(): Promise<void> {
    const mixed = new Set(this.leases.values()).size > 1;
    if (mixed || this.current.leaseUntil - Date.now() < this.leaseMs / 2) {
      const renewed = await this.renew();
      if (mixed && !renewed) throw new Error('could not renew the leases of a dispatch pass');
    }
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing; answers the claim the pass's outcomes are to be written with. */
  async end(): Promise<Claim> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    return this.current;
  }

  /** One renewal at a time; answers whether it reached the database. */
  private renew(): Promise<boolean> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<boolean> {
    const rows = [...this.leases].filter(([id]) => !this.lost.has(id)).map(([messageId, leaseUntil]) => ({ messageId, leaseUntil }));
    if (rows.length === 0) return true;
    const next = Date.now() + this.leaseMs;
    let held: Set<string>;
    try {
      held = await renewClaims(this.store.db, this.current.claimant, rows, next);
    } catch {
      // Unrenewed, the claim lapses on its own: `holds` turns false when its lease ends.
      return false;
    }
    for (const r of rows) {
      if (held.has(r.messageId)) this.leases.set(r.messageId, next);
      else this.lost.add(r.messageId);
    }
    if (held.size > 0) this.current = { claimant: this.current.claimant, leaseUntil: next };
    return true;
  }
}
