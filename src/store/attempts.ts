import type { Db } from './db.ts';
import type { MessageAttemptTable } from './schema.ts';
import { batchParts, onPostgres, placeholders, rowValues, runCached, valuesTable } from './batch-sql.ts';
import { rollupShard } from './rollups.ts';
import { lockMessageIds } from './messages.ts';
import { hourOf } from '../domain/delivery.ts';
import { sql } from 'kysely';

/** Each placement of a message with an operator, and delivery counters per connector and destination network. */

export type MessageAttemptRow = MessageAttemptTable;

const CHUNK = 200;

/**
 * Records placements (one row each; a placement recorded already is left as it is). A placement whose final receipt
 * came first (`settleEarly`) is recorded ended: answered, to be counted now that its network and time are known.
 */
export async function insertAttempts(db: Db, rows: MessageAttemptRow[]): Promise<SettledAttempt[]> {
  const out: SettledAttempt[] = [];
  for (const part of batchParts(onPostgres(db), rows, CHUNK)) {
    const ended = await db
      .insertInto('message_attempts')
      .values(part)
      .onConflict((oc) =>
        oc
          .columns(['message_id', 'attempt'])
          .doUpdateSet({
            route: (eb) => eb.ref('excluded.route'),
            upstream_id: (eb) => eb.ref('excluded.upstream_id'),
            network: (eb) => eb.ref('excluded.network'),
            cost: (eb) => eb.ref('excluded.cost'),
            placed_at: (eb) => eb.ref('excluded.placed_at'),
            connector: (eb) => eb.ref('excluded.connector'),
            // A receipt from another connector was not about this placement.
            outcome: sql<string | null>`case when message_attempts.connector = excluded.connector then message_attempts.outcome end`,
            detail: sql<string | null>`case when message_attempts.connector = excluded.connector then message_attempts.detail end`,
            ended_at: sql<number | null>`case when message_attempts.connector = excluded.connector then message_attempts.ended_at end`,
          })
          .where('message_attempts.upstream_id', '=', EARLY),
      )
      .returning(['message_id', 'connector', 'network', 'placed_at', 'outcome', 'ended_at'])
      .execute();
    for (const r of ended) {
      if (r.outcome === null || r.ended_at === null) continue;
      out.push({
        messageId: r.message_id,
        connector: r.connector,
        network: r.network,
        placedAt: Number(r.placed_at),
        outcome: r.outcome,
        at: Number(r.ended_at),
      });
    }
  }
  return out;
}

/** The upstream id of a placement recorded by its receipt, before the dispatcher recorded it. */
const EARLY = '';

export interface SettledAttempt {
  messageId: string;
  connector: string;
  network: string;
  placedAt: number;
  outcome: string;
  at: number;
}

/**
 * Ends the open placement of each message through `connector` with a final receipt's outcome; answers the placements
 * it ended (a receipt repeated, or for a placement not recorded, ends none — and is counted nowhere). Of receipts for
 * one placement in the same call, the first ends it. One statement a part: a batch of receipts is one round trip, not
 * one a receipt.
 */
export async function settleAttempts(
  db: Db,
  settled: Array<{ messageId: string; connector: string; outcome: string; detail: string | null; at: number }>,
): Promise<SettledAttempt[]> {
  const first = new Map<string, (typeof settled)[number]>();
  for (const s of settled) {
    const key = `${s.messageId}|${s.connector}`;
    if (!first.has(key)) first.set(key, s);
  }
  // In key order, the order a concurrent batch takes the same rows in.
  const rows = [...first.values()].sort((a, b) => (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : a.connector < b.connector ? -1 : 1));
  const pg = onPostgres(db);
  const out: SettledAttempt[] = [];
  for (const part of batchParts(pg, rows, CHUNK)) {
    const values: unknown[] = [];
    for (const s of part) values.push(s.messageId, s.connector, s.outcome, s.detail, s.at);
    // SQLite's returning reads only the updated table: the outcome and its instant are read back from the row.
    const r = await runCached<{
      message_id: string;
      connector: string;
      network: string;
      placed_at: number | string;
      outcome: string;
      ended_at: number | string;
    }>(
      db,
      'settle attempts',
      part.length,
      (p) => `update message_attempts set outcome = v.column3, detail = v.column4, ended_at = cast(v.column5 as bigint)
        from ${valuesTable(p, part.length, 5)}
        where message_attempts.message_id = v.column1 and message_attempts.connector = v.column2 and message_attempts.outcome is null
        returning message_attempts.message_id, message_attempts.connector, message_attempts.network, message_attempts.placed_at,
          message_attempts.outcome, message_attempts.ended_at`,
      rowValues(pg, 5, values),
    );
    for (const row of r.rows)
      out.push({
        messageId: row.message_id,
        connector: row.connector,
        network: row.network,
        placedAt: Number(row.placed_at),
        outcome: row.outcome,
        at: Number(row.ended_at),
      });
  }
  return out;
}

