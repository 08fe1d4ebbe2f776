import type { Kysely } from 'kysely';

/**
 * Single sign-on with OpenID Connect, per organisation: its provider (issuer, client, sealed client secret), who may
 * come in (email domains), the role of new users and an optional group-to-role mapping; and the sign-ins under way
 * (state, nonce and PKCE verifier between the redirect and the callback, in the database so any node takes the
 * callback).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_configs')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('allowed_domains', 'text', (c) => c.notNull())
    .addColumn('default_role', 'text', (c) => c.notNull())
    .addColumn('groups_claim', 'text', (c) => c.notNull())
    .addColumn('group_roles', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sso_logins')
    .addColumn('state', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_logins_expiry').on('sso_logins').columns(['expires_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
