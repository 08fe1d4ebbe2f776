import { sql } from 'kysely';
import type { Db, Dialect } from './db.ts';
import type { SmppConcatPartTable } from './schema.ts';

/**
 * Parts of concatenated SMPP submits waiting for the rest of their message. A message made whole keeps its parts,
 * taken (`taken_at`), until it is stored: the parts are deleted in the message's own transaction.
 */

export type SmppConcatPartRow = SmppConcatPartTable;

/** One message being put together: a credential's parts from a source to a destination under one reference. */
export interface SmppConcatAssemblyKey {
  credentialId: string;
  source: string;
  destination: string;
  ref: number;
}

/**
 * Serialises the work on a credential's parts until the transaction ends (on PostgreSQL a row lock on the credential;
 * SQLite runs one transaction at a time). False when the credential no longer exists.
 */
export async function lockConcatOwner(trx: Db, dialect: Dialect, credentialId: string): Promise<boolean> {
  let q = trx.selectFrom('smpp_credentials').select('id').where('id', '=', credentialId);
  if (dialect === 'postgres') q = q.forNoKeyUpdate();
  return (await q.executeTakeFirst()) !== undefined;
}

/** Parts and octets a credential has waiting or being stored, all its assemblies together. */
export async function concatUsage(db: Db, credentialId: string): Promise<{ parts: number; bytes: number }> {
  const row = await db
    .selectFrom('smpp_concat_parts')
    .select((eb) => [eb.fn.countAll<number>().as('parts'), sql<number>`coalesce(sum(length(payload)), 0)`.as('bytes')])
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  return { parts: Number(row?.parts ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** The parts of the assembly still waiting (whatever total they announce), without their octets. */
export async function assemblyParts(
  db: Db,
  key: SmppConcatAssemblyKey,
): Promise<Array<Pick<SmppConcatPartRow, 'seq' | 'total' | 'message_id' | 'expires_at'>>> {
  return db
    .selectFrom('smpp_concat_parts')
    .select(['seq', 'total', 'message_id', 'expires_at'])
    .where('credential_id', '=', key.credentialId)
    .where('source', '=', key.source)
    .where('destination', '=', key.destination)
    .where('ref', '=', key.ref)
    .where('taken_at', 'is', null)
    .execute();
}

export async function insertConcatPart(db: Db, row: SmppConcatPartRow): Promise<void> {
  await db.insertInto('smpp_concat_parts').values(row).execute();
}

/** Marks a waiting message's parts taken and answers them: whoever marks them stores the message. */
export async function takeAssembly(db: Db, credentialId: string, messageId: string, node: string, now: number): Promise<SmppConcatPartRow[]> {
  return db
    .updateTable('smpp_concat_parts')
    .set({ taken_at: now, taken_by: node })
    .where('credential_id', '=', credentialId)
    .where('message_id', '=', messageId)
    .where('taken_at', 'is', null)
    .returningAll()
    .execute();
}

/** Takes over a message taken before `takenBefore` and not stored since, and answers its parts. */
export async function retakeAssembly(
  db: Db,
  credentialId: string,
  messageId: string,
  takenBefore: number,
  node: string,
  now: number,
): Promise<SmppConcatPartRow[]> {
  return db
    .updateTable('smpp_concat_parts')
    .set({ taken_at: now, taken_by: node })
    .where('credential_id', '=', credentialId)
    .where('message_id', '=', messageId)
    .where('taken_at', '<=', takenBefore)
    .returningAll()
    .execute();
}

/** Deletes a message's parts (it is stored, or refused). */
export async function deleteAssembly(db: Db, credentialId: string, messageId: string): Promise<void> {
  await db.deleteFrom('smpp_concat_parts').where('credential_id', '=', credentialId).where('message_id', '=', messageId).execute();
}

/** Credentials with a waiting assembly whose time ran out. */
export async function credentialsWithExpiredParts(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('smpp_concat_parts')
    .select('credential_id')
    .distinct()
    .where('expires_at', '<=', now)
    .where('taken_at', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.credential_id);
}

/**
 * When parts are next due to be swept, in one statement: the earliest end of an assembly still waiting, and the
 * earliest time a whole message was taken at (stranded `strandedAfterMs` after, if still there). Null: no parts.
 */
export async function nextConcatSweep(db: Db, strandedAfterMs: number): Promise<number | null> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('smpp_concat_parts')
        .select((p) => p.fn.min<number>('expires_at').as('t'))
        .where('taken_at', 'is', null)
        .as('expires'),
      eb
        .selectFrom('smpp_concat_parts')
        .select((p) => p.fn.min<number>('taken_at').as('t'))
        .as('taken'),
    ])
    .executeTakeFirst();
  const expires = row?.expires ?? null;
  const taken = row?.taken ?? null;
  const times = [...(expires === null ? [] : [Number(expires)]), ...(taken === null ? [] : [Number(taken) + strandedAfterMs])];
  return times.length === 0 ? null : Math.min(...times);
}

/** Deletes a credential's waiting parts whose assembly's time ran out and answers them (each deleted by one node only). */
export async function takeExpiredParts(db: Db, credentialId: string, now: number): Promise<SmppConcatPartRow[]> {
  return db
    .deleteFrom('smpp_concat_parts')
    .where('credential_id', '=', credentialId)
    .where('expires_at', '<=', now)
    .where('taken_at', 'is', null)
    .returningAll()
    .execute();
}

/** Credentials with a message taken before `takenBefore` and not stored since. */
export async function credentialsWithStrandedParts(db: Db, takenBefore: number, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('smpp_concat_parts').select('credential_id').distinct().where('taken_at', '<=', takenBefore).limit(limit).execute();
  return rows.map((r) => r.credential_id);
}

/** A credential's messages taken before `takenBefore` and not stored since. */
export async function strandedMessageIds(db: Db, credentialId: string, takenBefore: number): Promise<string[]> {
  const rows = await db
    .selectFrom('smpp_concat_parts')
    .select('message_id')
    .distinct()
    .where('credential_id', '=', credentialId)
    .where('taken_at', '<=', takenBefore)
    .execute();
  return rows.map((r) => r.message_id);
}

/** Which of these message ids are stored messages. */
export async function storedMessageIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('messages').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}