/**
 * Final receipts that ended no placement (`settleAttempts`): those that came before their placement was recorded (an
 * operator answering within milliseconds, on a connector whose receipts carry Tern's id) are kept on the placement's
 * row, written ahead of the dispatcher's (`insertAttempts` completes it and answers it ended, to be counted once).
 * The messages are locked first, as the dispatcher locks them to record their placement: a placement recorded
 * meanwhile is ended here and now. A receipt repeated, or about a placement from before placements were recorded,
 * writes nothing. Answers the placements ended.
 */
export async function settleEarly(
  db: Db,
  unsettled: Array<{ messageId: string; connector: string; outcome: string; detail: string | null; at: number }>,
): Promise<SettledAttempt[]> {
  if (unsettled.length === 0) return [];
  const pg = onPostgres(db);
  await lockMessageIds(
    db,
    pg ? 'postgres' : 'sqlite',
    unsettled.map((u) => u.messageId),
  );
  const settled = await settleAttempts(db, unsettled);
  const ended = new Set(settled.map((s) => `${s.messageId}|${s.connector}`));
  const left = unsettled.filter((u) => !ended.has(`${u.messageId}|${u.connector}`));
  if (left.length === 0) return settled;
  const ids = [...new Set(left.map((u) => u.messageId))];
  const messages = new Map<string, { attempts: number; upstreamId: string | null }>();
  const placements = new Map<string, Array<{ connector: string; outcome: string | null }>>();
  for (const part of batchParts(pg, ids, CHUNK)) {
    for (const m of await db.selectFrom('messages').select(['id', 'attempts', 'upstream_id']).where('id', 'in', part).execute())
      messages.set(m.id, { attempts: Number(m.attempts), upstreamId: m.upstream_id });
    for (const a of await db.selectFrom('message_attempts').select(['message_id', 'connector', 'outcome']).where('message_id', 'in', part).execute()) {
      const list = placements.get(a.message_id) ?? [];
      list.push({ connector: a.connector, outcome: a.outcome });
      placements.set(a.message_id, list);
    }
  }
  const rows: MessageAttemptRow[] = [];
  const seen = new Set<string>();
  for (const u of left) {
    const m = messages.get(u.messageId);
    const before = placements.get(u.messageId) ?? [];
    if (!m || seen.has(u.messageId)) continue;
    // Through this connector already: a receipt repeated. Placed before without a recorded placement: from before
    // placements were recorded. A placement under way recorded: the receipt is not about it.
    if (before.some((a) => a.connector === u.connector || a.outcome === null)) continue;
    if (m.upstreamId !== null && before.length === 0) continue;
    seen.add(u.messageId);
    rows.push({
      message_id: u.messageId,
      attempt: m.attempts + 1,
      connector: u.connector,
      route: '',
      upstream_id: EARLY,
      network: '',
      cost: null,
      placed_at: u.at,
      outcome: u.outcome,
      detail: u.detail,
      ended_at: u.at,
    });
  }
  if (rows.length > 0)
    await db
      .insertInto('message_attempts')
      .values(rows)
      .onConflict((oc) => oc.columns(['message_id', 'attempt']).doNothing())
      .execute();
  return settled;
}

