import type { Role } from '../domain/tenancy.ts';
import type { Db } from './db.ts';
import type { CredentialTable } from './schema.ts';

export interface Credential {
  id: string;
  channelId: string;
  organisationId: string;
  name: string;
  keyHash: string;
  keyPrefix: string;
  roles: Role[];
  state: 'ACTIVE' | 'REVOKED';
  createdAt: number;
  revokedAt: number | null;
}

export function toCredential(r: CredentialTable): Credential {
  return {
    id: r.id,
    channelId: r.channel_id,
    organisationId: r.organisation_id,
    name: r.name,
    keyHash: r.key_hash,
    keyPrefix: r.key_prefix,
    roles: JSON.parse(r.roles) as Role[],
    state: r.state as Credential['state'],
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

export async function insertCredential(db: Db, c: Credential): Promise<void> {
  await db
    .insertInto('credentials')
    .values({
      id: c.id,
      channel_id: c.channelId,
      organisation_id: c.organisationId,
      name: c.name,
      key_hash: c.keyHash,
      key_prefix: c.keyPrefix,
      roles: JSON.stringify(c.roles),
      state: c.state,
      created_at: c.createdAt,
      revoked_at: c.revokedAt,
    })
    .execute();
}

export async function findCredentialByHash(db: Db, keyHash: string): Promise<Credential | null> {
  const row = await db.selectFrom('credentials').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  return row ? toCredential(row) : null;
}

export async function findCredential(db: Db, id: string): Promise<Credential | null> {
  const row = await db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toCredential(row) : null;
}

export async function listCredentials(db: Db, channelId: string): Promise<Credential[]> {
  const rows = await db.selectFrom('credentials').selectAll().where('channel_id', '=', channelId).orderBy('created_at').execute();
  return rows.map(toCredential);
}

export async function revokeCredential(db: Db, id: string, at: number): Promise<boolean> {
  const res = await db
    .updateTable('credentials')
    .set({ state: 'REVOKED', revoked_at: at })
    .where('id', '=', id)
    .where('state', '=', 'ACTIVE')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
