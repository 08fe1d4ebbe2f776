import { sql } from 'kysely';
import type { Db, Dialect } from './db.ts';
import type { QueueDefinition } from './queue.ts';
import type { OtpSendTable, OtpTable } from './schema.ts';

/** One-time passwords, the messages that carried them, and the lock row of each organisation's number. */

export type OtpRow = OtpTable;
export type OtpSendRow = OtpSendTable;

/** Timers of pending codes (a voice fallback, the end of their validity), claimed with a lease by any node. */
export const OTP_TIMER_QUEUE: QueueDefinition = {
  signal: 'otp',
  table: 'otps',
  keys: ['id'],
  due: 'due_at',
  lease: 'lease_until',
  ready: `status = 'PENDING'`,
};

export async function insertOtp(db: Db, row: OtpRow): Promise<void> {
  await db.insertInto('otps').values(row).execute();
}

export async function updateOtp(db: Db, id: string, patch: Partial<Omit<OtpRow, 'id'>>): Promise<void> {
  await db.updateTable('otps').set(patch).where('id', '=', id).execute();
}

/** A pending code's timer moves on to `dueAt` (its voice fallback dealt with); a settled code is left alone. */
export async function clearFallback(db: Db, id: string, dueAt: number): Promise<void> {
  await db
    .updateTable('otps')
    .set({ fallback_at: null, due_at: dueAt, lease_until: null })
    .where('id', '=', id)
    .where('status', '=', sql.lit('PENDING'))
    .execute();
}

export async function findOtp(db: Db, id: string): Promise<OtpRow | null> {
  return (await db.selectFrom('otps').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** The code, locked until the transaction ends (PostgreSQL; SQLite runs one transaction at a time). */
export async function lockOtp(db: Db, dialect: Dialect, id: string): Promise<OtpRow | null> {
  let q = db.selectFrom('otps').selectAll().where('id', '=', id);
  if (dialect === 'postgres') q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

/**
 * Locks an organisation's number for the rest of the transaction (its row is made on first use), so sends of codes
 * to one number happen one at a time on every node.
 */
export async function lockRecipient(db: Db, dialect: Dialect, organisationId: string, recipient: string, now: number): Promise<void> {
  await db
    .insertInto('otp_recipients')
    .values({ organisation_id: organisationId, recipient, created_at: now })
    .onConflict((oc) => oc.columns(['organisation_id', 'recipient']).doNothing())
    .execute();
  if (dialect === 'postgres') {
    await db
      .selectFrom('otp_recipients')
      .select('recipient')
      .where('organisation_id', '=', organisationId)
      .where('recipient', '=', recipient)
      .forUpdate()
      .execute();
  }
}

/** The codes of a number still marked PENDING (one at most, unless one ended by time and was not marked yet). */
export function pendingOtps(db: Db, organisationId: string, recipient: string): Promise<OtpRow[]> {
  return db
    .selectFrom('otps')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('recipient', '=', recipient)
    .where('status', '=', sql.lit('PENDING'))
    .orderBy('created_at', 'desc')
    .execute();
}

/** When codes were sent to a number since `since`. */
export async function sendTimesSince(db: Db, organisationId: string, recipient: string, since: number): Promise<number[]> {
  const rows = await db
    .selectFrom('otp_sends')
    .select('sent_at')
    .where('organisation_id', '=', organisationId)
    .where('recipient', '=', recipient)
    .where('sent_at', '>', since)
    .execute();
  return rows.map((r) => Number(r.sent_at));
}

export async function insertOtpSend(db: Db, row: OtpSendRow): Promise<void> {
  await db.insertInto('otp_sends').values(row).execute();
}

/** What rebuilding the text of messages that carry a code needs: the send's template and its code's salt. */
export interface SendSecret {
  message_id: string;
  channel: string;
  template: string;
  code_salt: string;
  code_length: number;
  alphabet: string;
}

export async function sendSecrets(db: Db, messageIds: string[]): Promise<SendSecret[]> {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom('otp_sends as s')
    .innerJoin('otps as o', 'o.id', 's.otp_id')
    .select(['s.message_id', 's.channel', 's.template', 'o.code_salt', 'o.code_length', 'o.alphabet'])
    .where('s.message_id', 'in', messageIds)
    .execute();
}

/** Codes created since `since`, and how many of them were approved. */
export async function conversionSince(db: Db, since: number): Promise<{ created: number; approved: number }> {
  const row = await db
    .selectFrom('otps')
    .select([sql<number>`count(*)`.as('created'), sql<number>`coalesce(sum(case when status = 'APPROVED' then 1 else 0 end), 0)`.as('approved')])
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return { created: Number(row.created), approved: Number(row.approved) };
}

/**
 * Forgets, `limit` at a time, codes settled before `before` with their sends, sends older than that, and numbers'
 * lock rows that no code refers to any more; answers how many rows went.
 */
export async function pruneOtps(db: Db, before: number, limit: number): Promise<number> {
  const otps = await db
    .deleteFrom('otps')
    .where('id', 'in', db.selectFrom('otps').select('id').where('created_at', '<', before).where('status', '!=', sql.lit('PENDING')).limit(limit))
    .executeTakeFirst();
  const sends = await db
    .deleteFrom('otp_sends')
    .where('message_id', 'in', db.selectFrom('otp_sends').select('message_id').where('sent_at', '<', before).limit(limit))
    .executeTakeFirst();
  const locks = await db
    .deleteFrom('otp_recipients')
    .where(({ and, eb, not, exists, selectFrom }) =>
      and([
        eb('created_at', '<', before),
        not(
          exists(
            selectFrom('otps')
              .select('id')
              .whereRef('otps.organisation_id', '=', 'otp_recipients.organisation_id')
              .whereRef('otps.recipient', '=', 'otp_recipients.recipient'),
          ),
        ),
      ]),
    )
    .executeTakeFirst();
  return Number(otps.numDeletedRows) + Number(sends.numDeletedRows) + Number(locks.numDeletedRows);
}
