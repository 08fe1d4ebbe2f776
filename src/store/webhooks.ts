import { type RawBuilder, sql } from 'kysely';
import { uuidv7 } from '../domain/ids.ts';
import { originOf } from '../domain/urls.ts';
import { batchParts, columnsOf, insertRows, onPostgres, rowValues, runCached, runByList, valuesTable } from './batch-sql.ts';
import { type Db, type Dialect, inTransaction, type Store } from './db.ts';
import type { WebhookAttemptTable, WebhookDeliveryTable } from './schema.ts';

/** Webhook deliveries (one per event and destination) and the attempts made at each. */

export type WebhookDeliveryRow = WebhookDeliveryTable;
export type WebhookAttemptRow = WebhookAttemptTable;

const INSERT_CHUNK = 300;

const DELIVERY_COLUMNS = columnsOf<WebhookDeliveryRow>('webhook_deliveries', {
  id: 'text',
  event_id: 'text',
  message_id: 'text',
  organisation_id: 'text',
  channel_id: 'text',
  kind: 'text',
  method: 'text',
  url: 'text',
  origin: 'text',
  payload: 'text',
  state: 'text',
  attempts: 'integer',
  next_attempt_at: 'bigint',
  lease_until: 'bigint',
  last_http_status: 'integer',
  last_error: 'text',
  created_at: 'bigint',
  updated_at: 'bigint',
  delivered_at: 'bigint',
});
const ATTEMPT_COLUMNS = columnsOf<WebhookAttemptRow>('webhook_attempts', {
  id: 'text',
  delivery_id: 'text',
  at: 'bigint',
  outcome: 'text',
  http_status: 'integer',
  latency_ms: 'integer',
  error: 'text',
});

/** Writes new deliveries (in the transaction of the events they carry); an origin not given is taken from the url. */
export function insertDeliveries(db: Db, rows: Array<Omit<WebhookDeliveryRow, 'origin'> & { origin?: string | null }>): Promise<void> {
  return insertRows(
    db,
    DELIVERY_COLUMNS,
    rows.map((r) => (r.origin === undefined ? { ...r, origin: originOf(r.url) } : (r as WebhookDeliveryRow))),
    INSERT_CHUNK,
  );
}

export interface DeliveryFilter {
  channelIds: string[];
  messageId?: string;
  state?: string;
  offset: number;
  limit: number;
}

/** Deliveries of the given channels, newest first. */
export async function listDeliveries(db: Db, f: DeliveryFilter): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('channel_id', 'in', f.channelIds);
  if (f.messageId) query = query.where('message_id', '=', f.messageId);
  if (f.state) query = query.where('state', '=', f.state);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
}

export async function findDelivery(db: Db, id: string): Promise<WebhookDeliveryRow | null> {
  return (await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** A delivery's attempts, oldest first. */
export async function listAttempts(db: Db, deliveryId: string): Promise<WebhookAttemptRow[]> {
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('at').execute();
}

/** Makes a delivery PENDING and due at `now` with no attempt counted, whatever its state. */
export async function resetDelivery(db: Db, id: string, now: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'PENDING', attempts: 0, next_attempt_at: now, lease_until: null, updated_at: now, delivered_at: null })
    .where('id', '=', id)
    .execute();
}

/** Hands claimed deliveries back, to be tried at `until`. */
export async function deferDeliveries(db: Db, ids: string[], until: number): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ next_attempt_at: until, lease_until: null }).where('id', 'in', ids).execute();
}

/** Pending deliveries by (origin, due): migration 034. */
export const PENDING_ORIGIN_INDEX = 'webhook_deliveries_pending_origin';

export interface PendingOrigin {
  /** null: deliveries written before origins were recorded. */
  origin: string | null;
  /** The earliest delivery due now and not leased (null: none); one held back behind an earlier one of its message counts. */
  dueNow: number | null;
  /** The earliest not leased due after `now` (null: none). */
  dueLater: number | null;
}

/**
 * Origins with deliveries pending, in the index's order, at most `max` of them after `after` (null: from the first),
 * and when their deliveries not leased fall due, but for those in `skip`: each origin found from the last (the next
 * one after it in the pending-origin index), then two looks at its deliveries, so the cost is the number of origins
 * looked at, not of deliveries. `last`: the last origin looked at when there may be more after it, else null.
 */
