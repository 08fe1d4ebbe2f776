import { uuidv7 } from '../../domain/ids.ts';
import { canTransition, isFinal, type MessageStatus, type StatusDetail } from '../../domain/status.ts';
import type { Db, Dialect } from '../../store/db.ts';
import { applyCredits } from '../../store/ledger.ts';
import { insertEvents, lockMessages, type MessageEventRow, type MessageRow, writeStatuses } from '../../store/messages.ts';
import { RollupBatch } from '../../store/rollups.ts';
import type { EventConsumers, SettledMessage } from '../events.ts';
import { rollupKeyOf } from './accept.ts';
import { groupBy } from '../../domain/group-by.ts';

export interface StatusChange {
  messageId: string;
  status: MessageStatus;
  detail?: StatusDetail | string | null;
  at: number;
  /** Give the charge back (the message never reached an operator). */
  refund?: boolean;
  /** Fields to set with the change (e.g. a fallback message id in `extra`). */
  extra?: Record<string, unknown>;
  /**
   * A voice call's units as answered (started 30 s): fewer than charged at accept gives the difference back; never
   * more than was charged at accept, which is the most a call costs.
   */
  billedUnits?: number;
}

export interface AppliedChanges {
  applied: MessageRow[];
  /** Changes refused by the status machine (late or duplicate) or for unknown messages. */
  ignored: StatusChange[];
}

/**
 * Applies status changes in the caller's transaction, through the one status machine: a change that would move a
 * final status backwards is ignored. Each applied change moves the message between consumption buckets, writes
 * its event, refunds when asked, and runs the event hooks (webhooks, SMPP receipts) in the same transaction.
 */
export async function applyStatusChanges(
  db: Db,
  dialect: Dialect,
  changes: StatusChange[],
  channelTypeOf: (channelId: string) => Promise<string>,
  consumers: EventConsumers,
): Promise<AppliedChanges> {
  const messages = new Map<string, MessageRow>();
  for (const m of await lockMessages(
    db,
    dialect,
    changes.map((c) => c.messageId),
  ))
    messages.set(m.id, m);
  const rollups = new RollupBatch();
  const events: MessageEventRow[] = [];
  const ignored: StatusChange[] = [];
  const touched = new Map<string, MessageRow>();
  const refunds: Array<{ m: MessageRow; amount: number; description: string }> = [];
  const settled: SettledMessage[] = [];
  const counting = consumers.counting;

  for (const c of [...changes].sort((a, b) => a.at - b.at)) {
    const m = messages.get(c.messageId);
    if (!m || !canTransition(m.status as MessageStatus, c.status)) {
      ignored.push(c);
      continue;
    }
    const channelType = await channelTypeOf(m.channel_id);
    const key = rollupKeyOf(m, channelType);
    const units = m.charged > 0 ? m.part_count : 0;
    rollups.move(key, c.status, units, m.charged);
    // Counted once a message: at its first final status (a READ after DELIVERED is not a second one).
    if (counting && m.direction !== 'MO' && !isFinal(m.status as MessageStatus) && isFinal(c.status)) {
      settled.push({ type: channelType, status: c.status, afterSeconds: (Math.max(c.at, m.status_at) - Math.max(m.accepted_at, m.send_at)) / 1000 });
    }
    m.status = c.status;
    m.status_detail = c.detail ?? null;
    m.status_at = Math.max(c.at, m.status_at);
    if (c.extra) m.extra = JSON.stringify({ ...(m.extra ? JSON.parse(m.extra) : {}), ...c.extra });
    if (c.refund && m.charged > 0) {
      rollups.add({ ...key, status: c.status }, -units, 0, -m.charged);
      const description = `Refund: ${m.type} message ${m.status.toLowerCase()}${m.status_detail ? ` (${m.status_detail})` : ''}`;
      refunds.push({ m: { ...m }, amount: m.charged, description });
      m.charged = 0;
    } else if (c.billedUnits !== undefined && m.type === 'VOICE' && m.charged > 0 && c.billedUnits > 0 && c.billedUnits < m.part_count) {
      const kept = Math.round((m.charged * c.billedUnits) / m.part_count);
      const back = m.charged - kept;
      rollups.add({ ...key, status: c.status }, c.billedUnits - m.part_count, 0, -back);
      const description = `Refund: VOICE call answered for ${c.billedUnits} of the ${m.part_count} started 30 s charged`;
      refunds.push({ m: { ...m }, amount: back, description });
      m.charged = kept;
      m.part_count = c.billedUnits;
    }
    touched.set(m.id, m);
    events.push({
      id: uuidv7(c.at),
      message_id: m.id,
      organisation_id: m.organisation_id,
      channel_id: m.channel_id,
      kind: 'STATUS',
      status: c.status,
      detail: m.status_detail,
      at: c.at,
    });
  }
  if (touched.size === 0) return { applied: [], ignored };

  await writeStatuses(db, [...touched.values()]);
  // The rollups before the balances, in the order most accepts take them (their debits come last): a refund holding a
  // payer's balance while it waits for a rollup row an accept holds, the accept waiting for that balance, was a
  // deadlock PostgreSQL resolved after a second. Those that lock the balance first write rollup rows of their own
  // (BALANCE_FIRST_SHARDS).
  await rollups.write(db, Date.now(), { balanceAfter: true });
  // One balance update per payer, in payer order: a row updated twice in one transaction makes PostgreSQL check
  // its foreign key again and lock the parent organisation, which deadlocked against concurrent sends.
  const byPayer = groupBy(refunds, (r) => r.m.payer_id);
  for (const payer of [...byPayer.keys()].sort()) {
    await applyCredits(
      db,
      payer,
      byPayer.get(payer)!.map(({ m, amount, description }) => ({
        amount,
        kind: 'REFUND' as const,
        reference: m.ref_client,
        description,
        messageId: m.id,
        at: m.status_at,
      })),
    );
  }
  // The consumption epochs after the balances, as every transaction takes them (see RollupBatch.raiseEpochs).
  await rollups.raiseEpochs(db);
  await insertEvents(db, events);
  await consumers.run(db, events, touched);
  consumers.counted(db, [], settled);
  return { applied: [...touched.values()], ignored };
}
