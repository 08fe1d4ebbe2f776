import { sql } from 'kysely';
import { batchParts, columnsOf, insertRows, onPostgres, placeholders, rowValues, runByList, runCached, valuesTable } from './batch-sql.ts';
import { type Db, type Dialect, inTransaction, type Store } from './db.ts';
import { lockMessageIds } from './messages.ts';
import type { DispatchQueueTable } from './schema.ts';
import { rollupShard } from './rollups.ts';
import { countOutcomes, insertAttempts } from './attempts.ts';
import { utcDay } from '../domain/dates.ts';

/** The dispatch queue: one row per message waiting to be placed with an operator. */

export type DispatchClaim = DispatchQueueTable;

/** The claim a dispatch pass holds its rows by: only that claim may write their outcome. */
export interface Claim {
  claimant: string;
  leaseUntil: number;
}

export interface DispatchOutcomes {
  /** Placed with an operator: the message records where, and one more placement; the route's rollup grows. */
  submitted: Array<{
    id: string;
    upstreamId: string;
    connector: string;
    route: string;
    parts: number;
    /** What the operator charges for it, micro-euros; null when its connector has no rate for it (nor its route a cost). */
    cost: number | null;
    /** What was charged for it; 0 for a message placed again (it is charged once, counted with its first placement). */
    charged: number;
    /** What was charged for the message, with its first placement (for a message placed again too). */
    chargedOnce: number;
    day: string;
    organisationId: string;
    /** The destination country, '' when unknown. */
    country: string;
    /** Placed again after a failed delivery through another connector. */
    again?: boolean;
    /** Which placement of the message this is (1 for the first). */
    attempt: number;
    placedAt: number;
    /** The destination network: MCC+MNC, else the country, else ''. */
    network: string;
  }>;
  /** To try again at `dueAt` (temporary errors), waiting for that connector if one was named. */
  retries: Array<{ id: string; dueAt: number; attempts: number; waitingOn: string | null }>;
  /** Off the queue (placed, ended, or gone). */
  done: string[];
}

const CHUNK = 300;
/** What a message's queue row is written with (a row waits on no connector, and was claimed by no one before). */
const QUEUED_COLUMNS = columnsOf<Omit<DispatchQueueTable, 'waiting_on' | 'previous_claimant'>>('dispatch_queue', {
  message_id: 'text',
  due_at: 'bigint',
  attempts: 'integer',
  claimed_by: 'text',
  lease_until: 'bigint',
  lane: 'integer',
  rank: 'bigint',
  waiting: 'integer',
});

/**
 * Records a dispatch pass in one transaction. Queue rows are changed only where the pass's claim still holds them:
 * a row claimed again elsewhere after the lease ran out, or placed again on the core's decision meanwhile (a call
 * retried), is left to its new owner. `also` runs in the same transaction with the ids of the `done` rows the claim
 * still held (their final statuses are written there, so a crash cannot leave a message off the queue and not final).
 */
