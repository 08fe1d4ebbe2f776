import { Cache } from '../cache.ts';
import {
  addDays,
  type ConsumptionType,
  consumptionId,
  coveredDays,
  lastSettledDay,
  periodEnd,
  periodStart,
  type PeriodType,
} from '../../domain/consumption-periods.ts';
import type { NetworkLookup } from '../lookup/enrich.ts';
import { networkByMccMnc } from '../lookup/network-names.ts';
import { type Channel, listChannels } from '../../store/channels.ts';
import {
  channelRollupDays,
  type PeriodBreakdown,
  type PeriodKeyLength,
  type PeriodTotal,
  periodBreakdown,
  periodTotals,
  type RollupScope,
} from '../../store/consumption.ts';
import type { Store } from '../../store/db.ts';
import { consumptionEpoch } from '../../store/rollups.ts';
import { countClicksByChannel } from '../../store/short-links.ts';

export interface ConsumptionQuery {
  organisationId: string;
  /** null: every channel of the organisation. */
  channelIds: string[] | null;
  type: ConsumptionType;
  periodType: PeriodType;
  /** `YYYY-MM-DD`; every period overlapping [startDate, endDate] is returned whole. */
  startDate: string;
  endDate: string;
  offset: number;
  limit: number;
}

export interface ConsumptionItem {
  lookup: NetworkLookup;
  /** Billed units. */
  quantity: number;
  /** Micro-euros. */
  amount: number;
  /** Messages per status. */
  statuses: Array<{ value: string; quantity: number }>;
}

export interface ConsumptionRecord {
  consumptionId: string;
  type: ConsumptionType;
  periodType: PeriodType;
  startDate: string;
  endDate: string;
  quantity: number;
  /** Micro-euros, net of refunds. */
  amount: number;
  messages: number;
  channel: Channel;
  items: ConsumptionItem[];
  /** Billed units and charges per price kind (RCS: BASIC, SINGLE, CONVERSATION). */
  priceKinds: Array<{ kind: string; quantity: number; messages: number; amount: number }>;
  /** Clicks in the period (UTC days) on the short links of the channel's messages. */
  clicks: number;
}

const keyLength = (p: PeriodType): PeriodKeyLength => (p === 'DAY' ? 10 : 7);
const startOf = (period: string, p: PeriodType) => (p === 'DAY' ? period : `${period}-01`);

/** Queries whose settled days are kept per node (each a few hundred rows at most). */
const SETTLED_QUERIES_KEPT = 32;
/** A query whose settled days break down into more rows than this is read from the rollups each time, a page at a time. */
const SETTLED_ROWS_KEPT = 5_000;
/** Channel lists are dropped on every change of channels (any node); the time-to-live only bounds a missed signal. */
const CHANNELS_TTL_MS = 60_000;

/** A query's settled days broken down, as of an organisation's consumption epoch; null when too many to keep. */
interface SettledBreakdown {
  epoch: number;
  rows: PeriodBreakdown[] | null;
}

/**
 * Consumption records read from the rollups that the message pipeline writes with each charge, refund and status
 * change: the cost of a query depends on the number of channels, days, networks and statuses, never on the number
 * of messages. Days three days old or more seldom change, so a node keeps what they count and reads only the recent
 * days again; a write that changes a settled day raises its organisation's consumption epoch, which each query reads
 * (one row), so no node serves a kept total after the change commits.
 */
export class ConsumptionService {
  private readonly settled = new Cache<string, SettledBreakdown>({ capacity: SETTLED_QUERIES_KEPT });
  private readonly channels = new Cache<string, Map<string, Channel>>({ capacity: 10_000, ttlMs: CHANNELS_TTL_MS });

  constructor(private readonly store: Store) {
    store.signals.on('settings', () => this.channels.clear());
  }

