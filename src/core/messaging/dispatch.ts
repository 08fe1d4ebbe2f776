import { sql } from 'kysely';
import { HIGH_LANE, type Lane, LOW_LANE, lowLaneReserve, toLane } from '../../domain/fair-queue.ts';
import { backoffDelay } from '../../domain/retry.ts';
import { utcDay } from '../../domain/dates.ts';
import { fenced, isFenced, type OutboundMessage, type RouteChoice, type RoutedMoney, type Router, type SubmitFence, type SubmitResult } from '../ports.ts';
import type { Store } from '../../store/db.ts';
import {
  type Claim,
  type DispatchClaim,
  type DispatchOutcomes,
  promoteDueDispatch,
  recordDispatch,
  releaseClaim,
  releaseWaiting,
} from '../../store/dispatch.ts';
import type { MessageRow } from '../../store/messages.ts';
import { connectorsTried } from '../../store/attempts.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { ClaimHold } from './claim-hold.ts';
import type { StatusChange } from './status.ts';
import type { MessagingService } from './service.ts';
import { groupBy } from '../../domain/group-by.ts';
import type { RoutableMessage } from '../../domain/routing.ts';
import type { Channel } from '../../store/channels.ts';
import type { LiveStatus } from '../lookup/number-status.ts';
import { mapWithConcurrency } from '../lookup/service.ts';

/**
 * Messages a claim takes at most. A pass over them runs on the thread that answers requests, so it is kept to a few
 * milliseconds: a campaign's backlog goes by many short passes, with OTPs and requests seen to in between.
 */
const DEFAULT_BATCH = 100;

/** How soon a message whose connector runs only on other nodes is offered again. */
const ELSEWHERE_RETRY_MS = 1_000;

/** What dispatch asks of lookups: the network numbers are on now, and the live lookup a route asks for before a send. */
export interface DispatchLookups {
  knownNetworks(msisdns: readonly string[], now: number): Promise<Map<string, { currentMccMnc: string | null }>>;
  beforeSend(channel: Channel, msisdn: string, now: number): Promise<LiveStatus | null>;
}

/** Live lookups before sends made at once in a pass, at most. */
const LOOKUP_BEFORE_SEND_CONCURRENCY = 16;

export interface DispatchOptions {
  nodeId: string;
  /**
   * Lookups: messages are routed by the network their number is on now when a live lookup found it (ported numbers),
   * and routes may ask for a live lookup before each send.
   */
  lookups?: DispatchLookups;
  /** Messages a claim takes at most (100). */
  batchSize?: number;
  leaseMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Told how many messages a pass took over from a claim that ran out (each may have reached an operator twice). */
  onTakenOver?: (count: number) => void;
  /** Per-type handling of messages whose validity ended in the queue (RCS falls back to SMS); returns handled ids. */
  onExpired?: (rows: Array<{ id: string; type: string }>, now: number) => Promise<Set<string>>;
  /**
   * Told, once recorded, where messages were placed (receipts that came first can be applied), and until when each is
   * valid (it expires then, if no receipt came).
   */
  onPlaced?: (placements: Array<{ connector: string; upstreamId: string; validityUntil: number | null }>) => Promise<void>;
  /**
   * Told how many claimed messages were not sent because the claim ran out first (`before`: another node sends
   * them), and how many were sent but will be sent again (`after`: their outcome could not be recorded because the
   * claim ran out meanwhile, and the new owner sends them; or the connector got no answer, so whether the operator
   * took them is unknown): an operator that does not deduplicate gets them twice.
   */
  onFenced?: (when: 'before' | 'after', count: number) => void;
}

/** A pass's messages: their claims, and which are gone, expired, due, with the outcomes of the due ones. */
interface PassState {
  claims: Map<string, DispatchClaim>;
  gone: DispatchClaim[];
  expired: MessageRow[];
  due: MessageRow[];
  outcomes: Map<string, Outcome>;
}

/** How one message's dispatch ended: where it went (or was to go) and what the connector said. */
interface Outcome {
  route: string | null;
  costPerPart: number | null;
  connector: string | null;
  result: SubmitResult;
}