export async function recordDispatch(
  store: Store,
  claim: Claim,
  o: DispatchOutcomes,
  also?: (trx: Db, held: Set<string>) => Promise<void>,
): Promise<Set<string>> {
  const done = [...o.done, ...o.submitted.map((s) => s.id)];
  return inTransaction(store, async (trx) => {
    // The pass's messages locked first, in id order, the order a change of status locks its messages in
    // (lockMessages): the placements' update takes its rows in the order its join reads them (on PostgreSQL a hash
    // join reads the table as stored, which updates reorder), and the final statuses written after it lock more.
    await lockMessageIds(trx, store.dialect, done);
    for (const chunk of batchParts(onPostgres(trx), o.submitted, CHUNK)) {
      const values: unknown[] = [];
      for (const s of chunk) values.push(s.id, s.upstreamId, s.connector, s.route, s.cost);
      await runCached(
        trx,
        'record placements',
        chunk.length,
        (
          pg,
        ) => `update messages set upstream_id = v.column2, connector = v.column3, route = v.column4, cost = ${pg ? 'cast(v.column5 as bigint)' : 'v.column5'}, attempts = attempts + 1
        from ${valuesTable(pg, chunk.length, 5)} where messages.id = v.column1`,
        rowValues(onPostgres(trx), 5, values),
        true,
      );
    }
    const endedFirst = await insertAttempts(
      trx,
      o.submitted.map((s) => ({
        message_id: s.id,
        attempt: s.attempt,
        connector: s.connector,
        route: s.route,
        upstream_id: s.upstreamId,
        network: s.network,
        cost: s.cost,
        placed_at: s.placedAt,
        outcome: null,
        detail: null,
        ended_at: null,
      })),
    );
    if (endedFirst.length > 0) await countOutcomes(trx, endedFirst);
    await addToRouteRollups(trx, o.submitted);
    await addToMarginRollups(trx, o.submitted);
    for (const r of o.retries) {
      await trx
        .updateTable('dispatch_queue')
        // The rank stays: when due again, the message keeps its turn among its organisation's and the others'.
        .set({ due_at: r.dueAt, attempts: r.attempts, claimed_by: null, lease_until: null, waiting_on: r.waitingOn, waiting: 1 })
        .where('message_id', '=', r.id)
        .where('claimed_by', '=', claim.claimant)
        .where('lease_until', '=', claim.leaseUntil)
        .execute();
    }
    const gone = await runByList<{ message_id: string }>(
      trx,
      { name: 'dequeue held', column: '"message_id"', chunk: CHUNK, leading: [claim.claimant, claim.leaseUntil] },
      done,
      (pg, messageAmong) =>
        `delete from "dispatch_queue" where "claimed_by" = ${placeholders(pg, 1)} and "lease_until" = ${placeholders(pg, 1, 2)} and ${messageAmong} returning "message_id"`,
    );
    const held = new Set(gone.map((g) => g.message_id));
    if (also) await also(trx, held);
    return held;
  });
}

/**
 * Moves `claimant`'s lease of each row to `leaseUntil`, where the row is still leased as given (compare and set on
 * the claim, the fencing token): answers their ids. A row another node claimed after the lease ran out is not among
 * them.
 */
export async function renewClaims(db: Db, claimant: string, rows: Array<{ messageId: string; leaseUntil: number }>, leaseUntil: number): Promise<Set<string>> {
  const held = new Set<string>();
  for (const part of batchParts(onPostgres(db), rows, CHUNK)) {
    const values = sql.join(part.map((r) => sql`(${r.messageId}, ${r.leaseUntil})`));
    const res = await sql<{ message_id: string }>`update dispatch_queue set lease_until = ${leaseUntil}
      from (values ${values}) as v
      where dispatch_queue.message_id = v.column1 and dispatch_queue.lease_until = cast(v.column2 as bigint) and dispatch_queue.claimed_by = ${claimant}
      returning dispatch_queue.message_id`.execute(db);
    for (const r of res.rows) held.add(r.message_id);
  }
  return held;
}

/**
 * Puts back on the queue messages that nothing owns: not final, never placed, no queue row, accepted before
 * `acceptedBefore` (a crash of an older version could leave such a message behind) — due now when on their way, at
 * their time when scheduled. Answers how many.
 */
