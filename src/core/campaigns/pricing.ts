import { utcDay, utcMonthStart } from '../../domain/dates.ts';
import { toEuros } from '../../domain/money.ts';
import { type MessageBodyChange, writeMessageBodies } from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import { channelDailyAndMonthlyAmounts, organisationAmountSince } from '../../store/consumption.ts';
import type { Db, Dialect } from '../../store/db.ts';
import { applyCredits, type BalanceChange } from '../../store/ledger.ts';
import type { MessageRow } from '../../store/messages.ts';
import { findPayingSetup, lockBalances } from '../../store/organisations.ts';
import { RollupBatch } from '../../store/rollups.ts';
import { fail } from '../errors.ts';
import { rollupKeyOf } from '../messaging/accept.ts';

/**
 * Gives scheduled messages (locked by the caller's transaction) a new body priced again: each message's difference
 * is charged or refunded with its own ledger row, and its consumption moves with it. More to pay must fit the
 * payer's balance and the channel's and organisation's spending limits, or nothing is written.
 */
export async function applyBodyChange(
  db: Db,
  dialect: Dialect,
  channel: Channel,
  messages: MessageRow[],
  change: (m: MessageRow) => MessageBodyChange,
  what: string,
  now: number,
): Promise<void> {
  const rollups = new RollupBatch();
  const writes: Array<{ id: string; change: MessageBodyChange }> = [];
  const credits = new Map<string, Array<Omit<BalanceChange, 'organisationId' | 'floor'>>>();
  let more = 0;
  for (const m of messages) {
    const next = change(m);
    writes.push({ id: m.id, change: next });
    const key = rollupKeyOf(m, channel.type);
    rollups.add(key, -(m.charged > 0 ? m.part_count : 0), -1, -m.charged);
    rollups.add({ ...key, priceKind: next.price_kind ?? m.type }, next.charged > 0 ? next.part_count : 0, 1, next.charged);
    const delta = next.charged - m.charged;
    if (delta === 0) continue;
    more += delta;
    const items = credits.get(m.payer_id) ?? [];
    items.push({
      amount: -delta,
      kind: delta > 0 ? 'CHARGE' : 'REFUND',
      reference: m.ref_client,
      description: `${m.type} message priced again for the new body of ${what}: ${next.part_count} unit${next.part_count === 1 ? '' : 's'}`,
      messageId: m.id,
      at: now,
    });
    credits.set(m.payer_id, items);
  }
  if (more > 0) await checkSpending(db, dialect, channel, credits, more, now);
  for (const payer of [...credits.keys()].sort()) await applyCredits(db, payer, credits.get(payer)!);
  await writeMessageBodies(db, writes);
  await rollups.write(db, now, { balanceHeld: true });
}

async function checkSpending(
  db: Db,
  dialect: Dialect,
  channel: Channel,
  credits: Map<string, Array<{ amount: number }>>,
  more: number,
  now: number,
): Promise<void> {
  const balances = await lockBalances(db, dialect, [...credits.keys()].sort());
  for (const [payer, items] of credits) {
    const net = items.reduce((sum, i) => sum + i.amount, 0);
    if (net < 0 && (balances.get(payer) ?? 0) + net < 0) {
      fail('INSUFFICIENT_FUNDS', `the new body costs ${toEuros(-net)} EUR more than the balance allows`, 'body');
    }
  }
  const today = utcDay(now);
  const monthStart = utcMonthStart(now);
  const spent = await channelDailyAndMonthlyAmounts(db, channel.id, today, monthStart);
  if (channel.dailyLimit !== null && spent.daily + more > channel.dailyLimit) {
    fail('CONFLICT', "the new body would pass the channel's daily consumption limit", 'body');
  }
  if (channel.monthlyLimit !== null && spent.monthly + more > channel.monthlyLimit) {
    fail('CONFLICT', "the new body would pass the channel's monthly consumption limit", 'body');
  }
  const [org] = await findPayingSetup(db, [channel.organisationId]);
  if (org?.monthly_limit != null && (await organisationAmountSince(db, channel.organisationId, monthStart)) + more > org.monthly_limit) {
    fail('CONFLICT', "the new body would pass the organisation's monthly consumption limit", 'body');
  }
}
