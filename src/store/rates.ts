import type { Db } from './db.ts';
import type { ConnectorRateTable } from './schema.ts';
import { columnsOf, insertRows } from './batch-sql.ts';

/** Connectors' rate tables (what operators charge per part), and placements rolled up for margins. */

export type ConnectorRateRow = ConnectorRateTable;

const RATE_COLUMNS = columnsOf<ConnectorRateRow>('connector_rates', {
  id: 'text',
  connector_id: 'text',
  type: 'text',
  prefix: 'text',
  country: 'text',
  mcc_mnc: 'text',
  amount: 'bigint',
  valid_from: 'bigint',
  valid_to: 'bigint',
  created_at: 'bigint',
});

export async function listRateRows(db: Db, connectorId?: string): Promise<ConnectorRateRow[]> {
  let q = db.selectFrom('connector_rates').selectAll();
  if (connectorId !== undefined) q = q.where('connector_id', '=', connectorId);
  const rows = await q.orderBy('connector_id').orderBy('valid_from').orderBy('id').execute();
  return rows.map((r) => ({
    ...r,
    amount: Number(r.amount),
    valid_from: Number(r.valid_from),
    valid_to: r.valid_to === null ? null : Number(r.valid_to),
    created_at: Number(r.created_at),
  }));
}

export async function insertRateRows(db: Db, rows: ConnectorRateRow[]): Promise<void> {
  if (rows.length > 0) await insertRows(db, RATE_COLUMNS, rows, 200);
}

/** Removes rates of a connector that are not in force yet (`after` and later): the past stays as it was. */
export async function deleteRateRows(db: Db, connectorId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await db
    .deleteFrom('connector_rates')
    .where('connector_id', '=', connectorId)
    .where('id', 'in', [...ids])
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function deleteRatesOfConnector(db: Db, connectorId: string): Promise<void> {
  await db.deleteFrom('connector_rates').where('connector_id', '=', connectorId).execute();
}

export interface MarginTotal {
  organisationId: string;
  connector: string;
  country: string;
  /** The period (a day or a month) when the totals are grouped by one, else ''. */
  period: string;
  messages: number;
  parts: number;
  charged: number;
  /** What the messages whose cost is known cost. */
  cost: number;
  /** Messages whose cost is not known (no rate, nor route cost, for one of their placements), and what they were charged. */
  unknownCostMessages: number;
  unknownCostCharged: number;
}

/**
 * What was placed from `fromDay` to `toDay` (inclusive) per organisation, connector and country, and per day or month
 * when asked: messages, parts, what was charged for them and what they cost (micro-euros), those whose cost is not
 * known apart.
 */
export async function marginTotals(
  db: Db,
  fromDay: string,
  toDay: string,
  filter: { organisationId?: string; connector?: string; country?: string },
  per: 'day' | 'month' | 'none',
): Promise<MarginTotal[]> {
  let q = db.selectFrom('margin_rollups').where('day', '>=', fromDay).where('day', '<=', toDay);
  if (filter.organisationId) q = q.where('organisation_id', '=', filter.organisationId);
  if (filter.connector) q = q.where('connector', '=', filter.connector);
  if (filter.country) q = q.where('country', '=', filter.country);
  const rows = await q
    .select((eb) => [
      'organisation_id',
      'connector',
      'country',
      'day',
      eb.fn.sum<number>('messages').as('messages'),
      eb.fn.sum<number>('parts').as('parts'),
      eb.fn.sum<number>('charged').as('charged'),
      eb.fn.sum<number>('cost').as('cost'),
      eb.fn.sum<number>('unknown_cost_messages').as('unknown_cost_messages'),
      eb.fn.sum<number>('unknown_cost_charged').as('unknown_cost_charged'),
    ])
    .groupBy(['organisation_id', 'connector', 'country', 'day'])
    .execute();
  // Days summed up to the period asked for here (a handful of rows a day and organisation, whatever the traffic).
  const sums = new Map<string, MarginTotal>();
  for (const r of rows) {
    const period = per === 'day' ? r.day : per === 'month' ? r.day.slice(0, 7) : '';
    const key = `${r.organisation_id}|${r.connector}|${r.country}|${period}`;
    const s = sums.get(key) ?? {
      organisationId: r.organisation_id,
      connector: r.connector,
      country: r.country,
      period,
      messages: 0,
      parts: 0,
      charged: 0,
      cost: 0,
      unknownCostMessages: 0,
      unknownCostCharged: 0,
    };
    s.messages += Number(r.messages);
    s.parts += Number(r.parts);
    s.charged += Number(r.charged);
    s.cost += Number(r.cost);
    s.unknownCostMessages += Number(r.unknown_cost_messages);
    s.unknownCostCharged += Number(r.unknown_cost_charged);
    sums.set(key, s);
  }
  return [...sums.values()].sort(
    (a, b) =>
      a.period.localeCompare(b.period) ||
      a.organisationId.localeCompare(b.organisationId) ||
      a.connector.localeCompare(b.connector) ||
      a.country.localeCompare(b.country),
  );
}
