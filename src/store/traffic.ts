import type { Db } from './db.ts';
import type { AuthLockoutTable, OrganisationTrafficLimitTable } from './schema.ts';

/** Lockouts of client addresses, and organisations' own traffic limits. */

export type AuthLockoutRow = AuthLockoutTable;
export type OrganisationTrafficLimitRow = OrganisationTrafficLimitTable;

export async function findLockout(db: Db, address: string): Promise<AuthLockoutRow | null> {
  return (await db.selectFrom('auth_lockouts').selectAll().where('address', '=', address).executeTakeFirst()) ?? null;
}

export async function saveLockout(db: Db, row: AuthLockoutRow): Promise<void> {
  await db
    .insertInto('auth_lockouts')
    .values(row)
    .onConflict((oc) => oc.column('address').doUpdateSet({ strikes: row.strikes, locked_until: row.locked_until, updated_at: row.updated_at }))
    .execute();
}

export async function deleteLockoutsBefore(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('auth_lockouts').where('updated_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function listTrafficLimits(db: Db, organisationId: string): Promise<OrganisationTrafficLimitRow[]> {
  return db.selectFrom('organisation_traffic_limits').selectAll().where('organisation_id', '=', organisationId).execute();
}

/** Replaces an organisation's own limits (none: the defaults apply). */
export async function replaceTrafficLimits(db: Db, organisationId: string, rows: OrganisationTrafficLimitRow[]): Promise<void> {
  await db.deleteFrom('organisation_traffic_limits').where('organisation_id', '=', organisationId).execute();
  if (rows.length > 0) await db.insertInto('organisation_traffic_limits').values(rows).execute();
}
