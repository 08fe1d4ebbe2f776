import { sql } from 'kysely';
import { uuidv7 } from '../../domain/ids.ts';
import type { EventConsumer } from '../events.ts';
import type { MessagingService } from '../messaging/service.ts';
import { messageObject } from '../messaging/view.ts';
import { nextRetryDelay } from '../../domain/retry.ts';
import type { Channel } from '../../store/channels.ts';
import type { Db, Store } from '../../store/db.ts';
import { originOf } from '../../domain/urls.ts';
import { LeasedQueue, WEBHOOK_QUEUE } from '../../store/queue.ts';
import {
  type AttemptOutcome,
  deferDeliveries,
  insertDeliveries,
  messagesWithPendingDeliveries,
  PENDING_ORIGIN_INDEX,
  pendingOrigins,
  recordAttempts,
  renewDeliveryLeases,
  type WebhookDeliveryRow,
} from '../../store/webhooks.ts';
import type { MessageEventRow, MessageRow } from '../../store/messages.ts';

/** What one attempt came to (the sender's HTTP client says). */
export interface AttemptResultLike {
  outcome: 'delivered' | 'retry' | 'gone' | 'refused';
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

/** What an attempt came to for its delivery: delivered, to be tried again, or ended without it (`failed`: no retry left). */
export type AttemptEnd = 'delivered' | 'retry' | 'failed' | 'gone' | 'refused';

export interface WebhookRequest {
  url: string;
  method: 'GET' | 'POST';
  /** GET: the query parameters. */
  query?: Record<string, string>;
  /** POST: the body (JSON text). */
  body?: string;
}

/**
 * Decides the deliveries of one event in another format than the JSON message object (legacy 1.6 GET
 * callbacks…): null lets the default JSON delivery apply, [] sends nothing.
 */
export type WebhookFormatter = (message: MessageRow, event: MessageEventRow, channel: Channel) => WebhookRequest[] | null;

/**
 * A node's webhook sender taking deliveries as they are written, when it has room for their origin: they are written
 * already leased to it and handed over in memory once committed (no claim, no wake-up); a crash leaves them to be
 * claimed when the lease runs out.
 */
export interface WebhookHandoff {
  /** Whether it takes deliveries now at all (else they are not looked at for it). */
  taking(): boolean;
  /** Room for one delivery of `organisation` to `origin` now: the lease to write it with, or null. Each is taken or released. */
  reserve(origin: string, organisation: string, now: number): number | null;
  /** Deliveries reserved and committed. */
  take(rows: WebhookDeliveryRow[]): void;
  /** Deliveries reserved (to these origins, of these organisations) whose transaction did not commit. */
  release(reserved: Array<{ origin: string; organisation: string }>): void;
}

/** The most origins a claim that skips some takes deliveries of (each is a look of its own in the claim). */
const CLAIM_ORIGINS = 50;
/**
 * The most origins such a claim looks at (a few index looks each, 3–15 µs): with more pending, each claim looks at
 * the next ones, and comes back for them within `REVISIT_MS`.
 */
const ORIGINS_LOOKED_AT = 500;
const REVISIT_MS = 250;

/**
 * Writes a webhook delivery for every event that has somewhere to go, in the transaction that created the event,
 * so an event is never lost between its commit and its delivery. The body is the message object as it is at that
 * moment (what GET answers), rendered once.
 */
export class WebhookOutbox {
  private readonly formatters: WebhookFormatter[] = [];
  readonly queue: LeasedQueue<WebhookDeliveryRow>;
  private handoff: WebhookHandoff | null = null;
  /** Where the next claim that skips origins starts looking at them (null: at the first). */
  private originsAfter: string | null = null;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly publicBase: () => string,
    /** Delays between attempts; a delivery fails after the last. */
    private readonly schedule: readonly number[],
  ) {
    this.queue = new LeasedQueue(store, WEBHOOK_QUEUE);
  }

  /** This node's sender, to take deliveries as they are written. */
  handTo(handoff: WebhookHandoff): void {
    this.handoff = handoff;
  }

  registerFormatter(formatter: WebhookFormatter): void {
    this.formatters.push(formatter);
  }

  /** Deliveries were changed outside an event transaction (a replay): have this node's sender look now. */
  nudge(): void {
    this.store.signals.fire('webhooks');
  }

