import type { Kysely } from 'kysely';
import { uuidv7 } from '../../domain/ids.ts';
import { senderKindOf } from '../../domain/senders.ts';

/**
 * The sender registry, per organisation, and the organisation's opt-out mention settings. Every sender a channel
 * listed in its fromFieldList becomes an APPROVED sender of its organisation, valid in every country, so sends that
 * went before still go.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('senders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('countries', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('senders_organisation_value').on('senders').columns(['organisation_id', 'value']).unique().execute();
  await db.schema.alterTable('organisations').addColumn('opt_out_short_code', 'text').execute();
  await db.schema.alterTable('organisations').addColumn('opt_out_text', 'text').execute();

  await registerListedSenders(db, Date.now());
}

/** Each channel's fromFieldList entry, as an APPROVED sender of its organisation for every country (once). */
export async function registerListedSenders(db: Kysely<any>, now: number): Promise<void> {
  const channels = await db.selectFrom('channels').select(['organisation_id', 'from_field_list', 'created_at']).orderBy('created_at').execute();
  const seen = new Set<string>();
  for (const c of channels as Array<{ organisation_id: string; from_field_list: string }>) {
    for (const value of JSON.parse(c.from_field_list) as string[]) {
      const key = `${c.organisation_id}|${value}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const kind = senderKindOf(value);
      await db
        .insertInto('senders')
        .values({
          id: uuidv7(now),
          organisation_id: c.organisation_id,
          value,
          kind: kind.ok ? kind.kind : 'ALPHANUMERIC',
          countries: '[]',
          status: 'APPROVED',
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['organisation_id', 'value']).doNothing())
        .execute();
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
