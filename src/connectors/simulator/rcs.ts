import type { Logger } from 'pino';
import { DueScheduler } from './due-scheduler.ts';
import type { EventHook } from '../../core/messaging/accept.ts';
import type { Store } from '../../store/db.ts';
import type { InboundEvent, ReceiptEvent } from '../../core/ports.ts';
import type { SimulatorCarrier } from './sms.ts';

/** What an RCS-capable handset of the simulated network supports (RBM feature names). */
export const SIMULATED_RCS_FEATURES = [
  'RICHCARD_STANDALONE',
  'RICHCARD_CAROUSEL',
  'ACTION_CREATE_CALENDAR_EVENT',
  'ACTION_DIAL',
  'ACTION_OPEN_URL',
  'ACTION_SHARE_LOCATION',
  'ACTION_VIEW_LOCATION',
] as const;

/** Numbers ending in 9 are not RCS-capable in the simulated network. */
export function simulatedRcsCapable(msisdn: string): boolean {
  return !msisdn.endsWith('9');
}

/** Numbers ending in 0007 never get an RCS message delivered (the handset stays offline for RCS; SMS still works). */
export function simulatedRcsOffline(msisdn: string): boolean {
  return msisdn.endsWith('0007');
}

/** Numbers ending in 0008 receive RCS messages but never read them on their own (READ only by injection). */
export function simulatedNeverReads(msisdn: string): boolean {
  return msisdn.endsWith('0008');
}

export const DEFAULT_READ_DELAY_MS = 1_000;
const SAFETY_POLL_MS = 1_000;
const READ_BATCH = 500;

export interface RcsCapabilityAnswer {
  capable: boolean;
  features: string[];
}

/** An inbound RCS message from a user of the simulated network. */
export function simulatedRcsMo(
  connector: string,
  from: string,
  agent: string,
  body: Record<string, unknown>,
  at = Date.now(),
): InboundEvent {
  return { kind: 'mo', connector, type: 'RCS', from, to: agent, body, at };
}

export function simulatedReadReport(connector: string, messageId: string, at = Date.now()): ReceiptEvent {
  return { kind: 'receipt', connector, messageId, status: 'READ', at };
}

/**
 * The RCS side of the simulated operator: capability by number (…9: not RCS-capable), handsets that never come
 * online for RCS (…0007), READ reports a while after delivery (except …0008), kept in the store so they survive a
 * restart, and revocation of messages not yet delivered. Other endings follow the SMS rules (…0001 UNDELIVERED…).
 */
export class SimulatorRcs {
  private readonly scheduler = new DueScheduler(() => this.tick());

  constructor(
    private readonly store: Store,
    private readonly simulator: SimulatorCarrier,
    private readonly logger: Logger,
    private readonly readDelayMs = DEFAULT_READ_DELAY_MS,
  ) {
    simulator.addReceiptRule((m) => {
      if (m.type !== 'RCS') return undefined;
      if (!simulatedRcsCapable(m.recipient)) return 'UNDELIVERABLE';
      return simulatedRcsOffline(m.recipient) ? null : undefined;
    });
  }

  async capability(msisdn: string): Promise<RcsCapabilityAnswer> {
    const capable = simulatedRcsCapable(msisdn);
    return { capable, features: capable ? [...SIMULATED_RCS_FEATURES] : [] };
  }

  /** Withdraws messages the handset has not received yet: their pending receipts and read reports are dropped. */
  async revoke(messageIds: string[]): Promise<void> {
    for (let i = 0; i < messageIds.length; i += 500) {
      const ids = messageIds.slice(i, i + 500);
      await this.store.db
        .updateTable('simulator_submissions')
        .set({ receipt_status: null, receipt_due_at: null })
        .where('message_id', 'in', ids)
        .where('emitted', '=', 0)
        .execute();
      await this.store.db.deleteFrom('simulator_rcs_reads').where('message_id', 'in', ids).where('emitted', '=', 0).execute();
    }
  }

  /** Schedules the READ report of every RCS message the simulator delivers, in the transaction of the DELIVERED. */
  readonly hook: EventHook = async (db, events, messages) => {
    const due: Array<{ message_id: string; due_at: number; emitted: number }> = [];
    for (const e of events) {
      if (e.kind !== 'STATUS' || e.status !== 'DELIVERED') continue;
      const m = messages.get(e.message_id);
      if (!m || m.type !== 'RCS' || m.direction !== 'MT' || m.connector !== this.simulator.name) continue;
      if (simulatedNeverReads(m.recipient)) continue;
      due.push({ message_id: m.id, due_at: e.at + this.readDelayMs, emitted: 0 });
    }
    if (due.length === 0) return;
    await db
      .insertInto('simulator_rcs_reads')
      .values(due)
      .onConflict((oc) => oc.column('message_id').doNothing())
      .execute();
    this.scheduler.at(Math.min(...due.map((d) => d.due_at)));
  };

  start(): void {
    this.scheduler.start();
  }

  async stop(): Promise<void> {
    await this.scheduler.stop();
  }

  private async tick(): Promise<number> {
    let next = Date.now() + SAFETY_POLL_MS;
    try {
      for (;;) {
        const now = Date.now();
        const due = await this.store.db
          .selectFrom('simulator_rcs_reads')
          .select('message_id')
          .where('emitted', '=', 0)
          .where('due_at', '<=', now)
          .orderBy('due_at')
          .limit(READ_BATCH)
          .execute();
        if (due.length === 0) break;
        const ids = due.map((r) => r.message_id);
        await this.simulator.inject(ids.map((id) => simulatedReadReport(this.simulator.name, id, now)));
        await this.store.db.updateTable('simulator_rcs_reads').set({ emitted: 1 }).where('message_id', 'in', ids).execute();
        if (due.length < READ_BATCH || this.scheduler.stopped) break;
      }
      const upcoming = await this.store.db
        .selectFrom('simulator_rcs_reads')
        .select('due_at')
        .where('emitted', '=', 0)
        .orderBy('due_at')
        .limit(1)
        .executeTakeFirst();
      if (upcoming) next = Math.min(next, Number(upcoming.due_at));
    } catch (err) {
      if (!this.scheduler.stopped) this.logger.error({ err }, 'simulator: emitting RCS read reports failed; retrying');
    }
    return next;
  }
}
