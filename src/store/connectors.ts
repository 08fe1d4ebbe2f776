import { sql } from 'kysely';
import { columnsOf, insertRows, placeholders, runByList, selectList } from './batch-sql.ts';
import type { Db, Dialect } from './db.ts';
import type { ConnectorRecordTable, ConnectorTable, RouteTable } from './schema.ts';

/** Operator connections, the routes between them, and the records connectors keep about their work. */

export type ConnectorRow = ConnectorTable;
export type RouteRow = RouteTable;
export type ConnectorRecordRow = ConnectorRecordTable;

export function listConnectorRows(db: Db): Promise<ConnectorRow[]> {
  return db.selectFrom('connectors').selectAll().orderBy('created_at').orderBy('id').execute();
}

export function listRouteRows(db: Db): Promise<RouteRow[]> {
  return db.selectFrom('routes').selectAll().orderBy('priority').orderBy('id').execute();
}

const CHUNK = 400;
const RECORD_COLUMNS = columnsOf<ConnectorRecordRow>('connector_records', {
  connector: 'text',
  key: 'text',
  data: 'text',
  due_at: 'bigint',
  lease_until: 'bigint',
  created_at: 'bigint',
  lane: 'integer',
});

export function findRecords(db: Db, connector: string, keys: string[]): Promise<ConnectorRecordRow[]> {
  return runByList<ConnectorRecordRow>(
    db,
    { name: 'find records', column: '"key"', chunk: CHUNK, leading: [connector] },
    keys,
    (pg, keyAmong) => `select ${selectList(RECORD_COLUMNS)} from "connector_records" where "connector" = ${placeholders(pg, 1)} and ${keyAmong}`,
  );
}

/**
 * Up to `limit` records of a connector whose key starts with `prefix` (not empty), the greatest key first: a range of
 * the key index, compared byte by byte whatever the database's collation.
 */
export function listRecordsByPrefix(db: Db, dialect: Dialect, connector: string, prefix: string, limit: number): Promise<ConnectorRecordRow[]> {
  const upper = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const key = dialect === 'postgres' ? sql<string>`key collate "C"` : sql<string>`key`;
  return db
    .selectFrom('connector_records')
    .selectAll()
    .where('connector', '=', connector)
    .where(key, '>=', prefix)
    .where(key, '<', upper)
    .orderBy(key, 'desc')
    .limit(limit)
    .execute();
}

/** Creates or replaces records; a replaced record keeps its creation time and takes the lease written (none, or the one it is handed over with). */
export async function upsertRecords(db: Db, rows: ConnectorRecordRow[]): Promise<void> {
  await insertRows(
    db,
    RECORD_COLUMNS,
    rows,
    CHUNK,
    'on conflict ("connector", "key") do update set "data" = "excluded"."data", "due_at" = "excluded"."due_at", "lane" = "excluded"."lane", "lease_until" = "excluded"."lease_until"',
  );
}

/** Ends the lease of records a connector has dealt with, without a due time (kept for its later look-ups). */
export async function settleRecords(db: Db, connector: string, keys: string[]): Promise<void> {
  await runByList(
    db,
    { name: 'settle records', column: '"key"', chunk: CHUNK, leading: [connector], unread: true },
    keys,
    (pg, keyAmong) => `update "connector_records" set "due_at" = null, "lease_until" = null where "connector" = ${placeholders(pg, 1)} and ${keyAmong}`,
  );
}

/** Deletes records with nothing due that were created before `before`; answers how many. */
export async function pruneSettledRecords(db: Db, before: number): Promise<number> {
  const r = await db
    .deleteFrom('connector_records')
    .where('due_at', 'is', null)
    .where('lease_until', 'is', null)
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function findConnectorRow(db: Db, idOrName: { id?: string; name?: string }): Promise<ConnectorRow | null> {
  let q = db.selectFrom('connectors').selectAll();
  if (idOrName.id !== undefined) q = q.where('id', '=', idOrName.id);
  if (idOrName.name !== undefined) q = q.where('name', '=', idOrName.name);
  return (await q.executeTakeFirst()) ?? null;
}

export async function insertConnectorRow(db: Db, row: ConnectorRow): Promise<void> {
  await db.insertInto('connectors').values(row).execute();
}

export async function updateConnectorRow(db: Db, id: string, patch: Partial<Omit<ConnectorRow, 'id' | 'created_at'>>): Promise<void> {
  await db.updateTable('connectors').set(patch).where('id', '=', id).execute();
}

export async function deleteConnectorRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('connectors').where('id', '=', id).execute();
}

export async function findRouteRow(db: Db, idOrName: { id?: string; name?: string }): Promise<RouteRow | null> {
  let q = db.selectFrom('routes').selectAll();
  if (idOrName.id !== undefined) q = q.where('id', '=', idOrName.id);
  if (idOrName.name !== undefined) q = q.where('name', '=', idOrName.name);
  return (await q.executeTakeFirst()) ?? null;
}

export async function insertRouteRow(db: Db, row: RouteRow): Promise<void> {
  await db.insertInto('routes').values(row).execute();
}

export async function updateRouteRow(db: Db, id: string, patch: Partial<Omit<RouteRow, 'id' | 'created_at'>>): Promise<void> {
  await db.updateTable('routes').set(patch).where('id', '=', id).execute();
}

export async function deleteRouteRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('routes').where('id', '=', id).execute();
}

/** Rows of one source (the configuration file's), to find those the file no longer names. */
export async function listRowsOfSource(db: Db, table: 'connectors' | 'routes', source: string): Promise<Array<{ id: string; name: string }>> {
  return db.selectFrom(table).select(['id', 'name']).where('source', '=', source).execute();
}

/** What was placed per route and connector from `fromDay` to `toDay` (inclusive), with cost and charges. */
export async function routeTotals(
  db: Db,
  fromDay: string,
  toDay: string,
  filter: { route?: string; connector?: string },
): Promise<Array<{ route: string; connector: string; messages: number; parts: number; cost: number; charged: number }>> {
  let q = db
    .selectFrom('route_rollups')
    .select((eb) => [
      'route',
      'connector',
      eb.fn.sum<number>('messages').as('messages'),
      eb.fn.sum<number>('parts').as('parts'),
      eb.fn.sum<number>('cost').as('cost'),
      eb.fn.sum<number>('charged').as('charged'),
    ])
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay);
  if (filter.route) q = q.where('route', '=', filter.route);
  if (filter.connector) q = q.where('connector', '=', filter.connector);
  const rows = await q.groupBy(['route', 'connector']).orderBy('route').orderBy('connector').execute();
  return rows.map((r) => ({
    route: r.route,
    connector: r.connector,
    messages: Number(r.messages),
    parts: Number(r.parts),
    cost: Number(r.cost),
    charged: Number(r.charged),
  }));
}
