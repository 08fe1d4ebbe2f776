import type { Db } from './db.ts';
import type { IdempotencyTable } from './schema.ts';

/** `status_code` of a key whose request is still being served. */
export const IN_PROGRESS = 0;

export type IdempotencyRow = IdempotencyTable;

/** Inserts an in-progress row; false when the (scope, key) row already exists. */
export async function insertIdempotencyClaim(
  db: Db,
  row: { scope: string; key: string; requestHash: string; at: number; claimant: string | null },
): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      scope: row.scope,
      key: row.key,
      request_hash: row.requestHash,
      status_code: IN_PROGRESS,
      response_body: '',
      created_at: row.at,
      claimed_by: row.claimant,
    })
    .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findIdempotencyRow(db: Db, scope: string, key: string): Promise<IdempotencyRow | null> {
  const row = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
  return row ? { ...row, status_code: Number(row.status_code), created_at: Number(row.created_at) } : null;
}

/** Replaces a row that is exactly as it was read (expired or abandoned) by a new claim; false if it changed since. */
export async function retakeIdempotencyRow(
  db: Db,
  seen: IdempotencyRow,
  claim: { requestHash: string; at: number; claimant: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ request_hash: claim.requestHash, status_code: IN_PROGRESS, response_body: '', created_at: claim.at, claimed_by: claim.claimant })
    .where('scope', '=', seen.scope)
    .where('key', '=', seen.key)
    .where('status_code', '=', seen.status_code)
    .where('created_at', '=', seen.created_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the answer of the claim made at `claimedAt`; false if that claim is no longer the row's. */
export async function completeIdempotencyRow(
  db: Db,
  scope: string,
  key: string,
  claimedAt: number,
  answer: { statusCode: number; body: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ status_code: answer.statusCode, response_body: answer.body, claimed_by: null })
    .where('scope', '=', scope)
    .where('key', '=', key)
    .where('status_code', '=', IN_PROGRESS)
    .where('created_at', '=', claimedAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Drops the in-progress claim made at `claimedAt`, so the request can be tried again. */
export async function deleteIdempotencyClaim(db: Db, scope: string, key: string, claimedAt: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope', '=', scope)
    .where('key', '=', key)
    .where('status_code', '=', IN_PROGRESS)
    .where('created_at', '=', claimedAt)
    .execute();
}

/** Deletes up to `limit` keys created before `before`; returns how many. */
export async function deleteIdempotencyKeysBefore(db: Db, before: number, limit: number): Promise<number> {
  const old = await db.selectFrom('idempotency_keys').select(['scope', 'key']).where('created_at', '<', before).limit(limit).execute();
  if (old.length === 0) return 0;
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.or(old.map((k) => eb.and([eb('scope', '=', k.scope), eb('key', '=', k.key)]))))
    .where('created_at', '<', before)
    .execute();
  return old.length;
}
