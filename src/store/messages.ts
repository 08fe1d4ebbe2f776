import { sql } from 'kysely';
import { batchParts, columnsOf, insertRows, onPostgres, placeholders, rowValues, runCached, runByList, selectList, valuesTable } from './batch-sql.ts';
import type { Db, Dialect } from './db.ts';
import type { MessageEventTable, MessageTable } from './schema.ts';

export type MessageRow = MessageTable;
export type MessageEventRow = MessageEventTable;

const INSERT_CHUNK = 200;

const MESSAGE_COLUMNS = columnsOf<MessageRow>('messages', {
  id: 'text',
  organisation_id: 'text',
  payer_id: 'text',
  channel_id: 'text',
  campaign_id: 'text',
  type: 'text',
  direction: 'text',
  recipient: 'text',
  sender: 'text',
  body: 'text',
  encoding: 'text',
  part_count: 'integer',
  length: 'integer',
  price: 'bigint',
  price_kind: 'text',
  charged: 'integer',
  status: 'text',
  status_detail: 'text',
  status_at: 'bigint',
  ref_client: 'text',
  callback_url_status: 'text',
  callback_url_mo: 'text',
  accepted_at: 'bigint',
  send_at: 'bigint',
  validity_until: 'bigint',
  origin_message_id: 'text',
  country: 'text',
  mcc_mnc: 'text',
  network: 'text',
  upstream_id: 'text',
  connector: 'text',
  source: 'text',
  smpp_credential_id: 'text',
  registered_delivery: 'integer',
  day: 'text',
  extra: 'text',
  attempts: 'integer',
  route: 'text',
  cost: 'bigint',
  content_erased_at: 'bigint',
});

const EVENT_COLUMNS = columnsOf<MessageEventRow>('message_events', {
  id: 'text',
  message_id: 'text',
  organisation_id: 'text',
  channel_id: 'text',
  kind: 'text',
  status: 'text',
  detail: 'text',
  at: 'bigint',
});

export function insertMessages(db: Db, rows: MessageRow[]): Promise<void> {
  return insertRows(db, MESSAGE_COLUMNS, rows, INSERT_CHUNK);
}

export function insertEvents(db: Db, rows: MessageEventRow[]): Promise<void> {
  return insertRows(db, EVENT_COLUMNS, rows, INSERT_CHUNK * 2);
}

/**
 * Reads messages for a change of status, locked until the transaction ends (PostgreSQL), in id order, so two
 * transactions touching the same messages cannot wait on each other in a cycle.
 */
export function lockMessages(db: Db, dialect: Dialect, ids: string[]): Promise<MessageRow[]> {
  return runByList<MessageRow>(
    db,
    { name: 'lock messages', column: '"id"', chunk: 500 },
    [...new Set(ids)].sort(),
    (pg, idAmong) =>
      `select ${selectList(MESSAGE_COLUMNS)} from "messages" where ${idAmong} order by "id"${dialect === 'postgres' ? ' for no key update' : ''}`,
  );
}

/**
 * Locks messages until the transaction ends (PostgreSQL), in id order, without reading them: for a transaction that
 * updates them by a join — which takes their locks in whatever order its plan reads the rows — and may lock more of
 * them later (lockMessages).
 */
export async function lockMessageIds(db: Db, dialect: Dialect, ids: string[]): Promise<void> {
  if (dialect !== 'postgres' || ids.length === 0) return;
  await runByList(
    db,
    { name: 'lock message ids', column: '"id"', chunk: 500, unread: true },
    [...new Set(ids)].sort(),
    (_pg, idAmong) => `select "id" from "messages" where ${idAmong} order by "id" for no key update`,
  );
}

/** Writes the status fields (and charge and extra) of changed messages, at most 200 a statement. */
export async function writeStatuses(db: Db, rows: MessageRow[]): Promise<void> {
  for (const part of batchParts(onPostgres(db), rows, 200)) {
    const values: unknown[] = [];
    for (const m of part) values.push(m.id, m.status, m.status_detail, m.status_at, m.charged, m.extra, m.part_count);
    await runCached(
      db,
      'write statuses',
      part.length,
      (pg) => `update messages set status = v.column2, status_detail = v.column3, status_at = cast(v.column4 as bigint),
        charged = cast(v.column5 as bigint), extra = v.column6, part_count = cast(v.column7 as integer)
      from ${valuesTable(pg, part.length, 7)} where messages.id = v.column1`,
      rowValues(onPostgres(db), 7, values),
      true,
    );
  }
}

/** Messages an operator took (they have an upstream id) and never reported on, past their validity. */
export function expiredOnTheirWay(db: Db, now: number, limit: number): Promise<Array<{ id: string; type: string }>> {
  return db
    .selectFrom('messages')
    .select(['id', 'type'])
    .where('status', '=', sql.lit('ENROUTE')) // a literal, so the partial index applies
    .where('validity_until', '<', now)
    .where('upstream_id', 'is not', null)
    .limit(limit)
    .execute();
}

/**
 * When the sweep of expired messages is next due: the earliest validity end among messages on their way that either
 * reached an operator (ended already: due now) or have not ended yet (due then, if placed by then). Null when none.
 */
export async function nextValidityEnd(db: Db, now: number): Promise<number | null> {
  const row = await db
    .selectFrom('messages')
    .select('validity_until')
    .where('status', '=', sql.lit('ENROUTE')) // a literal, so the partial index applies
    .where('validity_until', 'is not', null)
    .where((eb) => eb.or([eb('validity_until', '>=', now), eb('upstream_id', 'is not', null)]))
    .orderBy('validity_until')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.validity_until) : null;
}