  /**
   * Deliveries due now, reserved for `leaseMs` to the sender that claims them; none for the origins in `skipOrigins`
   * (their sender's queue for them is full).
   */
  async claim(
    now: number,
    limit: number,
    leaseMs: number,
    skipOrigins: readonly string[] = [],
    skipOrganisations: readonly string[] = [],
  ): Promise<WebhookDeliveryRow[]> {
    if (skipOrigins.length === 0 && skipOrganisations.length === 0) return this.queue.claim({ now, limit, leaseMs });
    return (await this.claimWithNextDue(now, limit, leaseMs, skipOrigins, skipOrganisations)).rows;
  }

  /**
   * `claim`, and when the next delivery left (those to `skipOrigins` aside) falls due. With origins to skip, the
   * deliveries are claimed origin by origin (the earliest due first, up to `CLAIM_ORIGINS` of them), so a skipped
   * origin's backlog, however long, is not read.
   */
  async claimWithNextDue(
    now: number,
    limit: number,
    leaseMs: number,
    skipOrigins: readonly string[] = [],
    skipOrganisations: readonly string[] = [],
  ): Promise<{ rows: WebhookDeliveryRow[]; nextDue: number | null }> {
    // The deliveries of organisations whose share of the sender is full are left out of the claims (read past).
    const where = skipOrganisations.length > 0 ? sql`organisation_id not in (${sql.join(skipOrganisations.map((o) => sql`${o}`))})` : undefined;
    if (skipOrigins.length === 0) return this.queue.claimWithNextDue({ now, limit, leaseMs, ...(where && { where }) });
    const after = this.originsAfter;
    const { origins, last } = await pendingOrigins(this.store.db, this.store.dialect, now, skipOrigins, { after, max: ORIGINS_LOOKED_AT }, skipOrganisations);
    // The next claim looks at the origins after these, or from the first again.
    this.originsAfter = last;
    const due = origins.filter((o) => o.dueNow !== null).sort((a, b) => a.dueNow! - b.dueNow!);
    const groups = due.slice(0, CLAIM_ORIGINS).map((o) => o.origin);
    const rows = await this.queue.claimFromGroups({ now, limit, leaseMs, column: 'origin', groups, index: PENDING_ORIGIN_INDEX, ...(where && { where }) });
    // More due than claimed: look again now. Else the next due later (deliveries due now but held back behind an
    // earlier one of their message are claimed once it ends, which wakes the sender), and soon for the origins not
    // looked at yet.
    if (rows.length >= limit || due.length > groups.length) return { rows, nextDue: now };
    const later = origins.map((o) => o.dueLater).filter((d): d is number => d !== null);
    if (after !== null || last !== null) later.push(now + REVISIT_MS);
    return { rows, nextDue: later.length > 0 ? Math.min(...later) : null };
  }

  /** Hands claimed deliveries back untried, for `until` (their destination is busy). */
  defer(ids: string[], until: number): Promise<void> {
    return deferDeliveries(this.store.db, ids, until);
  }

  /** Keeps claimed deliveries this node still holds (waiting for a connection to their origin, or in flight). */
  /** Moves the lease of deliveries leased until `leased` to `until`; answers those still leased so (the others were claimed again elsewhere). */
  renew(ids: string[], leased: number, until: number): Promise<Set<string>> {
    return renewDeliveryLeases(this.store.db, ids, leased, until);
  }

  /**
   * Records attempts: delivered, refused for good, or retried on the schedule until it is exhausted (FAILED), each
   * only where the delivery is still leased as it was for the attempt (its fencing token). Answers when the earliest
   * retry falls due (null: none), how many outcomes came too late to be written (claimed again elsewhere: sent
   * twice), and whether a delivery that ended leaves a later one of its message pending (now free to go).
   */
  async settle(
    items: Array<{ delivery: WebhookDeliveryRow; outcome: AttemptResultLike; at: number }>,
  ): Promise<{ retryAt: number | null; stale: number; unblocked: boolean; ended: AttemptEnd[] }> {
    const outcomes: AttemptOutcome[] = items.map(({ delivery: d, outcome: r, at }) => {
      const attempts = d.attempts + 1;
      let state = 'PENDING';
      let next = d.next_attempt_at;
      if (r.outcome === 'delivered') state = 'DELIVERED';
      else if (r.outcome === 'gone') state = 'GONE';
      else if (r.outcome === 'refused') state = 'REFUSED';
      else {
        const delay = nextRetryDelay(attempts, this.schedule);
        if (delay === null) state = 'FAILED';
        else next = at + delay;
      }
      return {
        deliveryId: d.id,
        leased: d.lease_until ?? 0,
        at,
        outcome: r.outcome,
        httpStatus: r.httpStatus,
        latencyMs: r.latencyMs,
        error: r.error,
        state,
        attempts,
        nextAttemptAt: next,
      };
    });
    const stale = await recordAttempts(this.store, outcomes);
    const retries = outcomes.filter((o) => o.state === 'PENDING').map((o) => o.nextAttemptAt);
    // Deliveries of one message go in order: one that ended may have been holding back the next. Looked up after the
    // commit, so a later delivery written meanwhile is either seen here or wakes its writer once this one has ended.
    const ended = items.filter((_, i) => outcomes[i]!.state !== 'PENDING').map((i) => i.delivery.message_id);
    const unblocked = ended.length > 0 && (await messagesWithPendingDeliveries(this.store.db, ended)).size > 0;
    const endings = items.map(({ outcome: r }, i): AttemptEnd => (outcomes[i]!.state === 'FAILED' ? 'failed' : r.outcome));
    return { retryAt: retries.length > 0 ? Math.min(...retries) : null, stale, unblocked, ended: endings };
  }

