import { sql } from 'kysely';
import { columnsOf, insertRows, runByList } from './batch-sql.ts';
import type { Db } from './db.ts';
import type { SmppCredentialTable, SmppOutboxTable } from './schema.ts';

/** SMPP credentials and the outbox of deliver_sm waiting for a receiver. */

export interface SmppCredential {
  id: string;
  channelId: string;
  organisationId: string;
  systemId: string;
  passwordHash: string;
  allowedIps: string[];
  maxBinds: number;
  tps: number;
  /** deliver_sm unanswered at once on each of its sessions; 0: the node's setting. */
  window: number;
  state: 'ACTIVE' | 'DISABLED';
  createdAt: number;
}

export function toSmppCredential(r: SmppCredentialTable): SmppCredential {
  return {
    id: r.id,
    channelId: r.channel_id,
    organisationId: r.organisation_id,
    systemId: r.system_id,
    passwordHash: r.password_hash,
    allowedIps: JSON.parse(r.allowed_ips) as string[],
    maxBinds: r.max_binds,
    tps: r.tps,
    window: r.deliver_window,
    state: r.state as SmppCredential['state'],
    createdAt: r.created_at,
  };
}

export async function insertSmppCredential(db: Db, c: SmppCredential): Promise<void> {
  await db
    .insertInto('smpp_credentials')
    .values({
      id: c.id,
      channel_id: c.channelId,
      organisation_id: c.organisationId,
      system_id: c.systemId,
      password_hash: c.passwordHash,
      allowed_ips: JSON.stringify(c.allowedIps),
      max_binds: c.maxBinds,
      tps: c.tps,
      deliver_window: c.window,
      state: c.state,
      created_at: c.createdAt,
    })
    .execute();
}

export async function findSmppCredential(db: Db, id: string): Promise<SmppCredential | null> {
  const row = await db.selectFrom('smpp_credentials').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toSmppCredential(row) : null;
}

export async function findSmppCredentialBySystemId(db: Db, systemId: string): Promise<SmppCredential | null> {
  const row = await db.selectFrom('smpp_credentials').selectAll().where('system_id', '=', systemId).executeTakeFirst();
  return row ? toSmppCredential(row) : null;
}

export async function listSmppCredentials(db: Db, channelIds: string[]): Promise<SmppCredential[]> {
  if (channelIds.length === 0) return [];
  const rows = await db.selectFrom('smpp_credentials').selectAll().where('channel_id', 'in', channelIds).orderBy('created_at').orderBy('id').execute();
  return rows.map(toSmppCredential);
}

/** The ACTIVE credentials of these channels (ids only): who receives their MO. */
export async function listActiveCredentialIdsOfChannels(db: Db, channelIds: string[]): Promise<Array<{ id: string; channel_id: string }>> {
  return db.selectFrom('smpp_credentials').select(['id', 'channel_id']).where('channel_id', 'in', channelIds).where('state', '=', 'ACTIVE').execute();
}

/** Changes a credential's password hash, allowed addresses, bind count, rate or window. */
export async function updateSmppCredential(
  db: Db,
  id: string,
  patch: Partial<Pick<SmppCredential, 'passwordHash' | 'allowedIps' | 'maxBinds' | 'tps' | 'window'>>,
): Promise<void> {
  const set = {
    ...(patch.passwordHash !== undefined && { password_hash: patch.passwordHash }),
    ...(patch.allowedIps !== undefined && { allowed_ips: JSON.stringify(patch.allowedIps) }),
    ...(patch.maxBinds !== undefined && { max_binds: patch.maxBinds }),
    ...(patch.tps !== undefined && { tps: patch.tps }),
    ...(patch.window !== undefined && { deliver_window: patch.window }),
  };
  // An empty patch changes nothing (and `set({})` is no SQL at all).
  if (Object.keys(set).length === 0) return;
  await db.updateTable('smpp_credentials').set(set).where('id', '=', id).execute();
}

/** Deletes a credential and whatever was waiting for its receivers. */
export async function deleteSmppCredential(db: Db, id: string): Promise<void> {
  await db.deleteFrom('smpp_outbox').where('credential_id', '=', id).execute();
  await db.deleteFrom('smpp_credentials').where('id', '=', id).execute();
}

export type SmppOutboxRow = SmppOutboxTable;

const OUTBOX_COLUMNS = columnsOf<SmppOutboxRow>('smpp_outbox', {
  id: 'text',
  credential_id: 'text',
  kind: 'text',
  message_id: 'text',
  pdus: 'text',
  created_at: 'bigint',
  expires_at: 'bigint',
  attempts: 'integer',
  next_attempt_at: 'bigint',
  lease_until: 'bigint',
});

export function insertOutbox(db: Db, rows: SmppOutboxRow[]): Promise<void> {
  return insertRows(db, OUTBOX_COLUMNS, rows, 500);
}

export async function deleteOutbox(db: Db, ids: string[]): Promise<void> {
  await runByList(db, { name: 'delete outbox rows', column: '"id"', chunk: 500 }, ids, (_pg, idAmong) => `delete from "smpp_outbox" where ${idAmong}`);
}

export async function rescheduleOutbox(db: Db, id: string, attempts: number, nextAttemptAt: number): Promise<void> {
  await db.updateTable('smpp_outbox').set({ attempts, next_attempt_at: nextAttemptAt, lease_until: null }).where('id', '=', id).execute();
}

/** Makes every waiting row of these credentials due now (a receiver just bound); rows being delivered keep their lease. */
export async function makeOutboxDue(db: Db, credentialIds: string[], now: number): Promise<void> {
  if (credentialIds.length === 0) return;
  await db
    .updateTable('smpp_outbox')
    .set({ next_attempt_at: now })
    .where('credential_id', 'in', credentialIds)
    .where('next_attempt_at', '>', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .execute();
}

/** Deletes rows past their expiry; returns how many per credential. */
export async function expireOutbox(db: Db, now: number): Promise<Map<string, number>> {
  const rows = await db.deleteFrom('smpp_outbox').where('expires_at', '<=', now).returning(['credential_id']).execute();
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.credential_id, (counts.get(r.credential_id) ?? 0) + 1);
  return counts;
}

/** Rows waiting, per credential's system_id and kind. */
export async function countOutbox(db: Db): Promise<Array<{ systemId: string; kind: string; count: number }>> {
  const rows = await db
    .selectFrom('smpp_outbox as o')
    .innerJoin('smpp_credentials as c', 'c.id', 'o.credential_id')
    .select(['c.system_id', 'o.kind', sql<number>`count(*)`.as('n')])
    .groupBy(['c.system_id', 'o.kind'])
    .execute();
  return rows.map((r) => ({ systemId: r.system_id, kind: r.kind, count: Number(r.n) }));
}

/** The queue condition of rows owed to these credentials and not expired. */
export function liveOutboxRowsOf(credentialIds: string[], now: number) {
  return sql`credential_id in (${sql.join(credentialIds)}) and expires_at > ${now}`;
}
