import type { Kysely } from 'kysely';

/**
 * What the legacy HTTP interface keeps besides messages: an organisation's address book (contacts in named groups, a
 * send's `groupe`) and the logins of sub-accounts (a login and a password hash, standing for an ADMIN key).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('msisdn', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('company', 'text')
    .addColumn('other', 'text')
    .addColumn('birth_date', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contacts_organisation_msisdn').on('contacts').columns(['organisation_id', 'msisdn']).unique().execute();

  await db.schema
    .createTable('contact_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contact_groups_organisation_name').on('contact_groups').columns(['organisation_id', 'name']).unique().execute();

  await db.schema
    .createTable('contact_group_members')
    .addColumn('group_id', 'text', (c) => c.notNull().references('contact_groups.id'))
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addPrimaryKeyConstraint('contact_group_members_pk', ['group_id', 'contact_id'])
    .execute();

  await db.schema
    .createTable('account_logins')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey().references('organisations.id'))
    .addColumn('login', 'text', (c) => c.notNull())
    // The login in lower case: logins are unique whatever their case.
    .addColumn('login_key', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.notNull().references('credentials.id'))
    .addColumn('reference', 'text')
    .addColumn('contact', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