  readonly hook: EventConsumer = async (db, events, messages) => {
    const rows: WebhookDeliveryRow[] = [];
    const base = this.publicBase();
    for (const event of events) {
      const m = messages.get(event.message_id);
      if (!m) continue;
      if (event.kind === 'ACCEPTED' && (event.status === 'ENROUTE' || event.status === 'SCHEDULED')) continue;
      const channel = await this.messaging.channel(m.channel_id, db);
      let requests: WebhookRequest[] | null = null;
      for (const f of this.formatters) {
        requests = f(m, event, channel);
        if (requests !== null) break;
      }
      if (requests === null) {
        const url = event.kind === 'MO' ? (m.callback_url_mo ?? channel.defaultCallbackUrlMo) : (m.callback_url_status ?? channel.defaultCallbackUrlStatus);
        requests = url ? [{ url, method: 'POST', body: JSON.stringify(messageObject(m, channel, base)) }] : [];
      }
      for (const r of requests) {
        rows.push({
          id: `msg_${uuidv7(event.at).replace(/-/g, '')}`,
          event_id: event.id,
          message_id: m.id,
          organisation_id: m.organisation_id,
          channel_id: m.channel_id,
          kind: event.kind === 'MO' ? 'MO' : 'STATUS',
          method: r.method,
          url: r.url,
          origin: originOf(r.url),
          payload: r.method === 'GET' ? JSON.stringify(r.query ?? {}) : (r.body ?? ''),
          state: 'PENDING',
          attempts: 0,
          next_attempt_at: event.at,
          lease_until: null,
          last_http_status: null,
          last_error: null,
          created_at: event.at,
          updated_at: event.at,
          delivered_at: null,
        });
      }
    }
    if (rows.length === 0) return;
    const handed = await this.reserveHandoff(db, rows);
    try {
      await insertDeliveries(db, rows);
      if (handed.length < rows.length) await this.queue.wake(db);
    } catch (err) {
      if (handed.length > 0) this.handoff!.release(reservations(handed));
      throw err;
    }
    if (handed.length > 0) {
      const handoff = this.handoff!;
      this.store.signals.afterCommit(
        db,
        () => handoff.take(handed),
        () => handoff.release(reservations(handed)),
      );
    }
  };

  /**
   * The new deliveries this node's sender takes at once, leased to it: those due now, to an origin it has room for,
   * of a message with no delivery pending before them (deliveries of one message go in order; a later one waits for
   * the claim that finds the earlier one ended).
   */
  private async reserveHandoff(db: Db, rows: WebhookDeliveryRow[]): Promise<WebhookDeliveryRow[]> {
    const handoff = this.handoff;
    if (!handoff?.taking()) return [];
    const now = Date.now();
    const first = new Map<string, WebhookDeliveryRow>();
    for (const r of rows) if (r.origin !== null && r.next_attempt_at <= now && !first.has(r.message_id)) first.set(r.message_id, r);
    if (first.size === 0) return [];
    const waiting = await messagesWithPendingDeliveries(db, [...first.keys()]);
    const handed: WebhookDeliveryRow[] = [];
    for (const r of first.values()) {
      if (waiting.has(r.message_id)) continue;
      const lease = handoff.reserve(r.origin!, r.organisation_id, now);
      if (lease === null) continue;
      r.lease_until = lease;
      handed.push(r);
    }
    return handed;
  }
}

function reservations(rows: WebhookDeliveryRow[]): Array<{ origin: string; organisation: string }> {
  return rows.map((r) => ({ origin: r.origin!, organisation: r.organisation_id }));
}
