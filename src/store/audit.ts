import type { Db } from './db.ts';
import type { AuditLogTable } from './schema.ts';

export type AuditRow = AuditLogTable;

/** Appends an entry (the log is never changed, only pruned past its retention). */
export async function insertAuditEntry(db: Db, row: AuditRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export interface AuditFilter {
  /** undefined: every scope; null: the platform's own entries; a string: that organisation's. */
  organisationId?: string | null;
  actorId?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  from?: number;
  until?: number;
}

/** Entries matching the filter, newest first. */
export async function listAuditEntries(db: Db, f: AuditFilter, offset: number, limit: number): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll();
  if (f.organisationId === null) q = q.where('organisation_id', 'is', null);
  else if (f.organisationId !== undefined) q = q.where('organisation_id', '=', f.organisationId);
  if (f.actorId !== undefined) q = q.where('actor_id', '=', f.actorId);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.objectType !== undefined) q = q.where('object_type', '=', f.objectType);
  if (f.objectId !== undefined) q = q.where('object_id', '=', f.objectId);
  if (f.from !== undefined) q = q.where('at', '>=', f.from);
  if (f.until !== undefined) q = q.where('at', '<', f.until);
  return q.orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

/** Deletes up to `limit` entries older than `before` (ids are UUIDv7, ordered by time). */
export async function pruneAuditEntries(db: Db, beforeId: string, limit: number): Promise<number> {
  const ids = (await db.selectFrom('audit_log').select('id').where('id', '<', beforeId).orderBy('id').limit(limit).execute()).map((r) => r.id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('audit_log').where('id', 'in', ids).execute();
  return ids.length;
}