  async list(q: ConsumptionQuery, now = Date.now()): Promise<ConsumptionRecord[]> {
    const { from, to } = coveredDays(q.startDate, q.endDate, q.periodType);
    const scope: RollupScope = { organisationId: q.organisationId, channelIds: q.channelIds, channelType: q.type, from, to };
    const length = keyLength(q.periodType);
    const lastSettled = lastSettledDay(now);
    const settled = from <= lastSettled ? await this.settledBreakdown({ ...scope, to: to < lastSettled ? to : lastSettled }, length) : [];
    if (settled === null) return this.listPaged(q, scope, length);

    const recentFrom = addDays(lastSettled, 1);
    const recent = to >= recentFrom ? await periodBreakdown(this.store.db, { ...scope, from: from > recentFrom ? from : recentFrom }, length) : [];
    const byRecord = groupByRecord(settled, recent);
    const totals = [...byRecord.values()]
      .map(totalOf)
      .filter((t) => t.quantity !== 0 || t.messages !== 0 || t.amount !== 0)
      .sort((a, b) => (a.period !== b.period ? (a.period < b.period ? 1 : -1) : a.channelId < b.channelId ? -1 : a.channelId > b.channelId ? 1 : 0))
      .slice(q.offset, q.offset + q.limit);
    return this.records(q, totals, byRecord);
  }

  /** The rollups read a page of periods at a time: for queries too large to keep. */
  private async listPaged(q: ConsumptionQuery, scope: RollupScope, length: PeriodKeyLength): Promise<ConsumptionRecord[]> {
    const totals = await periodTotals(this.store.db, scope, length, { offset: q.offset, limit: q.limit });
    if (totals.length === 0) return [];
    // Only the periods and channels of this page are broken down.
    const starts = totals.map((t) => startOf(t.period, q.periodType)).sort();
    const pageScope: RollupScope = {
      ...scope,
      channelIds: [...new Set(totals.map((t) => t.channelId))],
      from: starts[0]!,
      to: periodEnd(starts[starts.length - 1]!, q.periodType),
    };
    return this.records(q, totals, groupByRecord(await periodBreakdown(this.store.db, pageScope, length)));
  }

  /**
   * The settled part of a query, kept while the organisation's epoch stays the same. The epoch is read before the
   * rollups: a change committed in between raises it, so what was read then is read again next time.
   */
  private async settledBreakdown(scope: RollupScope, length: PeriodKeyLength): Promise<PeriodBreakdown[] | null> {
    const key = JSON.stringify([scope.organisationId, scope.channelIds ? [...scope.channelIds].sort() : null, scope.channelType, scope.from, scope.to, length]);
    const epoch = await consumptionEpoch(this.store.db, scope.organisationId);
    const kept = this.settled.get(key);
    if (kept && kept.epoch === epoch) return kept.rows;
    const rows = await periodBreakdown(this.store.db, scope, length, SETTLED_ROWS_KEPT + 1);
    const entry: SettledBreakdown = { epoch, rows: rows.length > SETTLED_ROWS_KEPT ? null : rows };
    const newer = this.settled.get(key);
    if (!newer || newer.epoch <= epoch) this.settled.set(key, entry);
    return entry.rows;
  }

  private async records(q: ConsumptionQuery, totals: PeriodTotal[], byRecord: Map<string, PeriodBreakdown[]>): Promise<ConsumptionRecord[]> {
    if (totals.length === 0) return [];
    const channels = await this.channelsOf(q.organisationId);
    const clicks = await this.clicksOf(q.periodType, totals);
    const records: ConsumptionRecord[] = [];
    for (const t of totals) {
      const channel = channels.get(t.channelId);
      if (!channel) continue;
      const startDate = startOf(t.period, q.periodType);
      const rows = byRecord.get(`${t.channelId}|${t.period}`) ?? [];
      records.push({
        consumptionId: consumptionId({
          organisationId: q.organisationId,
          channelId: t.channelId,
          type: q.type,
          periodType: q.periodType,
          startDate,
        }),
        type: q.type,
        periodType: q.periodType,
        startDate,
        endDate: periodEnd(startDate, q.periodType),
        quantity: t.quantity,
        amount: t.amount,
        messages: t.messages,
        channel,
        items: await itemsOf(rows),
        priceKinds: priceKindsOf(rows),
        clicks: clicks.get(`${t.channelId}|${t.period}`) ?? 0,
      });
    }
    return records;
  }

  /** Clicks per record (channel and period), read fresh: one count per period of the page. */
  private async clicksOf(periodType: PeriodType, totals: PeriodTotal[]): Promise<Map<string, number>> {
    const byPeriod = new Map<string, string[]>();
    for (const t of totals) byPeriod.set(t.period, [...(byPeriod.get(t.period) ?? []), t.channelId]);
    const out = new Map<string, number>();
    for (const [period, channelIds] of byPeriod) {
      const start = startOf(period, periodType);
      const from = Date.parse(`${start}T00:00:00Z`);
      const to = Date.parse(`${addDays(periodEnd(start, periodType), 1)}T00:00:00Z`);
      for (const [channelId, n] of await countClicksByChannel(this.store.db, channelIds, from, to)) out.set(`${channelId}|${period}`, n);
    }
    return out;
  }

