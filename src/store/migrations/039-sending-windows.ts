import type { Kysely } from 'kysely';

/**
 * Sending windows: an organisation's own hours for marketing traffic (without a row, the default of its country), and
 * the ramp's places taken per channel and opening, so that deferred messages accepted on any node line up.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('organisation_sending_windows')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('hours', 'text', (c) => c.notNull())
    .addColumn('holiday_calendar', 'text', (c) => c.notNull())
    .addColumn('holidays', 'text', (c) => c.notNull())
    .addColumn('ramp_per_second', 'integer', (c) => c.notNull())
    .addColumn('channel_ids', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sending_window_ramps')
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('opening', 'bigint', (c) => c.notNull())
    .addColumn('taken', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sending_window_ramps_pk', ['channel_id', 'opening'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