/**
 * Adds ended placements to their connector's delivery counters for the destination network and hour. Delivered and
 * UNDELIVERED count (UNDELIVERABLE is the number's doing, not the network's).
 */
export async function countOutcomes(db: Db, settled: readonly SettledAttempt[]): Promise<void> {
  const deltas = new Map<string, QualityDelta>();
  for (const s of settled) {
    if (s.outcome !== 'DELIVERED' && s.outcome !== 'UNDELIVERED') continue;
    const bucket = hourOf(s.at);
    const key = `${s.connector}|${s.network}|${bucket}`;
    const d = deltas.get(key) ?? { connector: s.connector, network: s.network, bucket, delivered: 0, failed: 0, deliveredMs: 0 };
    if (s.outcome === 'DELIVERED') {
      d.delivered++;
      d.deliveredMs += Math.max(0, s.at - s.placedAt);
    } else d.failed++;
    deltas.set(key, d);
  }
  if (deltas.size > 0) await addQuality(db, [...deltas.values()]);
}

export async function listAttempts(db: Db, messageId: string): Promise<MessageAttemptRow[]> {
  const rows = await db.selectFrom('message_attempts').selectAll().where('message_id', '=', messageId).orderBy('attempt').execute();
  return rows.map((r) => ({
    ...r,
    cost: r.cost === null ? null : Number(r.cost),
    placed_at: Number(r.placed_at),
    ended_at: r.ended_at === null ? null : Number(r.ended_at),
  }));
}

/** The connectors each message was placed with so far. */
export async function connectorsTried(db: Db, messageIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const part of batchParts(onPostgres(db), [...messageIds], CHUNK)) {
    const rows = await db.selectFrom('message_attempts').select(['message_id', 'connector']).where('message_id', 'in', part).execute();
    for (const r of rows) {
      const set = out.get(r.message_id) ?? new Set<string>();
      set.add(r.connector);
      out.set(r.message_id, set);
    }
  }
  return out;
}

export interface QualityDelta {
  connector: string;
  network: string;
  bucket: number;
  delivered: number;
  failed: number;
  deliveredMs: number;
}

/** Adds final receipts to their hour's counters (in key order, in one shard, as rollups do). */
export async function addQuality(db: Db, deltas: QualityDelta[]): Promise<void> {
  const shard = rollupShard();
  const key = (d: QualityDelta) => `${d.connector}|${d.network}|${d.bucket}`;
  for (const d of [...deltas].sort((a, b) => key(a).localeCompare(key(b)))) {
    await runCached(
      db,
      'delivery quality',
      1,
      (pg) =>
        `insert into "delivery_quality" ("connector", "network", "bucket", "shard", "delivered", "failed", "delivered_ms") values (${placeholders(pg, 7)}) ` +
        'on conflict ("connector", "network", "bucket", "shard") do update set "delivered" = delivery_quality.delivered + "excluded"."delivered", ' +
        '"failed" = delivery_quality.failed + "excluded"."failed", "delivered_ms" = delivery_quality.delivered_ms + "excluded"."delivered_ms"',
      [d.connector, d.network, d.bucket, shard, d.delivered, d.failed, d.deliveredMs],
      true,
    );
  }
}

export interface QualityTotal {
  connector: string;
  network: string;
  delivered: number;
  failed: number;
  deliveredMs: number;
}

/** Counters summed per connector and network over the hours from `since`. */
export async function qualityTotals(db: Db, since: number): Promise<QualityTotal[]> {
  const rows = await db
    .selectFrom('delivery_quality')
    .select((eb) => [
      'connector',
      'network',
      eb.fn.sum<number>('delivered').as('delivered'),
      eb.fn.sum<number>('failed').as('failed'),
      eb.fn.sum<number>('delivered_ms').as('delivered_ms'),
    ])
    .where('bucket', '>=', since)
    .groupBy(['connector', 'network'])
    .orderBy('connector')
    .orderBy('network')
    .execute();
  return rows.map((r) => ({
    connector: r.connector,
    network: r.network,
    delivered: Number(r.delivered),
    failed: Number(r.failed),
    deliveredMs: Number(r.delivered_ms),
  }));
}