export interface DispatchLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Moves due messages to operators: claims a batch with a lease (another node takes it over if this one dies),
 * routes each message, submits it to its route's connectors — on a temporary error to the next one of the route —
 * and records every outcome in one transaction, writing only rows this claim still holds. A message whose
 * connectors are all down or throttled waits; temporary errors are retried with backoff until the message's
 * validity ends; permanent ones end UNDELIVERABLE and are refunded.
 */
export class Dispatch {
  readonly queue: LeasedQueue<DispatchClaim>;
  readonly batchSize: number;
  private readonly leaseMs: number;
  /** The earliest time messages this node put back to wait fall due, as the other nodes were last told. */
  private announcedDue = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly router: Router,
    private readonly logger: DispatchLogger,
    private readonly opts: DispatchOptions,
  ) {
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.queue = new LeasedQueue<DispatchClaim>(store, DISPATCH_QUEUE);
  }

  /** When the next queued message falls due (null: nothing queued). */
  nextDue(now: number): Promise<number | null> {
    return this.queue.nextDue(now);
  }

  /** One claim–submit–record cycle; returns how many messages it claimed. */
  async pass(now: number): Promise<number> {
    const claimed = await this.claim(now);
    if (claimed.length > 0) await this.process(claimed, now);
    return claimed.length;
  }

  /**
   * Claims what `nodes` held and no longer hold (their leases ran out: they stopped), and dispatches it; returns how
   * many messages it claimed. Only theirs: this node's own passes may be held up by the same stalled node, and what
   * they hold is not to be sent twice.
   */
  async takeOver(nodes: string[], now: number): Promise<number> {
    if (nodes.length === 0) return 0;
    const claimed = await this.queue.claim({
      now,
      limit: this.batchSize,
      leaseMs: this.leaseMs,
      claimant: this.opts.nodeId,
      where: sql`claimed_by in (${sql.join(nodes)})`,
    });
    if (claimed.length > 0)
      await this.process(
        [...claimed].sort((a, b) => a.lane - b.lane || a.rank - b.rank),
        now,
      );
    return claimed.length;
  }

  /** Gives back claimed messages this node will not dispatch after all (it is stopping). */
  async release(claim: Claim, messageIds: string[]): Promise<void> {
    await releaseClaim(this.store.db, claim, messageIds);
    await this.queue.wake(this.store.db);
  }

  /**
   * Claims a batch of due messages for this node (a lease): the high lane first (OTP, TRANSACTIONAL), leaving a share
   * of the batch to the low lane (MARKETING) so it never starves; each lane in rank order, fair between organisations.
   */
  async claim(now: number): Promise<DispatchClaim[]> {
    await promoteDueDispatch(this.store.db, this.store.dialect, now);
    // The ready rows alone (`waiting = 0`, their own index in rank order): the waiting ones were made ready above if due.
    const take = (lane: Lane, limit: number) =>
      limit <= 0
        ? Promise.resolve([])
        : this.queue.claim({ now, limit, leaseMs: this.leaseMs, claimant: this.opts.nodeId, where: sql`lane = ${lane} and waiting = 0` });
    const reserve = lowLaneReserve(this.batchSize);
    const high = await take(HIGH_LANE, this.batchSize - reserve);
    const low = await take(LOW_LANE, this.batchSize - high.length);
    const more = high.length === this.batchSize - reserve && low.length < reserve ? await take(HIGH_LANE, reserve - low.length) : [];
    // An UPDATE … RETURNING answers rows in no particular order: put them back in rank order, lane by lane.
    const byRank = (a: DispatchClaim, b: DispatchClaim) => a.rank - b.rank;
    return [...[...high, ...more].sort(byRank), ...low.sort(byRank)];
  }

  /**
   * Submits a claimed batch and records every outcome; `known`: the messages' rows when the caller has them. The
   * batch is held under its claim (see ClaimHold) from before the first submit until its outcomes are written.
   */
  async process(claimed: DispatchClaim[], now: number, known?: MessageRow[]): Promise<void> {
    if (claimed.length === 0) return;
    const hold = new ClaimHold(
      this.store,
      this.opts.nodeId,
      claimed.map((c) => ({ messageId: c.message_id, leaseUntil: c.lease_until! })),
      this.leaseMs,
    );
    await hold.begin();
    let outcomes: Map<string, Outcome>;
    let pass: Omit<PassState, 'outcomes'>;
    try {
      const held = new Set(hold.held());
      if (held.size < claimed.length) this.opts.onFenced?.('before', claimed.length - held.size);
      if (held.size === 0) return;
      pass = await this.prepare(
        claimed.filter((c) => held.has(c.message_id)),
        now,
        known,
      );
      outcomes = await this.submitAll(pass.due, pass.claims, hold);
    } finally {
      await hold.end();
    }
    await this.record({ ...pass, outcomes }, hold, now);
  }

  /** The claimed messages still on their way, read and sorted: gone (final or deleted), expired, due. */
  private async prepare(claimed: DispatchClaim[], now: number, known?: MessageRow[]): Promise<Omit<PassState, 'outcomes'>> {
    const takenOver = claimed.filter((c) => c.previous_claimant !== null).length;
    if (takenOver > 0) this.opts.onTakenOver?.(takenOver);
    const claims = new Map(claimed.map((c) => [c.message_id, c]));
    const rows = known ?? (await this.messaging.getMany([...claims.keys()]));
    const byId = new Map(rows.map((r) => [r.id, r]));

    const gone = claimed.filter((c) => {
      const m = byId.get(c.message_id);
      return !m || (m.status !== 'SCHEDULED' && m.status !== 'ENROUTE');
    });
    // In the claim's order (lanes, then ranks): a connector with a rate to share gives it to the first ones.
    const live = claimed
      .map((c) => byId.get(c.message_id))
      .filter((m): m is MessageRow => m !== undefined && (m.status === 'SCHEDULED' || m.status === 'ENROUTE'));
    const expired = live.filter((m) => m.validity_until !== null && m.validity_until <= now);
    const due = live.filter((m) => !(m.validity_until !== null && m.validity_until <= now));

    const scheduled = due.filter((m) => m.status === 'SCHEDULED');
    if (scheduled.length > 0) {
      await this.messaging.applyStatusNow(scheduled.map((m) => ({ messageId: m.id, status: 'ENROUTE' as const, at: now })));
    }
    return { claims, gone, expired, due };
  }

  /** Writes a pass's outcomes under its claim, where the claim still holds them. */
  private async record({ claims, gone, expired, due, outcomes }: PassState, hold: ClaimHold, now: number): Promise<void> {
    const handledExpiry = expired.length > 0 && this.opts.onExpired ? await this.opts.onExpired(expired, now) : new Set<string>();
    const changes: StatusChange[] = expired
      .filter((m) => !handledExpiry.has(m.id))
      .map((m) => ({
        messageId: m.id,
        status: 'UNDELIVERED',
        detail: 'EXPIRED',
        at: now,
        refund: true,
      }));
    const submitted: DispatchOutcomes['submitted'] = [];
    const retries: DispatchOutcomes['retries'] = [];
    const waitingForUp = new Set<string>();
    const done = new Set<string>([...gone.map((g) => g.message_id), ...expired.map((m) => m.id)]);
    let withheld = 0;
    for (const m of due) {
      const o = outcomes.get(m.id)!;
      if (isFenced(o.result)) withheld++;
      if (o.result.ok) {
        // Fair turns advance with what is sent, not with what was claimed and put back to wait.
        this.messaging.dispatchOrder.served(claims.get(m.id)!.rank);
        // Placed before (a call tried again, a delivery that failed re-routed): charged once, with its first placement.
        const again = m.upstream_id !== null;
        submitted.push({
          id: m.id,
          upstreamId: o.result.upstreamId,
          connector: o.connector!,
          route: o.route!,
          parts: m.part_count,
          cost: o.costPerPart === null ? null : o.costPerPart * m.part_count,
          charged: again ? 0 : m.charged,
          chargedOnce: m.charged,
          day: utcDay(now),
          organisationId: m.organisation_id,
          country: m.country ?? '',
          ...(again && { again }),
          attempt: m.attempts + 1,
          placedAt: now,
          network: m.mcc_mnc ?? m.country ?? '',
        });
        done.add(m.id);
      } else if (o.result.temporary) {
        // A connector that knows when to try again (its rate window ends) says so; otherwise back off.
        const attempts = claims.get(m.id)?.attempts ?? 0;
        const n = o.result.retryAt !== undefined ? attempts : attempts + 1;
        const dueAt = o.result.retryAt ?? now + backoffDelay(n, this.opts.retryBaseMs ?? 1_000, this.opts.retryMaxMs ?? 300_000);
        if (m.validity_until !== null && dueAt > m.validity_until) {
          changes.push({ messageId: m.id, status: 'UNDELIVERED', detail: 'EXPIRED', at: now, refund: true });
          done.add(m.id);
        } else {
          retries.push({ id: m.id, dueAt, attempts: n, waitingOn: o.connector });
          if (o.result.code === 'NO_CONNECTOR_UP' && o.connector !== null) waitingForUp.add(o.connector);
        }
      } else {
        changes.push({
          messageId: m.id,
          status: 'UNDELIVERABLE',
          detail: o.result.detail ?? (o.result.code === 'NOT_ROUTABLE' ? 'NOT_ROUTABLE' : o.result.code === 'ROUTE_AT_LOSS' ? 'ROUTE_AT_LOSS' : 'REJECTED'),
          at: now,
          refund: true,
        });
        done.add(m.id);
      }
    }
    // One claim per pass: every row of it is leased by this node until the same instant. The final statuses are
    // written in the same transaction, for the messages the claim still held.
    const held = await recordDispatch(this.store, hold.claim, { submitted, retries, done: [...done] }, async (trx, stillHeld) => {
      const mine = changes.filter((c) => stillHeld.has(c.messageId));
      if (mine.length > 0) await this.messaging.applyStatusIn(trx, mine);
    });
    // Not sent because the claim ran out while the pass waited (the dispatcher's look before a submit, or the
    // connector's right before the wire): withheld like those found lost at the start of the pass.
    if (withheld > 0) this.opts.onFenced?.('before', withheld);
    const unrecorded = submitted.filter((p) => !held.has(p.id)).length;
    if (unrecorded > 0) {
      this.opts.onFenced?.('after', unrecorded);
      this.logger.warn({ count: unrecorded }, 'messages sent while this node’s claim of them ran out: their new owner sends them again');
    }
    if (submitted.length > 0 && this.opts.onPlaced) {
      const validity = new Map(due.map((m) => [m.id, m.validity_until]));
      const placements = submitted.map((p) => ({ connector: p.connector, upstreamId: p.upstreamId, validityUntil: validity.get(p.id) ?? null }));
      await this.opts
        .onPlaced(placements)
        .catch((err: unknown) => this.logger.warn({ err }, 'receipts that came before their placement was recorded wait for their next retry'));
    }
    // A connector that came back while this pass ran released only the messages no claim held: release the ones this
    // pass has just put back to wait for it, or they would sit out their backoff with their connector up.
    let released = 0;
    for (const name of waitingForUp) {
      if (this.router.state(name)?.state === 'UP') released += await releaseWaiting(this.store.db, name, Date.now());
    }
    // Messages put back to wait, or left to the nodes that hold their connector's binds: every node looks at when they
    // are due, so whichever is free then sends them. Nodes told of an earlier time, still to come, find these when
    // they look again then.
    const retryAt = Math.min(...retries.map((r) => r.dueAt));
    const announce = retries.length > 0 && (retryAt < this.announcedDue || this.announcedDue <= Date.now());
    if (announce) this.announcedDue = retryAt;
    if (released > 0 || announce) await this.queue.wake(this.store.db);
  }

  /**
   * Submits each message to the first connector its route offers, and what comes back with a temporary error to the
   * next one, until one takes it or none is left. A message with no route at all is refused (NOT_ROUTABLE); one whose
   * route has no connector up waits.
   */
  private async submitAll(due: MessageRow[], claims: Map<string, DispatchClaim>, fence: SubmitFence): Promise<Map<string, Outcome>> {
    const outcomes = new Map<string, Outcome>();
    const plans = new Map<string, { choice: RouteChoice; flow: string }>();
    const lookups = this.opts.lookups;
    // One read for the pass, and only when some route cares which network a number is on.
    const known =
      lookups && this.router.usesNumberNetworks?.()
        ? await lookups.knownNetworks(
            due.map((m) => m.recipient),
            Date.now(),
          )
        : null;
    // An SMS placed before is being re-routed after a failed delivery: not through a connector it was placed with.
    const again = due.filter((m) => m.type === 'SMS' && m.upstream_id !== null).map((m) => m.id);
    const tried = again.length > 0 ? await connectorsTried(this.store.db, again) : new Map<string, Set<string>>();
    const placedOn = (m: MessageRow) => tried.get(m.id);
    const routed = new Map<string, { routable: RoutableMessage; channel: Channel; choice: RouteChoice }>();
    for (const m of due) {
      const channel = await this.messaging.channel(m.channel_id);
      const routable: RoutableMessage = {
        type: m.type,
        recipient: m.recipient,
        channelId: m.channel_id,
        organisationId: m.organisation_id,
        flow: channel.flow,
        country: m.country,
        // The network a live lookup found the number on (it may have been ported), else its range's.
        mccMnc: known?.get(m.recipient)?.currentMccMnc ?? m.mcc_mnc,
      };
      routed.set(m.id, { routable, channel, choice: this.router.route(routable, moneyOf(m), placedOn(m)) });
    }
    // A route's lookup before the send, on the message's first attempt only (a retry routes on what it found).
    const toLookUp = lookups ? due.filter((m) => routed.get(m.id)!.choice.lookupBeforeSend && (claims.get(m.id)?.attempts ?? 0) === 0) : [];
    const found = await mapWithConcurrency(toLookUp, LOOKUP_BEFORE_SEND_CONCURRENCY, (m) =>
      lookups!.beforeSend(routed.get(m.id)!.channel, m.recipient, Date.now()).catch((err: unknown) => {
        this.logger.warn({ err, messageId: m.id }, 'the lookup before sending failed; the message goes as routed');
        return null;
      }),
    );
    const refused = new Set<string>();
    toLookUp.forEach((m, i) => {
      const live = found[i];
      const r = routed.get(m.id)!;
      if (!live) return;
      const end = (detail: string, reason: string) => {
        refused.add(m.id);
        outcomes.set(m.id, {
          route: r.choice.route,
          costPerPart: r.choice.costPerPart,
          connector: null,
          result: { ok: false, temporary: false, code: 'LOOKUP_REFUSED', reason, detail },
        });
      };
      if (live.valid === false) return end('INVALID_PHONE_NUMBER', 'the lookup before sending found no subscriber for this number');
      if (live.reachable === false) return end('ABSENT_SUBSCRIBER', 'the lookup before sending found the subscriber absent or barred');
      const now = live.currentNetwork?.mccMnc ?? null;
      if (now !== null && now !== r.routable.mccMnc) {
        r.routable = { ...r.routable, mccMnc: now };
        r.choice = this.router.route(r.routable, moneyOf(m), placedOn(m));
      }
    });
    for (const m of due) {
      if (refused.has(m.id)) continue;
      const { choice, channel } = routed.get(m.id)!;
      if (choice.refused) {
        outcomes.set(m.id, {
          route: choice.route,
          costPerPart: choice.costPerPart,
          connector: null,
          result: { ok: false, temporary: false, code: 'ROUTE_AT_LOSS', reason: choice.refused },
        });
      } else if (choice.route === null) {
        outcomes.set(m.id, {
          route: null,
          costPerPart: null,
          connector: null,
          result: { ok: false, temporary: false, code: 'NOT_ROUTABLE', reason: 'no route to this destination' },
        });
      } else if (choice.elsewhere !== null) {
        // Its connector runs on other nodes only: left to them, soon, without counting it as a failed attempt.
        outcomes.set(m.id, {
          route: choice.route,
          costPerPart: choice.costPerPart,
          connector: choice.elsewhere,
          result: { ok: false, temporary: true, code: 'ELSEWHERE', reason: 'its connector is bound on other nodes', retryAt: Date.now() + ELSEWHERE_RETRY_MS },
        });
      } else if (choice.candidates.length === 0) {
        outcomes.set(m.id, {
          route: choice.route,
          costPerPart: choice.costPerPart,
          connector: choice.names[0] ?? null,
          result: { ok: false, temporary: true, code: 'NO_CONNECTOR_UP', reason: `no connector of route ${choice.route} is up` },
        });
      } else {
        plans.set(m.id, { choice, flow: channel.flow });
      }
    }
    let pending = due.filter((m) => plans.has(m.id));
    for (let step = 0; pending.length > 0; step++) {
      const groups = groupBy(pending, (m) => plans.get(m.id)!.choice.candidates[step]!);
      await Promise.all(
        [...groups].map(async ([connector, group]) => {
          // Not handed to a connector at all once the claim is lost; the connector asks again before sending.
          for (const m of group) if (!fence.holds(m.id)) outcomes.set(m.id, { route: null, costPerPart: null, connector: connector.name, result: fenced() });
          const list = group.filter((m) => fence.holds(m.id));
          if (list.length === 0) return;
          let out: SubmitResult[];
          try {
            out = await connector.submit(
              list.map((m) => toOutbound(m, toLane(claims.get(m.id)?.lane ?? HIGH_LANE), plans.get(m.id)!.flow)),
              fence,
            );
          } catch (err) {
            // A submit that threw may have gone out before it did (the simulator's placement written, its answer
            // lost with a database connection): what comes of it next may reach the operator twice.
            this.logger.warn({ err, connector: connector.name }, 'connector submit failed');
            out = list.map(() => ({
              ok: false as const,
              temporary: true,
              code: 'CONNECTOR_ERROR',
              reason: (err as Error).message,
              outcomeUnknown: true as const,
            }));
          }
          // Sent with no answer (a connection lost with the submit in its window, an answer that timed out): whatever
          // comes of it next — the next connector of its route, or a retry — the operator may get it twice, as it
          // may a message sent while its claim ran out.
          const repeats = out.filter((r) => !r.ok && r.outcomeUnknown).length;
          if (repeats > 0) this.opts.onFenced?.('after', repeats);
          list.forEach((m, i) => {
            const { choice } = plans.get(m.id)!;
            outcomes.set(m.id, { route: choice.route, costPerPart: choice.costs?.get(connector.name) ?? null, connector: connector.name, result: out[i]! });
          });
        }),
      );
      pending = pending.filter((m) => {
        const r = outcomes.get(m.id)!.result;
        return !r.ok && r.temporary && plans.get(m.id)!.choice.candidates.length > step + 1;
      });
    }
    return outcomes;
  }
}

/** What routing weighs a message's cost against: its parts and what was charged for it, now. */
function moneyOf(m: MessageRow): RoutedMoney {
  return { parts: m.part_count, charged: m.charged, at: Date.now() };
}

export function toOutbound(m: MessageRow, lane: Lane, flow?: string): OutboundMessage {
  return {
    id: m.id,
    type: m.type,
    channelId: m.channel_id,
    organisationId: m.organisation_id,
    recipient: m.recipient,
    sender: m.sender,
    body: JSON.parse(m.body) as Record<string, unknown>,
    validityUntil: m.validity_until,
    registeredDelivery: m.registered_delivery,
    attempt: m.attempts + 1,
    lane,
    ...(flow !== undefined && { flow }),
  };
}
