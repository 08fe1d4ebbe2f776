import { sql } from 'kysely';
import { slidingRetryAt, SLIDING_SLOT_MS } from '../domain/sliding-second.ts';
import { inTransaction, type Store } from './db.ts';

/**
 * Takes up to `want` units of one limit's window, atomically across nodes: the window's `used` grows by what is
 * granted and never past `limit`. Returns how many were granted (0 when the window is spent). On PostgreSQL the
 * window's row is locked for the moment of the grant.
 */
export async function takeFromWindow(store: Store, key: string, windowStart: number, want: number, limit: number): Promise<number> {
  return inTransaction(store, async (trx) => {
    await trx
      .insertInto('rate_windows')
      .values({ key, window_start: windowStart, used: 0 })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doNothing())
      .execute();
    let q = trx.selectFrom('rate_windows').select('used').where('key', '=', key).where('window_start', '=', windowStart);
    if (store.dialect === 'postgres') q = q.forUpdate();
    const used = Number((await q.executeTakeFirstOrThrow()).used);
    const granted = Math.max(0, Math.min(want, limit - used));
    if (granted > 0) {
      await trx
        .updateTable('rate_windows')
        .set({ used: used + granted })
        .where('key', '=', key)
        .where('window_start', '=', windowStart)
        .execute();
    }
    return granted;
  });
}

/** Forgets windows that ended before `before`. */
export async function deleteRateWindowsBefore(store: Store, before: number): Promise<number> {
  const res = await store.db.deleteFrom('rate_windows').where('window_start', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Takes units for the slot starting at `slotStart` of a rate over every sliding second (see sliding-second.ts), for
 * the whole cluster: `need` units at least, up to `want`, or none when `need` does not fit in the `span` slots that
 * end with this one; then `retryAt` says when it will. Nodes take one key's units one at a time (a lock of the key on
 * PostgreSQL: the span is several rows, which no row lock covers).
 */
export async function takeFromSlidingSecond(
  store: Store,
  key: string,
  slotStart: number,
  span: number,
  limit: number,
  units: { need: number; want: number },
): Promise<{ granted: number; retryAt: number | null }> {
  const slot = Math.floor(slotStart / SLIDING_SLOT_MS);
  return inTransaction(store, async (trx) => {
    if (store.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    const rows = await trx
      .selectFrom('rate_windows')
      .select(['window_start', 'used'])
      .where('key', '=', key)
      .where('window_start', '>', (slot - span) * SLIDING_SLOT_MS)
      .where('window_start', '<=', slotStart)
      .execute();
    const slots = rows.map((r) => ({ slot: Math.floor(Number(r.window_start) / SLIDING_SLOT_MS), count: Number(r.used) }));
    const free = limit - slots.reduce((sum, s) => sum + s.count, 0);
    if (free < units.need) return { granted: 0, retryAt: slidingRetryAt(slots, slot, units.need, limit, span) };
    const granted = Math.min(Math.max(units.want, units.need), free);
    await trx
      .insertInto('rate_windows')
      .values({ key, window_start: slotStart, used: granted })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ used: sql`rate_windows.used + ${granted}` }))
      .execute();
    return { granted, retryAt: null };
  });
}
