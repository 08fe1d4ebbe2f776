import { sql } from 'kysely';
import { changesSettledDay } from '../domain/consumption-periods.ts';
import { columnsOf, insertRows } from './batch-sql.ts';
import type { Db } from './db.ts';
import type { ConsumptionRollupTable } from './schema.ts';

const ROLLUP_COLUMNS = columnsOf<ConsumptionRollupTable>('consumption_rollups', {
  organisation_id: 'text',
  channel_id: 'text',
  channel_type: 'text',
  day: 'text',
  status: 'text',
  mcc_mnc: 'text',
  price_kind: 'text',
  shard: 'integer',
  quantity: 'bigint',
  messages: 'bigint',
  amount: 'bigint',
});

/** How many rows of one key writers spread over. */
export const ROLLUP_SHARDS = 8;

/**
 * Rows of each key (shards ROLLUP_SHARDS and up) kept for the transactions that hold a payer's balance locked before
 * they write their rollups: accepts that check spending limits or shared charges, number lookups, messages priced
 * again. The others — most accepts, every change of status with a refund — write their rollups first and take the
 * balance last. Writing the same rows in the two orders was a deadlock (one holds the balance and waits for a rollup
 * row, the other holds that row and waits for the balance); on rows of their own, the two kinds never wait for each
 * other's rollups, whatever order each takes its locks in.
 */
export const BALANCE_FIRST_SHARDS = 2;

/**
 * The row of each key a writing transaction adds to: one of ROLLUP_SHARDS at random, so two transactions — on any
 * nodes — that count the same tenant's day wait on each other one time in eight instead of every time; one of the
 * BALANCE_FIRST_SHARDS after them when the transaction holds a balance already.
 */
export function rollupShard(balanceHeld = false): number {
  return balanceHeld ? ROLLUP_SHARDS + Math.floor(Math.random() * BALANCE_FIRST_SHARDS) : Math.floor(Math.random() * ROLLUP_SHARDS);
}

export interface RollupKey {
  organisationId: string;
  channelId: string;
  channelType: string;
  /** UTC day of the billed item (YYYY-MM-DD): a message's acceptance day. */
  day: string;
  status: string;
  mccMnc: string;
  priceKind: string;
}

export interface RollupDelta extends RollupKey {
  /** Billed units (SMS parts, RCS messages, started 30 s of call, lookups). */
  quantity: number;
  messages: number;
  /** Net charged micro-euros. */
  amount: number;
}

/** Accumulates deltas by key, so one transaction writes each rollup row once. */
export class RollupBatch {
  private readonly deltas = new Map<string, RollupDelta>();
  /** The organisations whose settled days the last `write` changed, their epochs not raised yet. */
  private settled: string[] = [];

  add(key: RollupKey, quantity: number, messages: number, amount: number): void {
    if (quantity === 0 && messages === 0 && amount === 0) return;
    const k = `${key.organisationId}|${key.channelId}|${key.day}|${key.status}|${key.mccMnc}|${key.priceKind}`;
    const d = this.deltas.get(k);
    if (d) {
      d.quantity += quantity;
      d.messages += messages;
      d.amount += amount;
    } else {
      this.deltas.set(k, { ...key, quantity, messages, amount });
    }
  }

  /** Moves one item from a status bucket to another. */
  move(key: RollupKey, toStatus: string, quantity: number, amount: number): void {
    this.add(key, -quantity, -1, -amount);
    this.add({ ...key, status: toStatus }, quantity, 1, amount);
  }

  get size(): number {
    return this.deltas.size;
  }

  /**
   * Writes the accumulated deltas inside the caller's transaction, in one shard, in key order (the order of locks),
   * and raises the consumption epoch of each organisation whose settled days it changes. The batch keeps its deltas:
   * a transaction retried after a deadlock writes them again. Locks: `balanceHeld`, the transaction locked a balance
   * before (see BALANCE_FIRST_SHARDS); `balanceAfter`, it changes a balance after, and raises the epochs itself
   * then (`raiseEpochs`).
   */
  async write(db: Db, now = Date.now(), locks: { balanceHeld?: boolean; balanceAfter?: boolean } = {}): Promise<void> {
    const keyOf = (d: RollupDelta) => `${d.organisationId}|${d.channelId}|${d.day}|${d.status}|${d.mccMnc}|${d.priceKind}`;
    const rows = [...this.deltas.values()]
      .filter((d) => d.quantity !== 0 || d.messages !== 0 || d.amount !== 0)
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    const shard = rollupShard(locks.balanceHeld);
    await insertRows(
      db,
      ROLLUP_COLUMNS,
      rows.map((d) => ({
        organisation_id: d.organisationId,
        channel_id: d.channelId,
        channel_type: d.channelType,
        day: d.day,
        status: d.status,
        mcc_mnc: d.mccMnc,
        price_kind: d.priceKind,
        shard,
        quantity: d.quantity,
        messages: d.messages,
        amount: d.amount,
      })),
      500,
      'on conflict ("organisation_id", "channel_id", "day", "status", "mcc_mnc", "price_kind", "shard") do update set ' +
        '"quantity" = consumption_rollups.quantity + excluded.quantity, "messages" = consumption_rollups.messages + excluded.messages, ' +
        '"amount" = consumption_rollups.amount + excluded.amount',
    );
    this.settled = [...new Set(rows.filter((d) => changesSettledDay(d.day, now)).map((d) => d.organisationId))].sort();
    if (!locks.balanceAfter) await this.raiseEpochs(db);
  }

  /**
   * Raises the consumption epoch of each organisation whose settled days the last `write` changed (telling every
   * node), when it left them for later. An epoch is a row that every transaction changing that organisation's past
   * days locks, some holding its balance already and some taking the balance after their rollups: raised after the
   * balance in every transaction, the two never wait for each other in opposite orders.
   */
  async raiseEpochs(db: Db): Promise<void> {
    const settled = this.settled;
    this.settled = [];
    for (const organisationId of settled) await raiseConsumptionEpoch(db, organisationId);
  }
}

/** Tells every node that an organisation's settled consumption changed (in the caller's transaction). */
async function raiseConsumptionEpoch(db: Db, organisationId: string): Promise<void> {
  await db
    .insertInto('consumption_epochs')
    .values({ organisation_id: organisationId, epoch: 1 })
    .onConflict((oc) => oc.column('organisation_id').doUpdateSet({ epoch: sql`consumption_epochs.epoch + 1` }))
    .execute();
}

/** An organisation's consumption epoch (0 before any change to a settled day). */
export async function consumptionEpoch(db: Db, organisationId: string): Promise<number> {
  const row = await db.selectFrom('consumption_epochs').select('epoch').where('organisation_id', '=', organisationId).executeTakeFirst();
  return Number(row?.epoch ?? 0);
}
