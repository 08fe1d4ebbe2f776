import type { Db, Dialect } from './db.ts';
import type { OrganisationTable } from './schema.ts';
import { placeholders, runByList, runCached } from './batch-sql.ts';

export interface Organisation {
  id: string;
  name: string;
  parentId: string | null;
  balance: number;
  currency: string;
  state: string;
  parentBilling: boolean;
  monthlyLimit: number | null;
  createdAt: number;
  /** ISO 3166 alpha-2 country of the organisation's national numbers; null when it sends to international numbers only. */
  defaultCountry: string | null;
  /** IANA time zone in which dates written without an offset are read. */
  timeZone: string;
  /** The organisation's opt-out short code and mention; null: the platform's. */
  optOutShortCode: string | null;
  optOutText: string | null;
  /** Days its message texts are kept before they are erased; null: the platform's. */
  contentRetentionDays: number | null;
}

export function toOrganisation(r: OrganisationTable): Organisation {
  return {
    id: r.id,
    name: r.name,
    parentId: r.parent_id,
    balance: r.balance,
    currency: r.currency,
    state: r.state,
    parentBilling: r.parent_billing === 1,
    monthlyLimit: r.monthly_limit,
    createdAt: r.created_at,
    defaultCountry: r.default_country,
    timeZone: r.time_zone,
    optOutShortCode: r.opt_out_short_code ?? null,
    optOutText: r.opt_out_text ?? null,
    contentRetentionDays: r.content_retention_days ?? null,
  };
}

export async function insertOrganisation(db: Db, o: Organisation): Promise<void> {
  await db
    .insertInto('organisations')
    .values({
      id: o.id,
      name: o.name,
      parent_id: o.parentId,
      balance: o.balance,
      currency: o.currency,
      state: o.state,
      parent_billing: o.parentBilling ? 1 : 0,
      monthly_limit: o.monthlyLimit,
      created_at: o.createdAt,
      default_country: o.defaultCountry,
      time_zone: o.timeZone,
      opt_out_short_code: o.optOutShortCode,
      opt_out_text: o.optOutText,
      content_retention_days: o.contentRetentionDays,
    })
    .execute();
}

export async function findOrganisation(db: Db, id: string): Promise<Organisation | null> {
  const row = await db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toOrganisation(row) : null;
}

export async function listOrganisations(db: Db, opts: { ids?: string[]; offset: number; limit: number }): Promise<Organisation[]> {
  let q = db.selectFrom('organisations').selectAll().orderBy('created_at').orderBy('id');
  if (opts.ids) {
    if (opts.ids.length === 0) return [];
    q = q.where('id', 'in', opts.ids);
  }
  const rows = await q.offset(opts.offset).limit(opts.limit).execute();
  return rows.map(toOrganisation);
}

export async function listChildIds(db: Db, parentId: string): Promise<string[]> {
  const rows = await db.selectFrom('organisations').select('id').where('parent_id', '=', parentId).execute();
  return rows.map((r) => r.id);
}

/** The organisation and all its descendants. */
export async function listTreeIds(db: Db, rootId: string): Promise<string[]> {
  const out = [rootId];
  for (let i = 0; i < out.length; i++) out.push(...(await listChildIds(db, out[i]!)));
  return out;
}

export async function updateOrganisation(
  db: Db,
  id: string,
  patch: Partial<
    Pick<
      OrganisationTable,
      'name' | 'state' | 'monthly_limit' | 'parent_billing' | 'default_country' | 'time_zone' | 'opt_out_short_code' | 'opt_out_text' | 'content_retention_days'
    >
  >,
): Promise<void> {
  // An empty patch changes nothing (and `set({})` is no SQL at all).
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('organisations').set(patch).where('id', '=', id).execute();
}

