import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { OrganisationSendingWindowTable } from './schema.ts';

/** Organisations' own sending windows, and the places taken on each channel's ramp. */

export type SendingWindowRow = OrganisationSendingWindowTable;

export async function findSendingWindow(db: Db, organisationId: string): Promise<SendingWindowRow | null> {
  return (await db.selectFrom('organisation_sending_windows').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst()) ?? null;
}

export async function saveSendingWindow(db: Db, row: SendingWindowRow): Promise<void> {
  const { organisation_id: _, ...rest } = row;
  await db
    .insertInto('organisation_sending_windows')
    .values(row)
    .onConflict((oc) => oc.column('organisation_id').doUpdateSet(rest))
    .execute();
}

export async function deleteSendingWindow(db: Db, organisationId: string): Promise<void> {
  await db.deleteFrom('organisation_sending_windows').where('organisation_id', '=', organisationId).execute();
}

/**
 * Takes the next `count` places on a channel's ramp to `opening` (one statement, so concurrent accepts on any node
 * never share a place); answers the first one's number, from 0.
 */
export async function takeRampPlaces(db: Db, channelId: string, opening: number, count: number): Promise<number> {
  const row = await db
    .insertInto('sending_window_ramps')
    .values({ channel_id: channelId, opening, taken: count })
    .onConflict((oc) => oc.columns(['channel_id', 'opening']).doUpdateSet({ taken: sql<number>`sending_window_ramps.taken + ${count}` }))
    .returning('taken')
    .executeTakeFirstOrThrow();
  return Number(row.taken) - count;
}

/** Forgets ramps whose opening is long past (a pruning task). */
export async function deleteRampsBefore(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('sending_window_ramps').where('opening', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