export async function requeueOrphans(db: Db, now: number, acceptedBefore: number, limit: number): Promise<number> {
  // A status at a time, each a literal: the partial index of that status (scheduled, on their way) is read, not every
  // message stored.
  const orphansIn = (status: 'SCHEDULED' | 'ENROUTE', max: number) =>
    db
      .selectFrom('messages as m')
      .select(['m.id', 'm.send_at'])
      .where('m.status', '=', sql.lit(status))
      .where('m.direction', '=', 'MT')
      .where('m.upstream_id', 'is', null)
      .where('m.accepted_at', '<', acceptedBefore)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('dispatch_queue as q').select('q.message_id').whereRef('q.message_id', '=', 'm.id'))))
      .limit(max)
      .execute();
  // One on its way goes now; a scheduled one at its time.
  const orphans = (await orphansIn('ENROUTE', limit)).map((o) => ({ id: o.id, due: now }));
  if (orphans.length < limit) {
    for (const o of await orphansIn('SCHEDULED', limit - orphans.length)) orphans.push({ id: o.id, due: Math.max(now, Number(o.send_at)) });
  }
  if (orphans.length === 0) return 0;
  await db
    .insertInto('dispatch_queue')
    .values(
      orphans.map((o) => ({
        message_id: o.id,
        due_at: o.due,
        attempts: 0,
        claimed_by: null,
        lease_until: null,
        waiting_on: null,
        previous_claimant: null,
        lane: 0,
        rank: o.due,
        waiting: 1,
      })),
    )
    .onConflict((oc) => oc.column('message_id').doNothing())
    .execute();
  return orphans.length;
}
/** What was placed through each route and connector per day, with its cost and what was charged for it. */
async function addToRouteRollups(db: Db, placed: DispatchOutcomes['submitted']): Promise<void> {
  const sums = new Map<string, { day: string; route: string; connector: string; messages: number; parts: number; cost: number; charged: number }>();
  for (const p of placed) {
    const key = `${p.day}|${p.route}|${p.connector}`;
    const s = sums.get(key) ?? { day: p.day, route: p.route, connector: p.connector, messages: 0, parts: 0, cost: 0, charged: 0 };
    s.messages++;
    s.parts += p.parts;
    s.cost += p.cost ?? 0;
    s.charged += p.charged;
    sums.set(key, s);
  }
  // In key order, so concurrent passes on other nodes take the rows' locks in the same order; in one shard.
  const shard = rollupShard();
  for (const s of [...sums.values()].sort((a, b) => `${a.day}|${a.route}|${a.connector}`.localeCompare(`${b.day}|${b.route}|${b.connector}`))) {
    await runCached(
      db,
      'route rollup',
      1,
      (pg) =>
        `insert into "route_rollups" ("day", "route", "connector", "messages", "parts", "cost", "charged", "shard") values (${placeholders(pg, 8)}) ` +
        'on conflict ("day", "route", "connector", "shard") do update set "messages" = route_rollups.messages + "excluded"."messages", ' +
        '"parts" = route_rollups.parts + "excluded"."parts", "cost" = route_rollups.cost + "excluded"."cost", "charged" = route_rollups.charged + "excluded"."charged"',
      [s.day, s.route, s.connector, s.messages, s.parts, s.cost, s.charged, shard],
      true,
    );
  }
}

interface MarginSum {
  key: string;
  day: string;
  org: string;
  connector: string;
  country: string;
  messages: number;
  parts: number;
  cost: number;
  charged: number;
  unknownMessages: number;
  unknownCharged: number;
}

/**
 * What was placed per day, organisation, connector and destination country, with what it cost and was charged. A
 * message is counted with its first placement; its cost is known when every placement's is. One whose cost is not
 * known is counted apart (how many, what was charged for them) and none of its costs is in `cost`: when a placement
 * again has no known cost, the message moves apart with its first placement, and the costs of its earlier placements
 * come off the rows they were added to.
 */
