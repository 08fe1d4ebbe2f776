import type { Db } from './db.ts';
import { listParts, onPostgres } from './batch-sql.ts';
import type { UnmatchedReceiptTable } from './schema.ts';

/** Receipts whose message was not found yet, kept to be matched again. */

export type UnmatchedReceiptRow = UnmatchedReceiptTable;

export async function parkReceipts(db: Db, rows: UnmatchedReceiptRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 300)
    await db
      .insertInto('unmatched_receipts')
      .values(rows.slice(i, i + 300))
      .execute();
}

export async function dropReceipts(db: Db, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500)
    await db
      .deleteFrom('unmatched_receipts')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
}

export async function rescheduleReceipt(db: Db, id: string, attempts: number, nextAttemptAt: number): Promise<void> {
  await db.updateTable('unmatched_receipts').set({ attempts, next_attempt_at: nextAttemptAt, lease_until: null }).where('id', '=', id).execute();
}

/** Kept receipts of `connector` for these upstream ids. */
export async function findParked(db: Db, connector: string, upstreamIds: string[]): Promise<UnmatchedReceiptRow[]> {
  const out: UnmatchedReceiptRow[] = [];
  for (const part of listParts(onPostgres(db), upstreamIds, 500)) {
    out.push(...(await db.selectFrom('unmatched_receipts').selectAll().where('connector', '=', connector).where('upstream_id', 'in', part).execute()));
  }
  return out;
}
