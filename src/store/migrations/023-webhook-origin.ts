import type { Kysely } from 'kysely';

/**
 * Each webhook delivery records its destination's origin, so a sender whose queue for one origin is full claims the
 * deliveries of other origins instead of claiming and handing back. Deliveries written before have none and are
 * claimed as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('origin', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
