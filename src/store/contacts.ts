import type { Db } from './db.ts';
import type { ContactGroupTable, ContactTable } from './schema.ts';

/** An organisation's address book: contacts (one per number) in named groups. */

export type ContactRow = ContactTable;
export type ContactGroupRow = ContactGroupTable;

export async function findContactByMsisdn(db: Db, organisationId: string, msisdn: string): Promise<ContactRow | null> {
  return (await db.selectFrom('contacts').selectAll().where('organisation_id', '=', organisationId).where('msisdn', '=', msisdn).executeTakeFirst()) ?? null;
}

/** Inserts a contact unless the organisation has one with its number already; true when it was inserted. */
export async function insertContact(db: Db, row: ContactRow): Promise<boolean> {
  const r = await db
    .insertInto('contacts')
    .values(row)
    .onConflict((oc) => oc.columns(['organisation_id', 'msisdn']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function updateContact(
  db: Db,
  id: string,
  set: Pick<ContactRow, 'last_name' | 'first_name' | 'company' | 'other' | 'birth_date' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('contacts').set(set).where('id', '=', id).execute();
}

/** The organisation's groups of these names (those that exist). */
export async function findGroups(db: Db, organisationId: string, names: string[]): Promise<ContactGroupRow[]> {
  if (names.length === 0) return [];
  return db.selectFrom('contact_groups').selectAll().where('organisation_id', '=', organisationId).where('name', 'in', names).execute();
}

/** Creates the group unless it exists (another request may create it at the same time). */
export async function insertGroupIfMissing(db: Db, row: ContactGroupRow): Promise<void> {
  await db
    .insertInto('contact_groups')
    .values(row)
    .onConflict((oc) => oc.columns(['organisation_id', 'name']).doNothing())
    .execute();
}

export async function addToGroups(db: Db, contactId: string, groupIds: string[]): Promise<void> {
  if (groupIds.length === 0) return;
  await db
    .insertInto('contact_group_members')
    .values(groupIds.map((group_id) => ({ group_id, contact_id: contactId })))
    .onConflict((oc) => oc.columns(['group_id', 'contact_id']).doNothing())
    .execute();
}

/** The names of a contact's groups, sorted. */
export async function groupNamesOf(db: Db, contactId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('contact_group_members')
    .innerJoin('contact_groups', 'contact_groups.id', 'contact_group_members.group_id')
    .select('contact_groups.name')
    .where('contact_group_members.contact_id', '=', contactId)
    .orderBy('contact_groups.name')
    .execute();
  return rows.map((r) => r.name);
}

/** The numbers of a group's contacts, in the order they were added to the address book; at most `limit`. */
export async function groupMsisdns(db: Db, groupId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('contact_group_members')
    .innerJoin('contacts', 'contacts.id', 'contact_group_members.contact_id')
    .select('contacts.msisdn')
    .where('contact_group_members.group_id', '=', groupId)
    .orderBy('contacts.created_at')
    .orderBy('contacts.id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.msisdn);
}
