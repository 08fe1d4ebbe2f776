import { sql } from 'kysely';
import { uuidv7 } from '../domain/ids.ts';
import type { MessageStatus, StatusDetail } from '../domain/status.ts';
import type { Channel } from '../../store/channels.ts';
import type { Db, Dialect } from '../../store/db.ts';
import { enqueueDispatch, insertEvents, insertMessages, type MessageEventRow, type MessageRow } from '../../store/messages.ts';
import { RollupBatch } from '../../store/rollups.ts';
import { utcDay, utcMonthStart } from '../domain/dates.ts';

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
}

export type EventHook = (db: Db, events: MessageEventRow[], messages: Map<string, MessageRow>) => Promise<void>;

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
 * Charges and stores a batch of prepared messages in the caller's transaction: per message a status, a ledger
 * row when charged, an event, a rollup delta and a dispatch entry, with each payer's balance read once and
 * written once. Decisions are made in order, so the batch behaves exactly like the same sends one by one.
 */
export async function acceptBatch(
  db: Db,
  dialect: Dialect,
  batch: PreparedMessage[],
  hooks: readonly EventHook[],
  now: number,
): Promise<MessageRow[]> {
  const orgIds = [...new Set(batch.map((p) => p.row.organisation_id))];
  const orgRows = await db
    .selectFrom('organisations')
    .select(['id', 'parent_id', 'parent_billing', 'monthly_limit'])
    .where('id', 'in', orgIds)
    .execute();
  const orgs = new Map<string, OrgState>(
    orgRows.map((o) => [o.id, { id: o.id, parentId: o.parent_id, parentBilling: o.parent_billing === 1, monthlyLimit: o.monthly_limit }]),
  );
  const payerOf = (orgId: string) => {
    const o = orgs.get(orgId);
    return o?.parentBilling && o.parentId ? o.parentId : orgId;
  };
  const payerIds = [...new Set(orgIds.map(payerOf))].sort();
  let balanceQuery = db.selectFrom('organisations').select(['id', 'balance']).where('id', 'in', payerIds).orderBy('id');
  // NO KEY UPDATE: enough to serialise balance changes, and it does not conflict with the key-share locks that
  // foreign-key checks of sub-organisation rows take on their parent.
  if (dialect === 'postgres') balanceQuery = balanceQuery.forNoKeyUpdate();
  const balances = new Map((await balanceQuery.execute()).map((r) => [r.id, Number(r.balance)]));
  const spent = new Map<string, number>();

  const today = utcDay(now);
  const monthStart = utcMonthStart(now);
  const channelDaily = new Map<string, number>();
  const channelMonthly = new Map<string, number>();
  const orgMonthly = new Map<string, number>();
  const limitedChannels = [...new Map(batch.filter((p) => p.channel.dailyLimit !== null || p.channel.monthlyLimit !== null).map((p) => [p.channel.id, p.channel])).values()];
  for (const c of limitedChannels) {
    const r = await db
      .selectFrom('consumption_rollups')
      .select([
        sql<number>`coalesce(sum(case when day = ${today} then amount else 0 end), 0)`.as('daily'),
        sql<number>`coalesce(sum(amount), 0)`.as('monthly'),
      ])
      .where('channel_id', '=', c.id)
      .where('day', '>=', monthStart)
      .executeTakeFirst();
    channelDaily.set(c.id, Number(r?.daily ?? 0));
    channelMonthly.set(c.id, Number(r?.monthly ?? 0));
  }
  for (const o of orgs.values()) {
    if (o.monthlyLimit === null) continue;
    const r = await db
      .selectFrom('consumption_rollups')
      .select(sql<number>`coalesce(sum(amount), 0)`.as('monthly'))
      .where('organisation_id', '=', o.id)
      .where('day', '>=', monthStart)
      .executeTakeFirst();
    orgMonthly.set(o.id, Number(r?.monthly ?? 0));
  }

  const blacklisted = new Set<string>();
  const toCheck = batch.filter((p) => p.checkBlacklist && p.rejection === null);
  for (const orgId of new Set(toCheck.map((p) => p.row.organisation_id))) {
    const numbers = [...new Set(toCheck.filter((p) => p.row.organisation_id === orgId).map((p) => p.row.recipient))];
    const rows = await db
      .selectFrom('blacklist')
      .select('msisdn')
      .where('organisation_id', '=', orgId)
      .where('msisdn', 'in', numbers)
      .execute();
    for (const r of rows) blacklisted.add(`${orgId}|${r.msisdn}`);
  }

  const rollups = new RollupBatch();
  const events: MessageEventRow[] = [];
  const ledger: Array<Record<string, unknown>> = [];
  const dispatch: Array<{ messageId: string; dueAt: number }> = [];
  const rows: MessageRow[] = [];

  for (const p of batch) {
    const m = p.row;
    const payer = payerOf(m.organisation_id);
    m.payer_id = payer;
    const org = orgs.get(m.organisation_id);
    let detail: StatusDetail | null = p.rejection;
    if (detail === null && blacklisted.has(`${m.organisation_id}|${m.recipient}`)) detail = 'BLACKLISTED';
    if (detail === null && p.channel.dailyLimit !== null && (channelDaily.get(p.channel.id) ?? 0) + p.price > p.channel.dailyLimit) {
      detail = 'DAILY_LIMIT_EXCEEDED';
    }
    if (
      detail === null &&
      ((p.channel.monthlyLimit !== null && (channelMonthly.get(p.channel.id) ?? 0) + p.price > p.channel.monthlyLimit) ||
        (org?.monthlyLimit != null && (orgMonthly.get(m.organisation_id) ?? 0) + p.price > org.monthlyLimit))
    ) {
      detail = 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED';
    }
    const balance = balances.get(payer) ?? 0;
    if (detail === null && balance < p.price) detail = 'INSUFFICIENT_CREDIT';

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
      m.charged = p.price;
      if (p.price > 0) {
        const after = balance - p.price;
        balances.set(payer, after);
        spent.set(payer, (spent.get(payer) ?? 0) + p.price);
        ledger.push({
          id: uuidv7(now),
          organisation_id: payer,
          amount: -p.price,
          balance_after: after,
          kind: 'CHARGE',
          reference: m.ref_client,
          description: `${m.type} message, ${p.units} unit${p.units === 1 ? '' : 's'}`,
          message_id: m.id,
          transfer_id: null,
          created_at: now,
        });
        channelDaily.set(p.channel.id, (channelDaily.get(p.channel.id) ?? 0) + p.price);
        channelMonthly.set(p.channel.id, (channelMonthly.get(p.channel.id) ?? 0) + p.price);
        orgMonthly.set(m.organisation_id, (orgMonthly.get(m.organisation_id) ?? 0) + p.price);
      }
    }
    m.status_at = now;
    m.accepted_at = now;
    m.day = utcDay(now);
    if (m.send_at < now) m.send_at = now;
    if (detail === null && !p.settled) dispatch.push({ messageId: m.id, dueAt: m.send_at });
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
  for (let i = 0; i < ledger.length; i += 400) {
    await db.insertInto('ledger').values(ledger.slice(i, i + 400) as never).execute();
  }
  for (const [payer, amount] of spent) {
    await db
      .updateTable('organisations')
      .set({ balance: sql<number>`balance - ${amount}` })
      .where('id', '=', payer)
      .execute();
  }
  await insertEvents(db, events);
  await enqueueDispatch(db, dispatch);
  await rollups.write(db);
  for (const p of batch) if (p.afterInsert) await p.afterInsert(db, p.row);
  if (hooks.length > 0) {
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const hook of hooks) await hook(db, events, byId);
  }
  return rows;
}
