import { FairQueue, HIGH_LANE, type Lane, laneOf } from '../../domain/fair-queue.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { isFinal, type MessageStatus, type StatusDetail } from '../../domain/status.ts';
import type { Channel } from '../../store/channels.ts';
import type { Db, Dialect } from '../../store/db.ts';
import { type Claim, enqueueDispatch } from '../../store/dispatch.ts';
import type { LeasedQueue } from '../../store/queue.ts';
import type { EventConsumers, SettledMessage } from '../events.ts';
import { insertEvents, insertMessages, type MessageEventRow, type MessageRow } from '../../store/messages.ts';
import { RollupBatch } from '../../store/rollups.ts';
import { insertShortLinks, type ShortLinkRow } from '../../store/short-links.ts';
import { blacklistedAmong } from '../../store/blacklist.ts';
import { channelDailyAndMonthlyAmounts, organisationAmountSince } from '../../store/consumption.ts';
import { insertLedgerRows, type LedgerRow } from '../../store/ledger.ts';
import { debitBalance, debitBalanceIfCovered, findPayingSetupAndBalances, lockBalances } from '../../store/organisations.ts';
import { utcDay, utcMonthStart } from '../../domain/dates.ts';

/** A message validated and priced, waiting for the accept transaction to charge and store it. */
export interface PreparedMessage {
  row: MessageRow;
  channel: Channel;
  /** Price for the whole message in micro-euros (0 for free items). */
  price: number;
  /** Billed units (parts). */
  units: number;
  /** Set when the message is refused before any charge (e.g. an invalid number). */
  rejection: StatusDetail | null;
  /** Whether an opt-out blacklist applies (MARKETING channels). */
  checkBlacklist: boolean;
  /**
   * Accepted but already at its final status, free and never dispatched (an RCS message replaced by its fallback
   * SMS at send time).
   */
  settled?: { status: MessageStatus; detail: StatusDetail };
  /** Runs in the accept transaction once the message is stored (e.g. recording an idempotent answer). */
  afterInsert?: (db: Db, row: MessageRow) => Promise<void>;
  /** A charge the message shares with others: it costs `price` only when that charge is not paid yet. */
  sharedCharge?: SharedCharge;
  /** Sent outside the marketing window on purpose (the operator's exceptional case): goes when asked, recorded. */
  windowOverride?: boolean;
  /** The short links written into its text, stored with it. */
  shortLinks?: ShortLinkRow[];
}

/**
 * A charge several messages share (an RCS conversation's): the first of them charged pays it, the others are free.
 * Settled in the accept transaction, under a lock the charge's owner takes, so accepts running at once on any node
 * pay it once.
 */
export interface SharedCharge {
  key: string;
  /** In the accept transaction: locks the charge until the transaction ends and tells whether it is paid. */
  lockAndCheckPaid(db: Db): Promise<boolean>;
}

interface OrgState {
  id: string;
  parentId: string | null;
  parentBilling: boolean;
  monthlyLimit: number | null;
}

export function rollupKeyOf(m: MessageRow, channelType: string) {
  return {
    organisationId: m.organisation_id,
    channelId: m.channel_id,
    channelType,
    day: m.day,
    status: m.status,
    mccMnc: m.mcc_mnc ?? '',
    priceKind: m.price_kind ?? m.type,
  };
}

/**
 * Another node charged the same payer between this batch's read of the balance and its debit, and the balance no
 * longer covers the batch: run it again with the balance locked first (`lockBalancesFirst`).
 */
export class BalanceMovedError extends Error {
  constructor(readonly payer: string) {
    super(`the balance of ${payer} changed while a batch was being accepted`);
  }
}

/**
 * Charges and stores a batch of prepared messages in the caller's transaction: per message a status, a ledger
 * row when charged, an event, a rollup delta and a dispatch entry, with each payer's balance read once and
 * written once. Decisions are made in order, so the batch behaves exactly like the same sends one by one.
 *
 * On PostgreSQL a payer's balance row is where the nodes' accepts for one tenant meet. It is locked as late as it can
 * be: the balance is read without a lock, the decisions made on it, and the debit written near the end only if the
 * balance still covers it (else BalanceMovedError, and the caller runs the batch again locking it first) — so the
 * lock is held for the last few statements, not the whole transaction. Batches under spending limits (a channel's or
 * an organisation's), whose sums only the lock keeps exact across nodes, batches with shared charges, and
 * `lockBalancesFirst` lock it first.
 */