export async function findMessage(db: Db, id: string): Promise<MessageRow | null> {
  return (await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export function findMessages(db: Db, ids: string[]): Promise<MessageRow[]> {
  return runByList<MessageRow>(
    db,
    { name: 'find messages', column: '"id"', chunk: 500 },
    ids,
    (_pg, idAmong) => `select ${selectList(MESSAGE_COLUMNS)} from "messages" where ${idAmong}`,
  );
}

export function findByUpstreamIds(db: Db, connector: string, upstreamIds: string[]): Promise<MessageRow[]> {
  return runByList<MessageRow>(
    db,
    { name: 'find messages by upstream id', column: '"upstream_id"', chunk: 500, leading: [connector] },
    upstreamIds,
    (pg, upstreamAmong) => `select ${selectList(MESSAGE_COLUMNS)} from "messages" where "connector" = ${placeholders(pg, 1)} and ${upstreamAmong}`,
  );
}

/** Of these upstream ids, those an inbound message from `connector` was already stored under. */
export async function storedInboundUpstreamIds(db: Db, connector: string, upstreamIds: string[]): Promise<string[]> {
  if (upstreamIds.length === 0) return [];
  const rows = await db
    .selectFrom('messages')
    .select('upstream_id')
    .where('connector', '=', connector)
    .where('direction', '=', 'MO')
    .where('upstream_id', 'in', upstreamIds)
    .execute();
  return rows.map((r) => r.upstream_id!);
}

export interface MessageFilter {
  channelIds: string[];
  direction?: string;
  type?: string;
  from: number;
  to: number;
  status?: string;
  refClient?: string;
  recipient?: string;
  campaignId?: string;
  offset: number;
  limit: number;
}

/**
 * A page of messages, newest first. Over several channels, each channel's newest are read on their own (an index
 * range read backwards, stopping at the page's end) and merged here: one query over all of them would read every
 * message of the period and sort them — seconds for a busy organisation's 10 days. A campaign or a number is found
 * through its own index in one query.
 */
export async function listMessages(db: Db, f: MessageFilter): Promise<MessageRow[]> {
  if (f.channelIds.length === 0) return [];
  if (f.channelIds.length === 1 || f.campaignId || f.recipient) {
    return listQuery(db, f, f.channelIds).offset(f.offset).limit(f.limit).execute();
  }
  const perChannel = await Promise.all(
    f.channelIds.map((id) =>
      listQuery(db, f, [id])
        .limit(f.offset + f.limit)
        .execute(),
    ),
  );
  const newestFirst = (a: MessageRow, b: MessageRow) => b.accepted_at - a.accepted_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  return perChannel
    .flat()
    .sort(newestFirst)
    .slice(f.offset, f.offset + f.limit);
}

function listQuery(db: Db, f: MessageFilter, channelIds: string[]) {
  let q = db.selectFrom('messages').selectAll().where('channel_id', 'in', channelIds).where('accepted_at', '>=', f.from).where('accepted_at', '<', f.to);
  if (f.direction) q = q.where('direction', '=', f.direction);
  if (f.type) q = q.where('type', '=', f.type);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.refClient) q = q.where('ref_client', '=', f.refClient);
  if (f.recipient) q = q.where('recipient', '=', f.recipient);
  if (f.campaignId) q = q.where('campaign_id', '=', f.campaignId);
  return q.orderBy('accepted_at', 'desc').orderBy('id', 'desc');
}

export async function listEvents(db: Db, messageId: string): Promise<MessageEventRow[]> {
  return db.selectFrom('message_events').selectAll().where('message_id', '=', messageId).orderBy('id').execute();
}

/** The last MT message a channel sent to a number: what an MO from that number answers. */
export async function findLastMt(db: Db, organisationId: string, channelId: string, recipient: string): Promise<MessageRow | null> {
  return (
    (await db
      .selectFrom('messages')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('recipient', '=', recipient)
      .where('channel_id', '=', channelId)
      .where('direction', '=', 'MT')
      .orderBy('accepted_at', 'desc')
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}

/** What a reply needs of the message it answers: its id, campaign and extra fields. */
export async function findMessageExtra(db: Db, id: string): Promise<Pick<MessageRow, 'id' | 'campaign_id' | 'extra'> | null> {
  return (await db.selectFrom('messages').select(['id', 'campaign_id', 'extra']).where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function updateMessageExtra(db: Db, id: string, extra: string | null): Promise<void> {
  await db.updateTable('messages').set({ extra }).where('id', '=', id).execute();
}

/** Which of `organisationIds` sent `recipient` a message on one of their MARKETING channels. */
export async function organisationsWithMarketingTo(db: Db, organisationIds: readonly string[], recipient: string): Promise<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < organisationIds.length; i += 500) {
    const chunk = organisationIds.slice(i, i + 500);
    const rows = await db
      .selectFrom('messages')
      .innerJoin('channels', 'channels.id', 'messages.channel_id')
      .select('messages.organisation_id')
      .distinct()
      .where('messages.organisation_id', 'in', chunk)
      .where('messages.recipient', '=', recipient)
      .where('messages.direction', '=', 'MT')
      .where('channels.flow', '=', 'MARKETING')
      .execute();
    for (const r of rows) found.add(r.organisation_id);
  }
  return [...found];
}
