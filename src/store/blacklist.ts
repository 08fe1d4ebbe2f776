import type { Db } from './db.ts';
import type { BlacklistTable } from './schema.ts';

/** Numbers an organisation must not send marketing to: STOP replies and the API add them, START and the API remove. */

export type BlacklistEntry = BlacklistTable;

/** An organisation's entries, newest first, optionally only one number. */
export async function listBlacklist(db: Db, organisationId: string, opts: { msisdn?: string; offset: number; limit: number }): Promise<BlacklistEntry[]> {
  let query = db.selectFrom('blacklist').selectAll().where('organisation_id', '=', organisationId);
  if (opts.msisdn) query = query.where('msisdn', '=', opts.msisdn);
  return query.orderBy('created_at', 'desc').orderBy('msisdn').offset(opts.offset).limit(opts.limit).execute();
}

/** Adds a number; false when the organisation already had it (the existing entry is kept as it is). */
export async function addToBlacklist(db: Db, entry: BlacklistEntry): Promise<boolean> {
  const res = await db
    .insertInto('blacklist')
    .values(entry)
    .onConflict((oc) => oc.columns(['organisation_id', 'msisdn']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Removes a number; false when the organisation did not have it. */
export async function removeFromBlacklist(db: Db, organisationId: string, msisdn: string): Promise<boolean> {
  const res = await db.deleteFrom('blacklist').where('organisation_id', '=', organisationId).where('msisdn', '=', msisdn).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Which of these numbers are on the organisation's list. */
export async function blacklistedAmong(db: Db, organisationId: string, numbers: string[]): Promise<string[]> {
  if (numbers.length === 0) return [];
  const rows = await db.selectFrom('blacklist').select('msisdn').where('organisation_id', '=', organisationId).where('msisdn', 'in', numbers).execute();
  return rows.map((r) => r.msisdn);
}
