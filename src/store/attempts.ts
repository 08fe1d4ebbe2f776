import type { Db } from './db.ts';
import type { MessageAttemptTable } from './schema.ts';
import { batchParts, onPostgres, placeholders, rowValues, runCached, valuesTable } from './batch-sql.ts';
import { rollupShard } from './rollups.ts';

/** Each placement of a message with an operator, and delivery counters per connector and destination network. */

export type MessageAttemptRow = MessageAttemptTable;

const CHUNK = 200;

/** Records placements (one row each; a placement recorded already is left as it is). */
export async function insertAttempts(db: Db, rows: MessageAttemptRow[]): Promise<void> {
  for (const part of batchParts(onPostgres(db), rows, CHUNK)) {
    await db
      .insertInto('message_attempts')
      .values(part)
      .onConflict((oc) => oc.columns(['message_id', 'attempt']).doNothing())
      .execute();
  }
}

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
