import { sql } from 'kysely';
import { uuidv7 } from '../domain/ids.ts';
import { columnsOf, insertRows } from './batch-sql.ts';
import type { Db } from './db.ts';
import type { LedgerTable } from './schema.ts';

export type LedgerKind = 'TOPUP' | 'CHARGE' | 'REFUND' | 'TRANSFER_IN' | 'TRANSFER_OUT' | 'ADJUSTMENT';

export interface LedgerEntry {
  id: string;
  organisationId: string;
  amount: number;
  balanceAfter: number;
  kind: LedgerKind;
  reference: string | null;
  description: string | null;
  messageId: string | null;
  transferId: string | null;
  createdAt: number;
}

export function toLedgerEntry(r: LedgerTable): LedgerEntry {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    amount: r.amount,
    balanceAfter: r.balance_after,
    kind: r.kind as LedgerKind,
    reference: r.reference,
    description: r.description,
    messageId: r.message_id,
    transferId: r.transfer_id,
    createdAt: r.created_at,
  };
}

export interface BalanceChange {
  organisationId: string;
  /** Signed micro-euros: negative debits. */
  amount: number;
  kind: LedgerKind;
  reference?: string | null;
  description?: string | null;
  messageId?: string | null;
  transferId?: string | null;
  at: number;
  /** The lowest balance this change may leave (0 unless the organisation may go negative). */
  floor?: number;
}

/**
 * Changes a balance and appends its ledger row; must run inside the caller's transaction. The conditional
 * UPDATE is atomic on both dialects (PostgreSQL row lock, SQLite single writer), so a balance never crosses its
 * floor whatever the concurrency. Returns null when the change would cross the floor (nothing is written).
 */
export async function applyBalanceChange(db: Db, change: BalanceChange): Promise<LedgerEntry | null> {
  const floor = change.floor ?? 0;
  let q = db
    .updateTable('organisations')
    .set({ balance: sql<number>`balance + ${change.amount}` })
    .where('id', '=', change.organisationId);
  if (change.amount < 0) q = q.where(sql<boolean>`balance + ${change.amount} >= ${floor}`);
  const row = await q.returning('balance').executeTakeFirst();
  if (!row) return null;
  const entry: LedgerEntry = {
    id: uuidv7(change.at),
    organisationId: change.organisationId,
    amount: change.amount,
    balanceAfter: Number(row.balance),
    kind: change.kind,
    reference: change.reference ?? null,
    description: change.description ?? null,
    messageId: change.messageId ?? null,
    transferId: change.transferId ?? null,
    createdAt: change.at,
  };
  await db
    .insertInto('ledger')
    .values({
      id: entry.id,
      organisation_id: entry.organisationId,
      amount: entry.amount,
      balance_after: entry.balanceAfter,
      kind: entry.kind,
      reference: entry.reference,
      description: entry.description,
      message_id: entry.messageId,
      transfer_id: entry.transferId,
      created_at: entry.createdAt,
    })
    .execute();
  return entry;
}

export async function listLedger(db: Db, organisationId: string, opts: { offset: number; limit: number; from?: number; to?: number }): Promise<LedgerEntry[]> {
  let q = db.selectFrom('ledger').selectAll().where('organisation_id', '=', organisationId);
  if (opts.from !== undefined) q = q.where('created_at', '>=', opts.from);
  if (opts.to !== undefined) q = q.where('created_at', '<', opts.to);
  const rows = await q.orderBy('id', 'desc').offset(opts.offset).limit(opts.limit).execute();
  return rows.map(toLedgerEntry);
}

/**
 * Credits one organisation for several items in one balance update (one row lock, one write), with a ledger row
 * per item carrying its running balance. Must run inside the caller's transaction.
 */
export async function applyCredits(db: Db, organisationId: string, items: Array<Omit<BalanceChange, 'organisationId' | 'floor'>>): Promise<void> {
  const total = items.reduce((a, i) => a + i.amount, 0);
  const row = await db
    .updateTable('organisations')
    .set({ balance: sql<number>`balance + ${total}` })
    .where('id', '=', organisationId)
    .returning('balance')
    .executeTakeFirst();
  if (!row) return;
  let running = Number(row.balance) - total;
  const rows = items.map((i) => {
    running += i.amount;
    return {
      id: uuidv7(i.at),
      organisation_id: organisationId,
      amount: i.amount,
      balance_after: running,
      kind: i.kind,
      reference: i.reference ?? null,
      description: i.description ?? null,
      message_id: i.messageId ?? null,
      transfer_id: i.transferId ?? null,
      created_at: i.at,
    };
  });
  for (let k = 0; k < rows.length; k += 400)
    await db
      .insertInto('ledger')
      .values(rows.slice(k, k + 400))
      .execute();
}

export type LedgerRow = LedgerTable;

const LEDGER_COLUMNS = columnsOf<LedgerRow>('ledger', {
  id: 'text',
  organisation_id: 'text',
  amount: 'bigint',
  balance_after: 'bigint',
  kind: 'text',
  reference: 'text',
  description: 'text',
  message_id: 'text',
  transfer_id: 'text',
  created_at: 'bigint',
});

/** Writes ledger rows as they are (the accept transaction computes each row's running balance). */
export function insertLedgerRows(db: Db, rows: LedgerRow[]): Promise<void> {
  return insertRows(db, LEDGER_COLUMNS, rows, 400);
}
