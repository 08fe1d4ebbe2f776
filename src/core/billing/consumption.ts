import {
  type ConsumptionType,
  consumptionId,
  coveredDays,
  periodEnd,
  periodStart,
  type PeriodType,
} from '../domain/consumption-periods.ts';
import type { NetworkLookup } from '../lookup/enrich.ts';
import { networkByMccMnc } from '../lookup/network-names.ts';
import { type Channel, listChannels } from '../../store/channels.ts';
import {
  channelRollupDays,
  type PeriodKeyLength,
  periodBreakdown,
  periodTotals,
  type RollupScope,
} from '../../store/consumption.ts';
import type { Store } from '../../store/db.ts';

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
}

const keyLength = (p: PeriodType): PeriodKeyLength => (p === 'DAY' ? 10 : 7);
const startOf = (period: string, p: PeriodType) => (p === 'DAY' ? period : `${period}-01`);

/**
 * Consumption records read from the rollups that the message pipeline writes with each charge, refund and status
 * change: the cost of a query depends on the number of channels, days, networks and statuses, never on the number
 * of messages.
 */
export class ConsumptionService {
  constructor(private readonly store: Store) {}

  async list(q: ConsumptionQuery): Promise<ConsumptionRecord[]> {
    const { from, to } = coveredDays(q.startDate, q.endDate, q.periodType);
    const scope: RollupScope = { organisationId: q.organisationId, channelIds: q.channelIds, channelType: q.type, from, to };
    const length = keyLength(q.periodType);
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
    const rows = await periodBreakdown(this.store.db, pageScope, length);
    const byRecord = new Map<string, typeof rows>();
    for (const r of rows) {
      const k = `${r.channelId}|${r.period}`;
      const list = byRecord.get(k);
      if (list) list.push(r);
      else byRecord.set(k, [r]);
    }
    const channels = new Map((await listChannels(this.store.db, [q.organisationId])).map((c) => [c.id, c]));

    const records: ConsumptionRecord[] = [];
    for (const t of totals) {
      const channel = channels.get(t.channelId);
      if (!channel) continue;
      const startDate = startOf(t.period, q.periodType);
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
        items: await itemsOf(byRecord.get(`${t.channelId}|${t.period}`) ?? []),
        priceKinds: priceKindsOf(byRecord.get(`${t.channelId}|${t.period}`) ?? []),
      });
    }
    return records;
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
