import type { Kysely } from 'kysely';

/**
 * The audit log: one row per change made through the management interfaces — who (actor), what (action, object,
 * before and after, secrets removed), when, and from where — append-only, per organisation (null: the operator's own
 * changes of the platform). Listed newest first by organisation and by time, pruned by its own retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('organisation_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text')
    .addColumn('before_state', 'text')
    .addColumn('after_state', 'text')
    .addColumn('remote_address', 'text')
    .addColumn('request_id', 'text')
    .addColumn('interface', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_organisation').on('audit_log').columns(['organisation_id', 'id']).execute();
}