export async function acceptBatch(
  db: Db,
  dialect: Dialect,
  batch: PreparedMessage[],
  consumers: EventConsumers,
  dispatchQueue: LeasedQueue<unknown>,
  now: number,
  /**
   * When given, messages of the high lane due now are queued already claimed with it (their node's dispatcher takes
   * them in memory).
   */
  handoff: Claim | null = null,
  /** Ranks queued messages fairly between organisations. */
  fairness: FairQueue = new FairQueue(),
  lockBalancesFirst = false,
): Promise<MessageRow[]> {
  const orgIds = [...new Set(batch.map((p) => p.row.organisation_id))];
  // The balances as they are now come with the setup (one statement): the path that locks them reads them again.
  const { setup: orgRows, balances: balancesNow } = await findPayingSetupAndBalances(db, orgIds);
  const orgs = new Map<string, OrgState>(
    orgRows.map((o) => [o.id, { id: o.id, parentId: o.parent_id, parentBilling: o.parent_billing === 1, monthlyLimit: o.monthly_limit }]),
  );
  const payerOf = (orgId: string) => {
    const o = orgs.get(orgId);
    return o?.parentBilling && o.parentId ? o.parentId : orgId;
  };
  const payerIds = [...new Set(orgIds.map(payerOf))].sort();
  const limited =
    batch.some((p) => p.channel.dailyLimit !== null || p.channel.monthlyLimit !== null) || [...orgs.values()].some((o) => o.monthlyLimit !== null);
  // Shared charges (an RCS conversation's) are locked after the balances on the other path: same order here.
  const sharedCharges = batch.some((p) => p.sharedCharge !== undefined);
  // A message added to a campaign counts itself in the campaign's row (its afterInsert), which a change of the
  // campaign locks after the payer's balance: the balance first here too. (RCS and voice messages of a campaign,
  // whose afterInsert writes their conversation or audio, take this path as well: slower, never wrong.)
  const countsInCampaign = batch.some((p) => p.row.campaign_id !== null && p.afterInsert !== undefined);
  const lockFirst = dialect === 'sqlite' || lockBalancesFirst || limited || sharedCharges || countsInCampaign;
  const balances = lockFirst ? await lockBalances(db, dialect, payerIds) : balancesNow;
  const sharedPaid = await lockSharedCharges(db, batch);
  const spent = new Map<string, number>();

  const today = utcDay(now);
  const monthStart = utcMonthStart(now);
  const channelDaily = new Map<string, number>();
  const channelMonthly = new Map<string, number>();
  const orgMonthly = new Map<string, number>();
  const limitedChannels = [
    ...new Map(batch.filter((p) => p.channel.dailyLimit !== null || p.channel.monthlyLimit !== null).map((p) => [p.channel.id, p.channel])).values(),
  ];
  for (const c of limitedChannels) {
    const spent = await channelDailyAndMonthlyAmounts(db, c.id, today, monthStart);
    channelDaily.set(c.id, spent.daily);
    channelMonthly.set(c.id, spent.monthly);
  }
  for (const o of orgs.values()) {
    if (o.monthlyLimit === null) continue;
    orgMonthly.set(o.id, await organisationAmountSince(db, o.id, monthStart));
  }

  const blacklisted = new Set<string>();
  const toCheck = batch.filter((p) => p.checkBlacklist && p.rejection === null);
  for (const orgId of new Set(toCheck.map((p) => p.row.organisation_id))) {
    const numbers = [...new Set(toCheck.filter((p) => p.row.organisation_id === orgId).map((p) => p.row.recipient))];
    for (const msisdn of await blacklistedAmong(db, orgId, numbers)) blacklisted.add(`${orgId}|${msisdn}`);
  }

  const rollups = new RollupBatch();
  const events: MessageEventRow[] = [];
  const ledger: LedgerRow[] = [];
  const dispatch: Array<{ messageId: string; dueAt: number; lane: Lane; rank: number; lease?: Claim }> = [];
  const rows: MessageRow[] = [];

  for (const p of batch) {
    const m = p.row;
    const payer = payerOf(m.organisation_id);
    m.payer_id = payer;
    const org = orgs.get(m.organisation_id);
    const shared = p.sharedCharge?.key;
    const price = shared !== undefined && sharedPaid.get(shared) ? 0 : p.price;
    // Set either way: a transaction retried after a deadlock runs this again on the same rows.
    if (shared !== undefined) m.price = price;
    let detail: StatusDetail | null = p.rejection;
    if (detail === null && blacklisted.has(`${m.organisation_id}|${m.recipient}`)) detail = 'BLACKLISTED';
    if (detail === null && p.channel.dailyLimit !== null && (channelDaily.get(p.channel.id) ?? 0) + price > p.channel.dailyLimit) {
      detail = 'DAILY_LIMIT_EXCEEDED';
    }
    if (
      detail === null &&
      ((p.channel.monthlyLimit !== null && (channelMonthly.get(p.channel.id) ?? 0) + price > p.channel.monthlyLimit) ||
        (org?.monthlyLimit != null && (orgMonthly.get(m.organisation_id) ?? 0) + price > org.monthlyLimit))
    ) {
      detail = 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED';
    }
    const balance = balances.get(payer) ?? 0;
    if (detail === null && balance < price) detail = 'INSUFFICIENT_CREDIT';

    if (p.settled) {
      m.status = p.settled.status;
      m.status_detail = p.settled.detail;
      m.charged = 0;
    } else if (detail !== null) {
      m.status = 'UNDELIVERABLE';
      m.status_detail = detail;
      m.charged = 0;
    } else {
      // Set in both branches: a transaction retried after a deadlock runs this again on the same rows.
      m.status = m.send_at > now ? 'SCHEDULED' : 'ENROUTE';
      m.status_detail = null;
      m.charged = price;
      if (price > 0) {
        const after = balance - price;
        balances.set(payer, after);
        spent.set(payer, (spent.get(payer) ?? 0) + price);
        ledger.push({
          id: uuidv7(now),
          organisation_id: payer,
          amount: -price,
          balance_after: after,
          kind: 'CHARGE',
          reference: m.ref_client,
          description: `${m.type} message, ${p.units} unit${p.units === 1 ? '' : 's'}`,
          message_id: m.id,
          transfer_id: null,
          created_at: now,
        });
        channelDaily.set(p.channel.id, (channelDaily.get(p.channel.id) ?? 0) + price);
        channelMonthly.set(p.channel.id, (channelMonthly.get(p.channel.id) ?? 0) + price);
        orgMonthly.set(m.organisation_id, (orgMonthly.get(m.organisation_id) ?? 0) + price);
        if (shared !== undefined) sharedPaid.set(shared, true);
      }
    }
    m.status_at = now;
    m.accepted_at = now;
    m.day = utcDay(now);
    if (m.send_at < now) m.send_at = now;
    if (detail === null && !p.settled) {
      const lane = laneOf(p.channel.flow);
      const handed = handoff !== null && lane === HIGH_LANE && m.send_at <= now;
      dispatch.push({ messageId: m.id, dueAt: m.send_at, lane, rank: fairness.rank(m.organisation_id, m.send_at, now), ...(handed && { lease: handoff }) });
    }
    rows.push(m);
    rollups.add(rollupKeyOf(m, p.channel.type), m.charged > 0 ? p.units : 0, 1, m.charged);
    events.push({
      id: uuidv7(now),
      message_id: m.id,
      organisation_id: m.organisation_id,
      channel_id: m.channel_id,
      kind: 'ACCEPTED',
      status: m.status,
      detail: m.status_detail,
      at: now,
    });
  }

  await insertMessages(db, rows);
  const links = batch.flatMap((p) => p.shortLinks ?? []);
  if (links.length > 0) await insertShortLinks(db, links);
  if (lockFirst) {
    await insertLedgerRows(db, ledger);
    for (const [payer, amount] of spent) await debitBalance(db, payer, amount);
  }
  await insertEvents(db, events);
  if (dispatch.length > 0) {
    await enqueueDispatch(db, dispatch, now);
    // Messages handed to this node's dispatcher need nobody woken; the others are claimed by any node.
    if (dispatch.some((d) => d.lease === undefined)) await dispatchQueue.wake(db);
  }
  await rollups.write(db, now, lockFirst ? { balanceHeld: true } : { balanceAfter: true });
  for (const p of batch) if (p.afterInsert) await p.afterInsert(db, p.row);
  await consumers.run(db, events, new Map(rows.map((r) => [r.id, r])));
  if (consumers.counting) {
    const settled: SettledMessage[] = [];
    for (const p of batch)
      if (isFinal(p.row.status as MessageStatus)) settled.push({ type: p.channel.type, status: p.row.status as MessageStatus, afterSeconds: null });
    consumers.counted(
      db,
      batch.map((p) => p.channel.type),
      settled,
    );
  }
  if (!lockFirst) {
    // The debits come last: each locks its payer's balance row until the transaction ends, and every node's batches
    // for that payer queue behind it, so only the ledger rows follow them. In payer order like the locks taken first
    // elsewhere; each ledger row's balance is the one the debit leaves, counted back through the batch's charges, and
    // its id is made once the row is locked, so ledger ids follow the order balances changed in, as they do for every
    // other change of a balance.
    for (const payer of [...spent.keys()].sort()) {
      const amount = spent.get(payer)!;
      const after = await debitBalanceIfCovered(db, payer, amount);
      if (after === null) throw new BalanceMovedError(payer);
      let balance = after + amount;
      for (const l of ledger) {
        if (l.organisation_id !== payer) continue;
        balance += l.amount;
        l.balance_after = balance;
        l.id = uuidv7(now);
      }
    }
    await insertLedgerRows(db, ledger);
  }
  await rollups.raiseEpochs(db);
  return rows;
}

/** Locks the batch's shared charges in one order (so two batches cannot wait on each other) and reads which are paid. */
async function lockSharedCharges(db: Db, batch: PreparedMessage[]): Promise<Map<string, boolean>> {
  const charges = new Map<string, SharedCharge>();
  for (const p of batch) if (p.sharedCharge && !charges.has(p.sharedCharge.key)) charges.set(p.sharedCharge.key, p.sharedCharge);
  const paid = new Map<string, boolean>();
  for (const key of [...charges.keys()].sort()) paid.set(key, await charges.get(key)!.lockAndCheckPaid(db));
  return paid;
}
