import { inTransaction, type Store } from './db.ts';

/** Nodes of the cluster as they last said they were alive, and connector bind slots shared between them. */

/** Says the node is alive at `now`, and answers how many other nodes were seen since `othersSince` (one statement). */
export async function heartbeat(store: Store, nodeId: string, startedAt: number, now: number, othersSince: number): Promise<number> {
  const row = await store.db
    .insertInto('nodes')
    .values({ id: nodeId, started_at: startedAt, seen_at: now })
    // A process started again under the same id says so: what the previous one held is gone with it.
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: now, started_at: startedAt }))
    .returning((eb) =>
      eb
        .selectFrom('nodes as other')
        .select((o) => o.fn.countAll<number>().as('n'))
        .where('other.id', '!=', nodeId)
        .where('other.seen_at', '>=', othersSince)
        .as('others'),
    )
    .executeTakeFirst();
  return Number(row?.others ?? 0);
}

/** The other nodes seen since `since`, with their last beat. */
export async function otherBeats(store: Store, nodeId: string, since: number): Promise<Array<{ id: string; seenAt: number }>> {
  const rows = await store.db.selectFrom('nodes').select(['id', 'seen_at']).where('id', '!=', nodeId).where('seen_at', '>=', since).execute();
  return rows.map((r) => ({ id: r.id, seenAt: Number(r.seen_at) }));
}

/** A node's last beat and the start of the process that made it, or null when the node is not known. */
export async function findNode(store: Store, nodeId: string): Promise<{ seenAt: number; startedAt: number } | null> {
  const row = await store.db.selectFrom('nodes').select(['seen_at', 'started_at']).where('id', '=', nodeId).executeTakeFirst();
  return row ? { seenAt: Number(row.seen_at), startedAt: Number(row.started_at) } : null;
}

export async function liveNodeCount(store: Store, since: number): Promise<number> {
  const row = await store.db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('seen_at', '>=', since)
    .executeTakeFirst();
  return Math.max(1, Number(row?.n ?? 0));
}

export async function forgetNode(store: Store, nodeId: string): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    await trx.updateTable('connector_slots').set({ node: null, lease_until: null }).where('node', '=', nodeId).execute();
    await trx.deleteFrom('nodes').where('id', '=', nodeId).execute();
  });
}

/**
 * The slots (0 … total-1) of a connector this node holds after this call: its own are renewed, beyond its share some
 * are given back, below it free or expired ones are taken. Slots at or past `total` are dropped.
 */
export async function holdSlots(
  store: Store,
  connector: string,
  nodeId: string,
  total: number,
  share: number,
  now: number,
  leaseMs: number,
): Promise<number[]> {
  return inTransaction(store, async (trx) => {
    await trx.deleteFrom('connector_slots').where('connector', '=', connector).where('slot', '>=', total).execute();
    if (total > 0) {
      await trx
        .insertInto('connector_slots')
        .values(Array.from({ length: total }, (_, slot) => ({ connector, slot, node: null, lease_until: null })))
        .onConflict((oc) => oc.columns(['connector', 'slot']).doNothing())
        .execute();
    }
    let q = trx.selectFrom('connector_slots').selectAll().where('connector', '=', connector).orderBy('slot');
    if (store.dialect === 'postgres') q = q.forUpdate();
    const rows = await q.execute();
    const mine = rows.filter((r) => r.node === nodeId && Number(r.lease_until) >= now).map((r) => r.slot);
    const free = rows.filter((r) => r.node === null || r.lease_until === null || Number(r.lease_until) < now).map((r) => r.slot);
    const keep = mine.slice(0, share);
    const release = mine.slice(share);
    const take = free.filter((s) => !mine.includes(s)).slice(0, Math.max(0, share - keep.length));
    const held = [...keep, ...take].sort((a, b) => a - b);
    if (held.length > 0) {
      await trx
        .updateTable('connector_slots')
        .set({ node: nodeId, lease_until: now + leaseMs })
        .where('connector', '=', connector)
        .where('slot', 'in', held)
        .execute();
    }
    if (release.length > 0) {
      await trx.updateTable('connector_slots').set({ node: null, lease_until: null }).where('connector', '=', connector).where('slot', 'in', release).execute();
    }
    return held;
  });
}
