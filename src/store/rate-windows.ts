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