  private channelsOf(organisationId: string): Promise<Map<string, Channel>> {
    return this.channels.load(organisationId, async () => new Map((await listChannels(this.store.db, [organisationId])).map((c) => [c.id, c])));
  }

  /**
   * One record by its id, for a channel of the organisation. The id is a hash, so the candidates are the periods
   * the channel has rollups for (a few hundred days a year at most), each hashed and compared.
   */
  async find(organisationId: string, channelId: string, id: string): Promise<ConsumptionRecord | null> {
    for (const { day, channelType } of await channelRollupDays(this.store.db, channelId)) {
      for (const periodType of ['DAY', 'MONTH'] as const) {
        const startDate = periodStart(day, periodType);
        const type = channelType as ConsumptionType;
        if (consumptionId({ organisationId, channelId, type, periodType, startDate }) !== id) continue;
        const [record] = await this.list({
          organisationId,
          channelIds: [channelId],
          type,
          periodType,
          startDate,
          endDate: startDate,
          offset: 0,
          limit: 1,
        });
        return record ?? null;
      }
    }
    return null;
  }
}

/** Breakdown rows by record (channel and period); a month that straddles the settled days has rows from both parts. */
function groupByRecord(...parts: PeriodBreakdown[][]): Map<string, PeriodBreakdown[]> {
  const byRecord = new Map<string, PeriodBreakdown[]>();
  for (const part of parts) {
    for (const r of part) {
      const k = `${r.channelId}|${r.period}`;
      const list = byRecord.get(k);
      if (list) list.push(r);
      else byRecord.set(k, [r]);
    }
  }
  return byRecord;
}

function totalOf(rows: PeriodBreakdown[]): PeriodTotal {
  const t: PeriodTotal = { channelId: rows[0]!.channelId, period: rows[0]!.period, quantity: 0, messages: 0, amount: 0 };
  for (const r of rows) {
    t.quantity += r.quantity;
    t.messages += r.messages;
    t.amount += r.amount;
  }
  return t;
}

/** Totals per price kind, in name order, empty kinds dropped. */
function priceKindsOf(rows: Array<{ priceKind: string; quantity: number; messages: number; amount: number }>) {
  const byKind = new Map<string, { kind: string; quantity: number; messages: number; amount: number }>();
  for (const r of rows) {
    const k = byKind.get(r.priceKind) ?? { kind: r.priceKind, quantity: 0, messages: 0, amount: 0 };
    k.quantity += r.quantity;
    k.messages += r.messages;
    k.amount += r.amount;
    byKind.set(r.priceKind, k);
  }
  return [...byKind.values()]
    .filter((k) => k.quantity !== 0 || k.messages !== 0 || k.amount !== 0)
    .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

/** Groups a record's rows by network, unknown networks last; statuses in name order; empty buckets dropped. */
async function itemsOf(rows: Array<{ mccMnc: string; status: string; quantity: number; messages: number; amount: number }>) {
  const byNetwork = new Map<string, { quantity: number; amount: number; statuses: Map<string, number> }>();
  for (const r of rows) {
    let item = byNetwork.get(r.mccMnc);
    if (!item) byNetwork.set(r.mccMnc, (item = { quantity: 0, amount: 0, statuses: new Map() }));
    item.quantity += r.quantity;
    item.amount += r.amount;
    item.statuses.set(r.status, (item.statuses.get(r.status) ?? 0) + r.messages);
  }
  const codes = [...byNetwork.keys()].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : a > b ? 1 : 0));
  const items: ConsumptionItem[] = [];
  for (const code of codes) {
    const item = byNetwork.get(code)!;
    const statuses = [...item.statuses]
      .filter(([, n]) => n !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([value, quantity]) => ({ value, quantity }));
    if (statuses.length === 0 && item.quantity === 0 && item.amount === 0) continue;
    items.push({ lookup: await networkByMccMnc(code), quantity: item.quantity, amount: item.amount, statuses });
  }
  return items;
}
