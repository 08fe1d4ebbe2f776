import type { Db } from './db.ts';
import type { SsoConfigTable, SsoLoginTable, UserLinkTable, UserSessionTable, UserTable } from './schema.ts';

/** Console users, their sessions and one-time links, and organisations' single sign-on. */

export type UserRow = UserTable;
export type UserSessionRow = UserSessionTable;
export type UserLinkRow = UserLinkTable;
export type SsoConfigRow = SsoConfigTable;
export type SsoLoginRow = SsoLoginTable;

export async function insertUser(db: Db, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function findUser(db: Db, id: string): Promise<UserRow | null> {
  return (await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | null> {
  return (await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()) ?? null;
}

export async function findUserBySsoSubject(db: Db, subject: string): Promise<UserRow | null> {
  return (await db.selectFrom('users').selectAll().where('sso_subject', '=', subject).executeTakeFirst()) ?? null;
}

export function listUsers(db: Db, organisationId: string): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('organisation_id', '=', organisationId).orderBy('created_at').orderBy('id').execute();
}

export async function updateUser(db: Db, id: string, set: Partial<Omit<UserRow, 'id'>>): Promise<void> {
  await db.updateTable('users').set(set).where('id', '=', id).execute();
}

export async function deleteUser(db: Db, id: string): Promise<boolean> {
  await db.deleteFrom('user_sessions').where('user_id', '=', id).execute();
  const r = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** How many active users of an organisation hold `role` (the last OWNER is never removed or demoted). */
export async function countUsersWithRole(db: Db, organisationId: string, role: string): Promise<number> {
  const r = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('organisation_id', '=', organisationId)
    .where('role', '=', role)
    .where('state', '=', 'ACTIVE')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertSession(db: Db, row: UserSessionRow): Promise<void> {
  await db.insertInto('user_sessions').values(row).execute();
}

export async function findSession(db: Db, tokenHash: string): Promise<UserSessionRow | null> {
  return (await db.selectFrom('user_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()) ?? null;
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteSessionsOf(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
}

export async function insertLink(db: Db, row: UserLinkRow): Promise<void> {
  await db.insertInto('user_links').values(row).execute();
}

export async function findLink(db: Db, tokenHash: string): Promise<UserLinkRow | null> {
  return (await db.selectFrom('user_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()) ?? null;
}

/** Marks a link used; false when it was used already (two tabs accepting one invitation: one wins). */
export async function useLink(db: Db, tokenHash: string, at: number): Promise<boolean> {
  const r = await db.updateTable('user_links').set({ used_at: at }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export function listInvitations(db: Db, organisationId: string, now: number): Promise<UserLinkRow[]> {
  return db
    .selectFrom('user_links')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('kind', '=', 'INVITATION')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .execute();
}

export async function deleteInvitation(db: Db, organisationId: string, id: string): Promise<boolean> {
  const r = await db
    .deleteFrom('user_links')
    .where('id', '=', id)
    .where('organisation_id', '=', organisationId)
    .where('kind', '=', 'INVITATION')
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Sessions, links and sign-ins under way that ended before `before` (a pruning task). */
export async function deleteExpiredUserRows(db: Db, before: number): Promise<number> {
  const a = await db.deleteFrom('user_sessions').where('expires_at', '<', before).executeTakeFirst();
  const b = await db.deleteFrom('user_links').where('expires_at', '<', before).executeTakeFirst();
  const c = await db.deleteFrom('sso_logins').where('expires_at', '<', before).executeTakeFirst();
  return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
}

export async function findSsoConfig(db: Db, organisationId: string): Promise<SsoConfigRow | null> {
  return (await db.selectFrom('sso_configs').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst()) ?? null;
}

export async function saveSsoConfig(db: Db, row: SsoConfigRow): Promise<void> {
  const { organisation_id: _, ...rest } = row;
  await db
    .insertInto('sso_configs')
    .values(row)
    .onConflict((oc) => oc.column('organisation_id').doUpdateSet(rest))
    .execute();
}

export async function deleteSsoConfig(db: Db, organisationId: string): Promise<boolean> {
  const r = await db.deleteFrom('sso_configs').where('organisation_id', '=', organisationId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function insertSsoLogin(db: Db, row: SsoLoginRow): Promise<void> {
  await db.insertInto('sso_logins').values(row).execute();
}

/** Takes a sign-in under way: it is read and deleted at once, so a state answers one callback only. */
export async function takeSsoLogin(db: Db, state: string): Promise<SsoLoginRow | null> {
  const row = (await db.selectFrom('sso_logins').selectAll().where('state', '=', state).executeTakeFirst()) ?? null;
  if (!row) return null;
  const r = await db.deleteFrom('sso_logins').where('state', '=', state).executeTakeFirst();
  return Number(r.numDeletedRows) > 0 ? row : null;
}