async function addToMarginRollups(db: Db, placed: DispatchOutcomes['submitted']): Promise<void> {
  const sums = new Map<string, MarginSum>();
  const sum = (day: string, org: string, connector: string, country: string): MarginSum => {
    const key = `${day}|${org}|${connector}|${country}`;
    let s = sums.get(key);
    if (!s) {
      s = { key, day, org, connector, country, messages: 0, parts: 0, cost: 0, charged: 0, unknownMessages: 0, unknownCharged: 0 };
      sums.set(key, s);
    }
    return s;
  };
  const earlier = await earlierPlacements(db, placed);
  for (const p of placed) {
    if (!p.again) {
      const s = sum(p.day, p.organisationId, p.connector, p.country);
      s.messages++;
      s.parts += p.parts;
      s.charged += p.charged;
      if (p.cost !== null) s.cost += p.cost;
      else {
        s.unknownMessages++;
        s.unknownCharged += p.charged;
      }
      continue;
    }
    // A message placed again after a failed delivery is one message, charged once: its new placement adds its cost.
    const before = earlier.get(p.id) ?? [];
    if (before.some((a) => a.cost === null)) continue; // apart already: its costs are not counted
    if (p.cost !== null) {
      sum(p.day, p.organisationId, p.connector, p.country).cost += p.cost;
      continue;
    }
    const first = before[0];
    // Placed before placements were recorded: no first placement to move it from.
    if (!first) continue;
    const from = sum(utcDay(first.placedAt), p.organisationId, first.connector, p.country);
    from.unknownMessages++;
    from.unknownCharged += p.chargedOnce;
    for (const a of before) sum(utcDay(a.placedAt), p.organisationId, a.connector, p.country).cost -= a.cost!;
  }
  const shard = rollupShard();
  for (const s of [...sums.values()].sort((a, b) => a.key.localeCompare(b.key))) {
    await runCached(
      db,
      'margin rollup',
      1,
      (pg) =>
        `insert into "margin_rollups" ("day", "organisation_id", "connector", "country", "shard", "messages", "parts", "cost", "charged", "unknown_cost_messages", "unknown_cost_charged") values (${placeholders(pg, 11)}) ` +
        'on conflict ("day", "organisation_id", "connector", "country", "shard") do update set "messages" = margin_rollups.messages + "excluded"."messages", ' +
        '"parts" = margin_rollups.parts + "excluded"."parts", "cost" = margin_rollups.cost + "excluded"."cost", "charged" = margin_rollups.charged + "excluded"."charged", ' +
        '"unknown_cost_messages" = margin_rollups.unknown_cost_messages + "excluded"."unknown_cost_messages", ' +
        '"unknown_cost_charged" = margin_rollups.unknown_cost_charged + "excluded"."unknown_cost_charged"',
      [s.day, s.org, s.connector, s.country, shard, s.messages, s.parts, s.cost, s.charged, s.unknownMessages, s.unknownCharged],
      true,
    );
  }
}