/** Where an organisation is: its default country and time zone. */
export async function findOrganisationLocale(db: Db, id: string): Promise<Pick<OrganisationTable, 'default_country' | 'time_zone'> | null> {
  return (await db.selectFrom('organisations').select(['default_country', 'time_zone']).where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function findOrganisationOptOut(db: Db, id: string): Promise<Pick<OrganisationTable, 'opt_out_short_code' | 'opt_out_text'> | null> {
  return (await db.selectFrom('organisations').select(['opt_out_short_code', 'opt_out_text']).where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Organisations whose opt-out short code is `shortCode`; `includeUnset` adds those using the platform's. */
export async function listOrganisationIdsByOptOutCode(db: Db, shortCode: string, includeUnset: boolean): Promise<string[]> {
  let q = db.selectFrom('organisations').select('id');
  q = includeUnset
    ? q.where((eb) => eb.or([eb('opt_out_short_code', '=', shortCode), eb('opt_out_short_code', 'is', null)]))
    : q.where('opt_out_short_code', '=', shortCode);
  return (await q.execute()).map((r) => r.id);
}

/** Who pays for an organisation: its parent and whether the parent's balance is charged. */
export async function findOrganisationBilling(db: Db, id: string): Promise<Pick<OrganisationTable, 'parent_id' | 'parent_billing'> | null> {
  return (await db.selectFrom('organisations').select(['parent_id', 'parent_billing']).where('id', '=', id).executeTakeFirst()) ?? null;
}

/**
 * Locks organisation rows in id order with NO KEY UPDATE (PostgreSQL only; SQLite has no row locks), the lock a
 * balance UPDATE takes anyway.
 */
export async function lockOrganisationRows(db: Db, ids: string[]): Promise<void> {
  await db
    .selectFrom('organisations')
    .select('id')
    .where('id', 'in', [...new Set(ids)].sort())
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/** How organisations are billed: their parent, whether the parent pays, their monthly limit. */
export function findPayingSetup(db: Db, ids: string[]): Promise<Array<Pick<OrganisationTable, 'id' | 'parent_id' | 'parent_billing' | 'monthly_limit'>>> {
  return db.selectFrom('organisations').select(['id', 'parent_id', 'parent_billing', 'monthly_limit']).where('id', 'in', ids).execute();
}

/**
 * How organisations are billed (`findPayingSetup`) and the balances they may be charged on, their own and their
 * parent's, read without a lock in the same statement (see `debitBalanceIfCovered`).
 */
export async function findPayingSetupAndBalances(
  db: Db,
  ids: string[],
): Promise<{ setup: Array<Pick<OrganisationTable, 'id' | 'parent_id' | 'parent_billing' | 'monthly_limit'>>; balances: Map<string, number> }> {
  type Row = Pick<OrganisationTable, 'id' | 'parent_id' | 'parent_billing' | 'monthly_limit' | 'balance'> & { parent_balance: number | null };
  const rows = await runByList<Row>(
    db,
    { name: 'paying setup and balances', column: '"o"."id"', chunk: 500 },
    ids,
    (_pg, among) =>
      'select "o"."id", "o"."parent_id", "o"."parent_billing", "o"."monthly_limit", "o"."balance", "p"."balance" as "parent_balance" ' +
      `from "organisations" as "o" left join "organisations" as "p" on "p"."id" = "o"."parent_id" where ${among}`,
  );
  const balances = new Map<string, number>();
  for (const r of rows) {
    balances.set(r.id, Number(r.balance));
    if (r.parent_id !== null && r.parent_balance !== null) balances.set(r.parent_id, Number(r.parent_balance));
  }
  return { setup: rows.map((r) => ({ id: r.id, parent_id: r.parent_id, parent_billing: r.parent_billing, monthly_limit: r.monthly_limit })), balances };
}

/**
 * The payers' balances, read for a charge. On PostgreSQL the rows stay locked until the transaction ends, in id
 * order, with NO KEY UPDATE: enough to serialise balance changes, and it does not conflict with the key-share locks
 * that foreign-key checks of sub-organisation rows take on their parent.
 */
export async function lockBalances(db: Db, dialect: Dialect, ids: string[]): Promise<Map<string, number>> {
  const rows = await runByList<{ id: string; balance: number }>(
    db,
    { name: 'lock balances', column: '"id"', chunk: 500 },
    [...ids].sort(),
    (_pg, among) => `select "id", "balance" from "organisations" where ${among} order by "id"${dialect === 'postgres' ? ' for no key update' : ''}`,
  );
  return new Map(rows.map((r) => [r.id, Number(r.balance)]));
}

/** Debits `amount` if the balance covers it (never below zero): answers the balance after, or null when it does not. */
export async function debitBalanceIfCovered(db: Db, id: string, amount: number): Promise<number | null> {
  const { rows } = await runCached<{ balance: number }>(
    db,
    'debit if covered',
    1,
    (pg) =>
      `update "organisations" set "balance" = "balance" - ${placeholders(pg, 1)} where "id" = ${placeholders(pg, 1, 2)} and "balance" >= ${placeholders(pg, 1, 3)} returning "balance"`,
    [amount, id, amount],
  );
  return rows[0] ? Number(rows[0].balance) : null;
}

export async function debitBalance(db: Db, id: string, amount: number): Promise<void> {
  await runCached(
    db,
    'debit',
    1,
    (pg) => `update "organisations" set "balance" = "balance" - ${placeholders(pg, 1)} where "id" = ${placeholders(pg, 1, 2)}`,
    [amount, id],
    true,
  );
}

/** Organisations with a content retention of their own, and their days. */
export async function listContentRetentions(db: Db): Promise<Array<{ id: string; days: number }>> {
  const rows = await db.selectFrom('organisations').select(['id', 'content_retention_days']).where('content_retention_days', 'is not', null).execute();
  return rows.map((r) => ({ id: r.id, days: r.content_retention_days! }));
}
