import type { Db } from './db.ts';
import type { AccountLoginTable } from './schema.ts';

/** Logins of sub-accounts: a login and a password that stand for the sub-account's ADMIN credential. */

export type AccountLoginRow = AccountLoginTable;

export async function insertAccountLogin(db: Db, row: AccountLoginRow): Promise<void> {
  await db.insertInto('account_logins').values(row).execute();
}

export async function findAccountLoginByKey(db: Db, loginKey: string): Promise<AccountLoginRow | null> {
  return (await db.selectFrom('account_logins').selectAll().where('login_key', '=', loginKey).executeTakeFirst()) ?? null;
}

export async function findAccountLoginOf(db: Db, organisationId: string): Promise<AccountLoginRow | null> {
  return (await db.selectFrom('account_logins').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst()) ?? null;
}

/** Deletes the login; false when it was gone already. */
export async function deleteAccountLogin(db: Db, organisationId: string): Promise<boolean> {
  const r = await db.deleteFrom('account_logins').where('organisation_id', '=', organisationId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
