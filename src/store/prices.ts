import { DEFAULT_PRICES, type PriceEntry } from '../domain/default-prices.ts';
import type { Db } from './db.ts';

export async function loadPrices(db: Db): Promise<PriceEntry[]> {
  const rows = await db.selectFrom('prices').selectAll().execute();
  return rows.map((r) => ({
    channelType: r.channel_type as PriceEntry['channelType'],
    country: r.country,
    kind: r.kind,
    amount: r.amount,
  }));
}

/** Seeds the shipped price list into an empty table (first start). */
export async function seedPrices(db: Db, now: number): Promise<void> {
  const existing = await db.selectFrom('prices').select('country').limit(1).execute();
  if (existing.length > 0) return;
  await db
    .insertInto('prices')
    .values(DEFAULT_PRICES.map((p) => ({ channel_type: p.channelType, country: p.country, kind: p.kind, amount: p.amount, updated_at: now })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function upsertPrices(db: Db, entries: PriceEntry[], now: number): Promise<void> {
  for (const p of entries) {
    await db
      .insertInto('prices')
      .values({ channel_type: p.channelType, country: p.country, kind: p.kind, amount: p.amount, updated_at: now })
      .onConflict((oc) => oc.columns(['channel_type', 'country', 'kind']).doUpdateSet({ amount: p.amount, updated_at: now }))
      .execute();
  }
}
