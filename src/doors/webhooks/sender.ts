import { isStorageError } from '../../core/errors.ts';
import type { Logger } from 'pino';
import { originOf } from '../../domain/urls.ts';
import { GroupCommitter } from '../../core/group-commit.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { AttemptEnd, WebhookHandoff, WebhookOutbox } from '../../core/webhooks/outbox.ts';
import { fenceMargin } from '../../domain/leases.ts';
import { Loop, onRetryGrid } from '../../workers/loop.ts';
import type { AttemptOutcome, AttemptResult, WebhookHttpClient } from './http-client.ts';
import { signWebhook } from './signing.ts';
import { groupBy } from '../../domain/group-by.ts';

export interface WebhookSenderOptions {
  /** Deliveries claimed and not yet settled, in all. */
  maxHeld?: number;
  /**
   * Deliveries held for one origin (in flight or waiting for one of its connections) beyond which its deliveries are
   * left out of claims; a claim may add up to `claimBatch` more, so with the default batch an origin holds at most
   * 1,000 — within the HTTP client's queue per origin.
   */
  maxHeldPerOrigin?: number;
  /**
   * Deliveries held for one organisation beyond which its deliveries are left out of claims, likewise: an
   * organisation with thousands of receivers holds no more than this of the node's room, and the others' deliveries
   * are still claimed (they take turns at the connections in the HTTP client).
   */
  maxHeldPerOrganisation?: number;
  claimBatch?: number;
  /** How long a claimed delivery is reserved for this node (a node that dies gives its deliveries up after it). */
  leaseMs?: number;
  /** A slow poll of its own behind the wake-ups (default none: the node's safety poll wakes it). */
  safetyPollMs?: number | null;
  /**
   * Told of deliveries whose claim ran out: not sent (`before`: another node sends them), or sent with their outcome
   * no longer writable (`after`: sent again by the node that holds them now).
   */
  onFenced?: (when: 'before' | 'after', count: number) => void;
  /** Told of what the attempts came to, as their outcomes are recorded (the metrics). */
  onAttempts?: (ended: readonly AttemptEnd[]) => void;
}

/** Attempt outcomes are recorded together when they come within this long of each other. */
const SETTLE_LINGER_MS = 20;
/** Deliveries written within this long of each other are claimed together. */
const CLAIM_LINGER_MS = 5;
/**
 * While an origin holds its share here, its new deliveries are written for a claim, which leaves them out: such claims
 * run at most this often instead of after every write of the busy origin (each takes a few looks per origin with
 * deliveries pending, whatever the backlog, and would take nothing).
 */
const BUSY_CLAIM_INTERVAL_MS = 250;

type Delivery = Awaited<ReturnType<WebhookOutbox['claim']>>[number];

interface Recorded {
  delivery: Delivery;
  outcome: AttemptResult & { outcome: Exclude<AttemptOutcome, 'fenced'> };
  at: number;
}

/**
 * Sends claimed webhook deliveries without waiting for one before the next: each attempt runs on its own, queued by
 * the HTTP client behind its origin's connections, so a slow or dead receiver only ties up its own share. Claimed
 * deliveries stay in memory until their attempt is over — their leases renewed while this node holds them — instead
 * of being written back when their origin is busy; an origin holding `maxHeldPerOrigin` gets the rest back later.
 * Outcomes are recorded in batches through the outbox, which retries failures on its schedule.
 */
