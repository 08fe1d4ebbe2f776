import type { Db } from './db.ts';
import type { TransferTable } from './schema.ts';

export interface TransferRecord {
  id: string;
  sourceId: string;
  destinationId: string;
  /** Micro-euros, always positive. */
  amount: number;
  currency: string;
  reference: string | null;
  description: string | null;
  credentialId: string | null;
  createdAt: number;
}

function toTransfer(r: TransferTable): TransferRecord {
  return {
    id: r.id,
    sourceId: r.source_id,
    destinationId: r.destination_id,
    amount: Number(r.amount),
    currency: r.currency,
    reference: r.reference,
    description: r.description,
    credentialId: r.credential_id,
    createdAt: Number(r.created_at),
  };
}

export async function insertTransfer(db: Db, t: TransferRecord): Promise<void> {
  await db
    .insertInto('transfers')
    .values({
      id: t.id,
      source_id: t.sourceId,
      destination_id: t.destinationId,
      amount: t.amount,
      currency: t.currency,
      reference: t.reference,
      description: t.description,
      credential_id: t.credentialId,
      created_at: t.createdAt,
    })
    .execute();
}

export async function findTransfer(db: Db, id: string): Promise<TransferRecord | null> {
  const row = await db.selectFrom('transfers').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toTransfer(row) : null;
}

export interface TransferFilter {
  /** Transfers from or to this organisation. */
  organisationId: string;
  /** DEBIT: only those it sent; CREDIT: only those it received. */
  side?: 'DEBIT' | 'CREDIT';
  from?: number;
  to?: number;
  offset: number;
  limit: number;
}

/** Newest first. */
export async function listTransfers(db: Db, f: TransferFilter): Promise<TransferRecord[]> {
  let q = db.selectFrom('transfers').selectAll();
  if (f.side === 'DEBIT') q = q.where('source_id', '=', f.organisationId);
  else if (f.side === 'CREDIT') q = q.where('destination_id', '=', f.organisationId);
  else q = q.where((eb) => eb.or([eb('source_id', '=', f.organisationId), eb('destination_id', '=', f.organisationId)]));
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
  const rows = await q.orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
  return rows.map(toTransfer);
}
