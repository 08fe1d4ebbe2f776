import type { Kysely } from 'kysely';

/**
 * Where an organisation is: the country its national numbers belong to (none: numbers must be international) and the
 * time zone in which dates written without an offset are read.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organisations').addColumn('default_country', 'text').execute();
  await db.schema
    .alterTable('organisations')
    .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('Europe/Paris'))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
