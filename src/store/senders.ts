import type { RegisteredSender, SenderKind, SenderStatus } from '../domain/senders.ts';
import type { Db } from './db.ts';
import type { SenderTable } from './schema.ts';

function toSender(r: SenderTable): RegisteredSender {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    value: r.value,
    kind: r.kind as SenderKind,
    countries: JSON.parse(r.countries) as string[],
    status: r.status as SenderStatus,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(s: RegisteredSender): SenderTable {
  return {
    id: s.id,
    organisation_id: s.organisationId,
    value: s.value,
    kind: s.kind,
    countries: JSON.stringify(s.countries),
    status: s.status,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export async function listSenders(db: Db, organisationId: string): Promise<RegisteredSender[]> {
  const rows = await db.selectFrom('senders').selectAll().where('organisation_id', '=', organisationId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toSender);
}

export async function findSender(db: Db, id: string): Promise<RegisteredSender | null> {
  const row = await db.selectFrom('senders').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toSender(row) : null;
}

/** Inserts the sender unless its organisation already has that value; answers whether it was inserted. */
export async function insertSenderIfAbsent(db: Db, s: RegisteredSender): Promise<boolean> {
  const r = await db
    .insertInto('senders')
    .values(toRow(s))
    .onConflict((oc) => oc.columns(['organisation_id', 'value']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function updateSender(db: Db, id: string, patch: { status?: SenderStatus; countries?: string[]; updatedAt: number }): Promise<void> {
  await db
    .updateTable('senders')
    .set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.countries !== undefined ? { countries: JSON.stringify(patch.countries) } : {}),
      updated_at: patch.updatedAt,
    })
    .where('id', '=', id)
    .execute();
}

export async function deleteSender(db: Db, id: string): Promise<void> {
  await db.deleteFrom('senders').where('id', '=', id).execute();
}