export class WebhookSender implements WebhookHandoff {
  private readonly loop: Loop;
  private readonly held = new Map<string, Delivery>();
  /** Deliveries held or reserved (handed over once their transaction commits), by origin and by organisation. */
  private readonly heldPerOrigin = new Map<string, number>();
  private readonly heldPerOrganisation = new Map<string, number>();
  /** Deliveries reserved for a handoff whose transaction has not ended yet. */
  private reserved = 0;
  /**
   * Deliveries may be due that the last claim did not take (it filled its room, or no pass has run since the start):
   * deliveries written meanwhile are not handed over, so they do not overtake them. Those of a busy origin wait the
   * same way (`busy`).
   */
  private behind = true;
  private readonly inFlightDone = new Set<Promise<void>>();
  private readonly recorder: GroupCommitter<Recorded, void>;
  private readonly maxHeld: number;
  private readonly maxHeldPerOrigin: number;
  private readonly maxHeldPerOrganisation: number;
  private readonly claimBatch: number;
  private readonly leaseMs: number;
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  /** Held deliveries another node claimed after their lease ran out: not to be sent from here. */
  private readonly lost = new Set<string>();
  private readonly margin: number;
  private readonly onFenced: NonNullable<WebhookSenderOptions['onFenced']>;
  private readonly onAttempts: NonNullable<WebhookSenderOptions['onAttempts']>;
  /** The last pass stopped for want of room (not for want of work): finishing attempts wake the loop. */
  private full = false;
  /** Origins and organisations left out of the last claim: their share here was full. */
  private busy = new Set<string>();
  private busyOrganisations = new Set<string>();
  private lastClaimAt = 0;

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly client: WebhookHttpClient,
    private readonly messaging: MessagingService,
    private readonly logger: Logger,
    opts: WebhookSenderOptions = {},
  ) {
    this.maxHeld = opts.maxHeld ?? 4_000;
    this.maxHeldPerOrigin = opts.maxHeldPerOrigin ?? 500;
    this.maxHeldPerOrganisation = opts.maxHeldPerOrganisation ?? 1_000;
    this.claimBatch = opts.claimBatch ?? 500;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.margin = fenceMargin(this.leaseMs);
    this.onFenced = opts.onFenced ?? (() => undefined);
    this.onAttempts = opts.onAttempts ?? (() => undefined);
    this.loop = new Loop(
      () => this.run(),
      opts.safetyPollMs ?? null,
      (err) => this.logger.error({ err }, 'webhook sender pass failed; retrying'),
    );
    this.recorder = new GroupCommitter(
      async (items) => {
        // A renewal under way may still move these deliveries' leases: written with the lease it leaves them.
        await this.renewing;
        const { retryAt, stale, unblocked, ended } = await this.outbox.settle(items);
        this.onAttempts(ended);
        if (stale > 0) this.onFenced('after', stale);
        if (retryAt !== null) this.loop.at(onRetryGrid(retryAt));
        // A delivery that ended was holding back a later one of its message (they go in order). Only then: a claim
        // after every batch of outcomes reads past every delivery waiting for a busy origin.
        if (unblocked) this.claimSoon();
        return items.map((): void => undefined);
      },
      500,
      SETTLE_LINGER_MS,
    );
  }

  start(): void {
    this.loop.start();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    await this.loop.stop();
    await Promise.all([...this.inFlightDone]);
    await this.recorder.idle();
  }

  taking(): boolean {
    return !this.loop.isStopped && !this.behind && this.held.size + this.reserved < this.maxHeld;
  }

  reserve(origin: string, organisation: string, now: number): number | null {
    if (this.loop.isStopped || this.behind || this.busy.has(origin) || this.busyOrganisations.has(organisation)) return null;
    if (this.held.size + this.reserved >= this.maxHeld) {
      this.behind = true;
      return null;
    }
    const n = this.heldPerOrigin.get(origin) ?? 0;
    if (n >= this.maxHeldPerOrigin) {
      this.busy.add(origin);
      return null;
    }
    const o = this.heldPerOrganisation.get(organisation) ?? 0;
    if (o >= this.maxHeldPerOrganisation) {
      this.busyOrganisations.add(organisation);
      return null;
    }
    this.reserved++;
    this.heldPerOrigin.set(origin, n + 1);
    this.heldPerOrganisation.set(organisation, o + 1);
    return now + this.leaseMs;
  }

  take(rows: Delivery[]): void {
    this.reserved -= rows.length;
    for (const d of rows) {
      const origin = d.origin!;
      // Stopped meanwhile: the delivery stays leased, and is claimed (here or elsewhere) once the lease runs out.
      if (this.loop.isStopped) this.unhold(origin, d.organisation_id);
      else this.launch(d, origin);
    }
  }

  release(reserved: Array<{ origin: string; organisation: string }>): void {
    this.reserved -= reserved.length;
    for (const r of reserved) this.unhold(r.origin, r.organisation);
  }

  /** New deliveries were written: claimed a moment later, with whatever else is written meanwhile. */
  wake(): void {
    this.claimSoon();
  }

  private claimSoon(): void {
    const soon = Date.now() + CLAIM_LINGER_MS;
    this.loop.at(this.busy.size > 0 || this.busyOrganisations.size > 0 ? Math.max(soon, this.lastClaimAt + BUSY_CLAIM_INTERVAL_MS) : soon);
  }

  private async run(): Promise<number | null> {
    for (;;) {
      const room = Math.min(this.maxHeld - this.held.size - this.reserved, this.claimBatch);
      if (room <= 0) {
        // Full: attempts finishing wake the loop once there is room again.
        this.full = true;
        this.behind = true;
        return null;
      }
      this.busy = new Set([...this.heldPerOrigin].filter(([, n]) => n >= this.maxHeldPerOrigin).map(([o]) => o));
      this.busyOrganisations = new Set([...this.heldPerOrganisation].filter(([, n]) => n >= this.maxHeldPerOrganisation).map(([o]) => o));
      const busy = [...this.busy];
      this.lastClaimAt = Date.now();
      const { rows: claimed, nextDue } = await this.outbox.claimWithNextDue(Date.now(), room, this.leaseMs, busy, [...this.busyOrganisations]);
      if (this.loop.isStopped) return null;
      const deferred: string[] = [];
      for (const d of claimed) {
        const origin = d.origin ?? originOf(d.url) ?? d.url;
        const n = this.heldPerOrigin.get(origin) ?? 0;
        // A claim may take an origin past its share by less than a batch; only deliveries written before origins
        // were recorded get past the claim's filter to a busy origin, and are handed back.
        if (d.origin === null && n >= this.maxHeldPerOrigin) {
          deferred.push(d.id);
          continue;
        }
        this.heldPerOrigin.set(origin, n + 1);
        this.heldPerOrganisation.set(d.organisation_id, (this.heldPerOrganisation.get(d.organisation_id) ?? 0) + 1);
        this.launch(d, origin);
      }
      if (deferred.length > 0) await this.outbox.defer(deferred, Date.now() + 1_000);
      this.behind = claimed.length >= room;
      // What is due for the busy origins waits for their queues to drain (which wakes the loop), not for a timer.
      // New deliveries wake the loop when written; what is due later is retries, looked for on the grid.
      if (claimed.length < room) return onRetryGrid(deferred.length > 0 ? Math.min(nextDue ?? Infinity, Date.now() + 1_000) : nextDue);
    }
  }

  /**
   * Keeps the leases of what this node holds ahead, so a long origin queue is not taken for a dead node's: each by
   * compare and set on the lease it holds, so a delivery another node claimed after its lease ran out (this node
   * stalled) is dropped here instead of sent twice.
   */
  private renew(): Promise<void> {
    this.renewing ??= this.renewHeld().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewHeld(): Promise<void> {
    const renewable = [...this.held.values()].filter((d) => !this.lost.has(d.id) && d.lease_until !== null);
    const byLease = groupBy(renewable, (d) => d.lease_until!);
    const until = Date.now() + this.leaseMs;
    for (const [leased, list] of byLease) {
      try {
        const renewed = await this.outbox.renew(
          list.map((d) => d.id),
          leased,
          until,
        );
        for (const d of list) {
          if (renewed.has(d.id)) d.lease_until = until;
          else this.lost.add(d.id);
        }
      } catch (err) {
        this.logger.warn({ err }, 'could not renew the leases of held webhook deliveries');
      }
    }
  }

  /** Whether this node may still send `d`: its lease not over (less a margin for clocks), not claimed elsewhere. */
  private holds(d: Delivery): boolean {
    return !this.lost.has(d.id) && d.lease_until !== null && Date.now() < d.lease_until - this.margin;
  }

  private launch(d: Delivery, origin: string): void {
    this.held.set(d.id, d);
    const p = this.attempt(d, origin)
      // The database's failures are told by the store (once for a flood); the delivery is tried again later.
      .catch((err) => {
        if (!isStorageError(err)) this.logger.error({ err, delivery: d.id }, 'webhook attempt failed unexpectedly');
      })
      .finally(() => {
        this.inFlightDone.delete(p);
        // New deliveries wake the loop themselves; a finished attempt only matters to a loop that stopped when full,
        // or to an origin whose queue was full (its deliveries were left out of the claims).
        const drained =
          (this.busy.has(origin) && (this.heldPerOrigin.get(origin) ?? 0) <= this.maxHeldPerOrigin / 2) ||
          (this.busyOrganisations.has(d.organisation_id) && (this.heldPerOrganisation.get(d.organisation_id) ?? 0) <= this.maxHeldPerOrganisation / 2);
        if ((this.full && this.held.size <= this.maxHeld * 0.75) || drained) {
          this.full = false;
          this.busy.delete(origin);
          this.busyOrganisations.delete(d.organisation_id);
          // What waits in the table goes first: nothing is handed over until the pass has claimed it.
          this.behind = true;
          this.loop.wake();
        }
      });
    this.inFlightDone.add(p);
  }

  private letGo(d: Delivery, origin: string): void {
    this.held.delete(d.id);
    this.lost.delete(d.id);
    this.unhold(origin, d.organisation_id);
  }

  private unhold(origin: string, organisation: string): void {
    const n = (this.heldPerOrigin.get(origin) ?? 1) - 1;
    if (n <= 0) this.heldPerOrigin.delete(origin);
    else this.heldPerOrigin.set(origin, n);
    const o = (this.heldPerOrganisation.get(organisation) ?? 1) - 1;
    if (o <= 0) this.heldPerOrganisation.delete(organisation);
    else this.heldPerOrganisation.set(organisation, o);
  }

  private async attempt(d: Delivery, origin: string): Promise<void> {
    let outcome: AttemptResult;
    try {
      if (d.method === 'GET') {
        outcome = await this.client.send({
          method: 'GET',
          url: d.url,
          query: JSON.parse(d.payload) as Record<string, string>,
          stillHeld: () => this.holds(d),
          tenant: d.organisation_id,
        });
      } else {
        const channel = await this.messaging.channel(d.channel_id);
        const now = Date.now();
        const secrets = [channel.webhookSecret];
        if (channel.webhookSecretPrevious && (channel.webhookSecretPreviousUntil ?? 0) > now) {
          secrets.push(channel.webhookSecretPrevious);
        }
        const headers = signWebhook({ secrets, id: d.id, timestamp: new Date(now), body: d.payload });
        outcome = await this.client.send({
          method: 'POST',
          url: d.url,
          body: d.payload,
          headers: { ...headers, 'content-type': 'application/json' },
          stillHeld: () => this.holds(d),
          tenant: d.organisation_id,
        });
      }
    } finally {
      // No longer renewed: its outcome is being recorded (or, on an unexpected error, its lease runs out).
      this.letGo(d, origin);
    }
    if (outcome.outcome === 'fenced') {
      this.onFenced('before', 1);
      return;
    }
    await this.recorder.submit({ delivery: d, outcome: { ...outcome, outcome: outcome.outcome }, at: Date.now() });
  }
}
