import { inTransaction, type Store } from './db.ts';

/**
 * Takes a bind of a credential for a session on a node, unless the credential already has `max` binds held by live
 * nodes (seen since `liveSince`); binds of nodes that stopped being seen are forgotten on the way. Concurrent binds
 * of one credential are serialised on its row.
 */
export async function claimSmppBind(
  store: Store,
  bind: { credentialId: string; session: string; node: string },
  max: number,
  liveSince: number,
  now: number,
): Promise<boolean> {
  return inTransaction(store, async (trx) => {
    let lock = trx.selectFrom('smpp_credentials').select('id').where('id', '=', bind.credentialId);
    if (store.dialect === 'postgres') lock = lock.forUpdate();
    if (!(await lock.executeTakeFirst())) return false;
    const live = trx.selectFrom('nodes').select('id').where('seen_at', '>=', liveSince);
    await trx.deleteFrom('smpp_binds').where('credential_id', '=', bind.credentialId).where('node', 'not in', live).where('node', '!=', bind.node).execute();
    const row = await trx
      .selectFrom('smpp_binds')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('credential_id', '=', bind.credentialId)
      .executeTakeFirst();
    if (Number(row?.n ?? 0) >= max) return false;
    await trx.insertInto('smpp_binds').values({ credential_id: bind.credentialId, session: bind.session, node: bind.node, bound_at: now }).execute();
    return true;
  });
}

export async function releaseSmppBind(store: Store, credentialId: string, session: string): Promise<void> {
  await store.db.deleteFrom('smpp_binds').where('credential_id', '=', credentialId).where('session', '=', session).execute();
}

/** A node starting or stopping: the binds it held are gone with its sessions. */
export async function forgetSmppBinds(store: Store, node: string): Promise<void> {
  await store.db.deleteFrom('smpp_binds').where('node', '=', node).execute();
}
