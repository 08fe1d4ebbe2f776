import type { Kysely } from 'kysely';

/**
 * People who sign in to the console: users (each of one organisation, `operator` for the operator's own people, with
 * one role, a scrypt password hash or none when they sign in through single sign-on), their sessions (kept as a hash
 * of the cookie's token) and one-time links (invitations and password resets, kept as a hash of the link's token).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('sso_subject', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('signed_in_at', 'bigint')
    .execute();
  // An email signs in to one organisation: the sign-in form asks for nothing else.
  await db.schema.createIndex('users_email').on('users').columns(['email']).unique().execute();
  await db.schema.createIndex('users_sso_subject').on('users').columns(['sso_subject']).unique().execute();
  await db.schema.createIndex('users_organisation').on('users').columns(['organisation_id', 'created_at']).execute();
  await db.schema
    .createTable('user_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_sessions_user').on('user_sessions').columns(['user_id']).execute();
  await db.schema.createIndex('user_sessions_expiry').on('user_sessions').columns(['expires_at']).execute();
  await db.schema
    .createTable('user_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('user_links_organisation').on('user_links').columns(['organisation_id', 'kind', 'created_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