/** The earlier placements of the messages placed again among `placed`, first first (read only when there are some). */
async function earlierPlacements(
  db: Db,
  placed: DispatchOutcomes['submitted'],
): Promise<Map<string, Array<{ attempt: number; connector: string; cost: number | null; placedAt: number }>>> {
  const out = new Map<string, Array<{ attempt: number; connector: string; cost: number | null; placedAt: number }>>();
  const again = new Map(placed.filter((p) => p.again).map((p) => [p.id, p.attempt]));
  if (again.size === 0) return out;
  const rows = await runByList<{ message_id: string; attempt: number | string; connector: string; cost: number | string | null; placed_at: number | string }>(
    db,
    { name: 'earlier placements', column: '"message_id"', chunk: CHUNK },
    [...again.keys()],
    (_pg, among) => `select "message_id", "attempt", "connector", "cost", "placed_at" from "message_attempts" where ${among}`,
  );
  for (const r of rows) {
    if (Number(r.attempt) >= again.get(r.message_id)!) continue;
    const list = out.get(r.message_id) ?? [];
    if (list.some((a) => a.attempt === Number(r.attempt))) continue; // a list part padded with its last id
    list.push({ attempt: Number(r.attempt), connector: r.connector, cost: r.cost === null ? null : Number(r.cost), placedAt: Number(r.placed_at) });
    out.set(r.message_id, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.attempt - b.attempt);
  return out;
}

/**
 * Messages waiting (backed off) for `connector` fall due now, their backoff started afresh: the waits for a connector
 * that was down or throttled are not failures of theirs, and a temporary error once it is back must not inherit them
 * (five waits through a throttled SMSC's pauses, then one ESME_RMSGQFUL, backed a message off 28 s). Answers how many.
 */
export async function releaseWaiting(db: Db, connector: string, now: number): Promise<number> {
  const r = await db
    .updateTable('dispatch_queue')
    .set({ due_at: now, attempts: 0 })
    .where('waiting_on', '=', connector)
    .where('due_at', '>', now)
    .where('claimed_by', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** For each connector messages wait for, when the oldest of them was first due to be sent. */
export async function oldestWaiting(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('dispatch_queue as q')
    .innerJoin('messages as m', 'm.id', 'q.message_id')
    .select(['q.waiting_on', (eb) => eb.fn.min<number>('m.send_at').as('since')])
    .where('q.waiting_on', 'is not', null)
    .groupBy('q.waiting_on')
    .execute();
  return new Map(rows.map((r) => [r.waiting_on!, Number(r.since)]));
}

/** Gives up a claim's rows not yet dispatched (a node stopping), so they are claimed again at once. */
export async function releaseClaim(db: Db, claim: Claim, messageIds: string[]): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    await db
      .updateTable('dispatch_queue')
      .set({ claimed_by: null, lease_until: null })
      .where('message_id', 'in', messageIds.slice(i, i + CHUNK))
      .where('claimed_by', '=', claim.claimant)
      .where('lease_until', '=', claim.leaseUntil)
      .execute();
  }
}

/**
 * Queues messages for dispatch in their lane at their rank (see fair-queue.ts); with `lease`, already claimed by that
 * node until then (handed to its dispatcher). Those due after `now` wait apart until a claim finds them due.
 */
export async function enqueueDispatch(
  db: Db,
  rows: Array<{ messageId: string; dueAt: number; lane: number; rank: number; lease?: Claim }>,
  now: number,
): Promise<void> {
  await insertRows(
    db,
    QUEUED_COLUMNS,
    rows.map((r) => ({
      message_id: r.messageId,
      due_at: r.dueAt,
      attempts: 0,
      claimed_by: r.lease?.claimant ?? null,
      lease_until: r.lease?.leaseUntil ?? null,
      lane: r.lane,
      rank: r.rank,
      waiting: r.dueAt > now ? 1 : 0,
    })),
    CHUNK,
  );
}

/** How many waiting rows one claim makes ready at most: the rest, at the next. */
const PROMOTE_MAX = 5_000;

/**
 * Makes the waiting rows that are due by `now` ready to be claimed (see migration 035), up to PROMOTE_MAX of them,
 * earliest due first; answers how many. Through the waiting rows' own index: one look when none is due. On
 * PostgreSQL rows another transaction holds (a pass recording them) are skipped, for the next claim.
 */
export async function promoteDueDispatch(db: Db, dialect: Dialect, now: number): Promise<number> {
  const lock = dialect === 'postgres' ? sql` for update skip locked` : sql``;
  const r = await sql`update dispatch_queue set waiting = 0 where message_id in (
      select message_id from dispatch_queue where waiting = 1 and due_at <= ${now} order by due_at limit ${PROMOTE_MAX}${lock})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Puts messages back on the queue at `dueAt` (another placement), taking any row from the claim that holds it. */
export async function requeueDispatch(db: Db, messageIds: string[], dueAt: number): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    await db
      .insertInto('dispatch_queue')
      .values(
        messageIds
          .slice(i, i + CHUNK)
          .map((id) => ({ message_id: id, due_at: dueAt, attempts: 0, claimed_by: null, lease_until: null, lane: 0, rank: dueAt, waiting: 1 })),
      )
      .onConflict((oc) => oc.column('message_id').doUpdateSet({ due_at: dueAt, rank: dueAt, attempts: 0, claimed_by: null, lease_until: null, waiting: 1 }))
      .execute();
  }
}

export async function removeFromDispatch(db: Db, messageIds: string[]): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    await db
      .deleteFrom('dispatch_queue')
      .where('message_id', 'in', messageIds.slice(i, i + CHUNK))
      .execute();
  }
}
