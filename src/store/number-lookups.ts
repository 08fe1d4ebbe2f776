import type { Db } from './db.ts';
import type { NumberLookupTable } from './schema.ts';

/** Live lookup results per number, shared by every node: what routing knows of the network a number is on now. */

export type NumberLookupRow = NumberLookupTable;

/** Creates or replaces a number's result (a new lookup refreshes it). */
export async function saveNumberLookup(db: Db, row: NumberLookupRow): Promise<void> {
  const { msisdn, ...rest } = row;
  await db
    .insertInto('number_lookups')
    .values(row)
    .onConflict((oc) => oc.column('msisdn').doUpdateSet(rest))
    .execute();
}

/** The results of these numbers that have not expired by `now`. */
export async function findNumberLookups(db: Db, msisdns: readonly string[], now: number): Promise<NumberLookupRow[]> {
  if (msisdns.length === 0) return [];
  const rows = await db
    .selectFrom('number_lookups')
    .selectAll()
    .where('msisdn', 'in', [...new Set(msisdns)])
    .where('expires_at', '>', now)
    .execute();
  return rows.map((r) => ({ ...r, looked_up_at: Number(r.looked_up_at), expires_at: Number(r.expires_at) }));
}