export async function pendingOrigins(
  db: Db,
  dialect: Dialect,
  now: number,
  skip: readonly string[],
  window: { after: string | null; max: number },
  skipOrganisations: readonly string[] = [],
): Promise<{ origins: PendingOrigin[]; last: string | null }> {
  // The looks go by the pending-origin index, every pending delivery of the origin in due order. Left to itself, SQLite
  // would take the pending due index, and PostgreSQL too for the deliveries without an origin, and read every pending
  // delivery: SQLite is told, PostgreSQL is asked for the index's own order.
  const byOrigin = sql.raw(dialect === 'sqlite' ? `webhook_deliveries as d indexed by ${PENDING_ORIGIN_INDEX}` : 'webhook_deliveries as d');
  const next = (origin: RawBuilder<unknown>) => sql`(select origin from ${byOrigin} where state = 'PENDING' and origin > ${origin} order by origin limit 1)`;
  const start =
    window.after === null
      ? sql`(select origin from ${byOrigin} where state = 'PENDING' and origin is not null order by origin limit 1)`
      : next(sql`${window.after}`);
  // Deliveries of organisations left out are not due for this claim (read past: a few per origin at most are theirs).
  const ofOthers = skipOrganisations.length > 0 ? sql` and d.organisation_id not in (${sql.join(skipOrganisations.map((o) => sql`${o}`))})` : sql``;
  const first = (same: RawBuilder<unknown>, due: RawBuilder<unknown>) =>
    sql`(select next_attempt_at from ${byOrigin} where d.state = 'PENDING' and ${same} and ${due}
         and (d.lease_until is null or d.lease_until < ${now})${ofOthers} order by d.origin, d.next_attempt_at limit 1)`;
  const skipped = skip.length > 0 ? sql`o.origin in (${sql.join(skip.map((s) => sql`${s}`))})` : sql`1 = 0`;
  const unlessSkipped = (look: RawBuilder<unknown>) => sql`case when ${skipped} then null else ${look} end`;
  const same = sql`d.origin = o.origin`;
  const withoutOrigin = sql`d.origin is null`;
  const res = await sql<{ origin: string | null; n: number | string | null; due_now: number | string | null; due_later: number | string | null }>`
    with recursive origins(origin, n) as (
      select ${start}, 1
      union all
      select ${next(sql`origins.origin`)}, origins.n + 1 from origins where origins.origin is not null and origins.n < ${window.max}
    )
    select o.origin, o.n, ${unlessSkipped(first(same, sql`d.next_attempt_at <= ${now}`))} as due_now,
      ${unlessSkipped(first(same, sql`d.next_attempt_at > ${now}`))} as due_later
    from origins o where o.origin is not null
    union all
    select null, null, ${first(withoutOrigin, sql`d.next_attempt_at <= ${now}`)}, ${first(withoutOrigin, sql`d.next_attempt_at > ${now}`)}`.execute(db);
  const at = (v: number | string | null) => (v === null ? null : Number(v));
  // The last origin by the walk's count: the database's order of text is its own (a collation), not JavaScript's.
  let last: { origin: string; n: number } | null = null;
  for (const r of res.rows) if (r.origin !== null && (last === null || Number(r.n) > last.n)) last = { origin: r.origin, n: Number(r.n) };
  const skipping = new Set(skip);
  const origins = res.rows
    .filter((r) => (r.origin === null ? r.due_now !== null || r.due_later !== null : !skipping.has(r.origin)))
    .map((r) => ({ origin: r.origin, dueNow: at(r.due_now), dueLater: at(r.due_later) }));
  return { origins, last: last !== null && last.n >= window.max ? last.origin : null };
}

/**
 * Extends the lease of deliveries still held by their sender: pending and leased until `leased` (the claim's lease,
 * its fencing token), so one claimed again by another node after the lease ran out is left alone. Answers the ids
 * renewed.
 */
export async function renewDeliveryLeases(db: Db, ids: string[], leased: number, until: number): Promise<Set<string>> {
  const renewed = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .updateTable('webhook_deliveries')
      .set({ lease_until: until })
      .where('id', 'in', ids.slice(i, i + 500))
      .where('state', '=', 'PENDING')
      .where('lease_until', '=', leased)
      .returning('id')
      .execute();
    for (const r of rows) renewed.add(r.id);
  }
  return renewed;
}

export interface AttemptOutcome {
  deliveryId: string;
  at: number;
  outcome: string;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** The lease the attempt was made under: the outcome is written only where the delivery is still leased so. */
  leased: number;
  /** The delivery afterwards. */
  state: string;
  attempts: number;
  nextAttemptAt: number;
}

/** Which of these messages still have a delivery pending (by the message index: cheap whatever the backlog). */
export async function messagesWithPendingDeliveries(db: Db, messageIds: string[]): Promise<Set<string>> {
  // The state is filtered here, not in SQL: with it there, SQLite reads the (state, due) index, every pending row.
  const rows = await runByList<{ message_id: string; state: string }>(
    db,
    { name: 'deliveries of messages', column: '"message_id"', chunk: 500 },
    [...new Set(messageIds)],
    (_pg, messageAmong) => `select "message_id", "state" from "webhook_deliveries" where ${messageAmong}`,
  );
  return new Set(rows.filter((r) => r.state === 'PENDING').map((r) => r.message_id));
}

/**
 * Writes attempts and the deliveries' new states in one transaction (one UPDATE per 200 deliveries), for the
 * deliveries still leased under the attempt's lease; answers how many were not (claimed again elsewhere meanwhile).
 */
export async function recordAttempts(store: Store, items: AttemptOutcome[]): Promise<number> {
  return inTransaction(store, async (trx) => {
    await insertRows(
      trx,
      ATTEMPT_COLUMNS,
      items.map((i) => ({
        id: uuidv7(i.at),
        delivery_id: i.deliveryId,
        at: i.at,
        outcome: i.outcome,
        http_status: i.httpStatus,
        latency_ms: Math.round(i.latencyMs),
        error: i.error,
      })),
      INSERT_CHUNK,
    );
    let written = 0;
    for (const part of batchParts(onPostgres(trx), items, 200)) {
      const values: unknown[] = [];
      for (const d of part)
        values.push(d.deliveryId, d.state, d.attempts, d.nextAttemptAt, d.httpStatus, d.error, d.at, d.state === 'DELIVERED' ? d.at : null, d.leased);
      const r = await runCached(
        trx,
        'record attempts',
        part.length,
        (pg) => `update webhook_deliveries set state = v.column2, attempts = cast(v.column3 as integer),
          next_attempt_at = cast(v.column4 as bigint), lease_until = null,
          last_http_status = cast(v.column5 as integer), last_error = v.column6,
          updated_at = cast(v.column7 as bigint), delivered_at = cast(v.column8 as bigint)
        from ${valuesTable(pg, part.length, 9)}
        where webhook_deliveries.id = v.column1 and webhook_deliveries.lease_until = cast(v.column9 as bigint)`,
        rowValues(onPostgres(trx), 9, values),
      );
      written += Number(r.numAffectedRows ?? 0);
    }
    return items.length - written;
  });
}
