import { sql } from 'kysely';
import type { Db } from './db.ts';

/** Which rollup rows a consumption query reads. Days are `YYYY-MM-DD`, both ends included. */
export interface RollupScope {
  organisationId: string;
  /** null: every channel of the organisation. */
  channelIds: string[] | null;
  channelType: string;
  from: string;
  to: string;
}

/** DAY periods are keyed by the day, MONTH periods by `YYYY-MM`: a prefix of the day column on both dialects. */
export type PeriodKeyLength = 10 | 7;

export interface PeriodTotal {
  channelId: string;
  period: string;
  quantity: number;
  messages: number;
  amount: number;
}

export interface PeriodBreakdown extends PeriodTotal {
  mccMnc: string;
  status: string;
  /** SMS, LOOKUP, VOICE; RCS: BASIC, SINGLE or CONVERSATION. */
  priceKind: string;
}

function scoped(db: Db, scope: RollupScope) {
  let q = db
    .selectFrom('consumption_rollups')
    .where('organisation_id', '=', scope.organisationId)
    .where('channel_type', '=', scope.channelType)
    .where('day', '>=', scope.from)
    .where('day', '<=', scope.to);
  if (scope.channelIds) q = q.where('channel_id', 'in', scope.channelIds);
  return q;
}

const periodOf = (length: PeriodKeyLength) => sql<string>`substr(day, 1, ${sql.lit(length)})`;

/** One row per (channel, period) that has anything, newest period first, then by channel id. */
export async function periodTotals(db: Db, scope: RollupScope, length: PeriodKeyLength, page: { offset: number; limit: number }): Promise<PeriodTotal[]> {
  if (scope.channelIds?.length === 0) return [];
  const period = periodOf(length);
  const rows = await scoped(db, scope)
    .select([
      'channel_id',
      period.as('period'),
      sql<number>`sum(quantity)`.as('quantity'),
      sql<number>`sum(messages)`.as('messages'),
      sql<number>`sum(amount)`.as('amount'),
    ])
    .groupBy(['channel_id', period])
    .having(sql<boolean>`sum(messages) <> 0 or sum(quantity) <> 0 or sum(amount) <> 0`)
    .orderBy(period, 'desc')
    .orderBy('channel_id')
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  return rows.map((r) => ({
    channelId: r.channel_id,
    period: r.period,
    quantity: Number(r.quantity),
    messages: Number(r.messages),
    amount: Number(r.amount),
  }));
}

/** The same totals broken down by network, status and price kind; at most `limit` rows when given. */
export async function periodBreakdown(db: Db, scope: RollupScope, length: PeriodKeyLength, limit?: number): Promise<PeriodBreakdown[]> {
  if (scope.channelIds?.length === 0 || scope.from > scope.to) return [];
  const period = periodOf(length);
  const rows = await scoped(db, scope)
    .select([
      'channel_id',
      period.as('period'),
      'mcc_mnc',
      'status',
      'price_kind',
      sql<number>`sum(quantity)`.as('quantity'),
      sql<number>`sum(messages)`.as('messages'),
      sql<number>`sum(amount)`.as('amount'),
    ])
    .groupBy(['channel_id', period, 'mcc_mnc', 'status', 'price_kind'])
    .$if(limit !== undefined, (q) => q.limit(limit!))
    .execute();
  return rows.map((r) => ({
    channelId: r.channel_id,
    period: r.period,
    mccMnc: r.mcc_mnc,
    status: r.status,
    priceKind: r.price_kind,
    quantity: Number(r.quantity),
    messages: Number(r.messages),
    amount: Number(r.amount),
  }));
}

/** The days and types a channel has rollups for: bounded by the calendar, not by the traffic. */
export async function channelRollupDays(db: Db, channelId: string): Promise<Array<{ day: string; channelType: string }>> {
  const rows = await db.selectFrom('consumption_rollups').select(['day', 'channel_type']).distinct().where('channel_id', '=', channelId).execute();
  return rows.map((r) => ({ day: r.day, channelType: r.channel_type }));
}

/** A channel's charged amounts (net of refunds) on `today` and from `monthStart` on. */
export async function channelDailyAndMonthlyAmounts(db: Db, channelId: string, today: string, monthStart: string): Promise<{ daily: number; monthly: number }> {
  const row = await db
    .selectFrom('consumption_rollups')
    .select([sql<number>`coalesce(sum(case when day = ${today} then amount else 0 end), 0)`.as('daily'), sql<number>`coalesce(sum(amount), 0)`.as('monthly')])
    .where('channel_id', '=', channelId)
    .where('day', '>=', monthStart)
    .executeTakeFirst();
  return { daily: Number(row?.daily ?? 0), monthly: Number(row?.monthly ?? 0) };
}

/** An organisation's charged amount (net of refunds), every channel, from `monthStart` on. */
export async function organisationAmountSince(db: Db, organisationId: string, monthStart: string): Promise<number> {
  const row = await db
    .selectFrom('consumption_rollups')
    .select(sql<number>`coalesce(sum(amount), 0)`.as('monthly'))
    .where('organisation_id', '=', organisationId)
    .where('day', '>=', monthStart)
    .executeTakeFirst();
  return Number(row?.monthly ?? 0);
}
