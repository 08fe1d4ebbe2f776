import type { Kysely } from 'kysely';

/**
 * The process that claimed an idempotency key for a request in progress (`node id@start time`): a retry finds the
 * key free as soon as that process is known to be gone (its node stopped beating, or started again), instead of a
 * minute after the claim. Claims made before have none, and keep the minute.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('claimed_by', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
