import type { Kysely } from 'kysely';

/** Traffic limits: addresses locked out after failing to authenticate, and organisations' own request limits. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('auth_lockouts')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('strikes', 'integer', (c) => c.notNull())
    .addColumn('locked_until', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('organisation_traffic_limits')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('route_group', 'text', (c) => c.notNull())
    .addColumn('per_key', 'integer', (c) => c.notNull())
    .addColumn('per_organisation', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('organisation_traffic_limits_pk', ['organisation_id', 'route_group'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
