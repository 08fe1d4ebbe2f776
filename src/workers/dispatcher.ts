import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { CarrierConnector, OutboundMessage, SubmitResult } from '../core/ports.ts';
import type { Router } from '../connectors/router.ts';
import { backoffDelay } from '../core/domain/retry.ts';
import type { MessagingService } from '../core/messaging/service.ts';
import type { StatusChange } from '../core/messaging/status.ts';
import type { Store } from '../store/db.ts';
import { WakeableLoop } from './loop.ts';
import type { MessageRow } from '../store/messages.ts';

export interface DispatcherOptions {
  nodeId: string;
  batchSize?: number;
  leaseMs?: number;
  idlePollMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Per-type handling of messages whose validity ended in the queue (RCS falls back to SMS); returns handled ids. */
  onExpired?: (rows: Array<{ id: string; type: string }>, now: number) => Promise<Set<string>>;
}

interface Claimed {
  message_id: string;
  attempts: number;
}

/**
 * Moves due messages from the store to the carriers: claims a batch with a lease (another node takes it over if
 * this one dies), submits it, and records the outcomes in one transaction. Temporary errors are retried with
 * backoff until the message's validity ends; permanent ones end UNDELIVERABLE and are refunded.
 */
export class Dispatcher {
  private readonly loop: WakeableLoop;
  private readonly batchSize: number;
  private readonly leaseMs: number;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly router: Router,
    private readonly logger: Logger,
    private readonly opts: DispatcherOptions,
  ) {
    this.batchSize = opts.batchSize ?? 500;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.loop = new WakeableLoop(() => this.run(), opts.idlePollMs ?? 500);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Run a pass now (new messages were accepted). */
  wake(): void {
    this.loop.wake();
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        const n = await this.pass(Date.now());
        if (n < this.batchSize || this.loop.isStopped) break;
      }
    } catch (err) {
      this.logger.error({ err }, 'dispatcher pass failed; retrying');
    }
  }

  /** One claim–submit–record cycle; returns how many messages it claimed. */
  async pass(now: number): Promise<number> {
    const claimed = await this.claim(now);
    if (claimed.length === 0) return 0;
    const attempts = new Map(claimed.map((c) => [c.message_id, c.attempts]));
    const rows = await this.messaging.getMany(claimed.map((c) => c.message_id));
    const byId = new Map(rows.map((r) => [r.id, r]));

    const gone = claimed.filter((c) => {
      const m = byId.get(c.message_id);
      return !m || (m.status !== 'SCHEDULED' && m.status !== 'ENROUTE');
    });
    const live = rows.filter((m) => m.status === 'SCHEDULED' || m.status === 'ENROUTE');
    const expired = live.filter((m) => m.validity_until !== null && m.validity_until <= now);
    const due = live.filter((m) => !(m.validity_until !== null && m.validity_until <= now));

    const scheduled = due.filter((m) => m.status === 'SCHEDULED');
    if (scheduled.length > 0) {
      await this.messaging.applyStatusNow(scheduled.map((m) => ({ messageId: m.id, status: 'ENROUTE' as const, at: now })));
    }

    const results = new Map<string, { connector: CarrierConnector; result: SubmitResult }>();
    const groups = new Map<CarrierConnector, MessageRow[]>();
    for (const m of due) {
      const connector = this.router.pick(m);
      if (!connector) {
        results.set(m.id, {
          connector: null as never,
          result: { ok: false, temporary: false, code: 'NOT_ROUTABLE', reason: 'no route to this destination' },
        });
        continue;
      }
      const list = groups.get(connector) ?? [];
      list.push(m);
      groups.set(connector, list);
    }
    await Promise.all(
      [...groups].map(async ([connector, list]) => {
        let out: SubmitResult[];
        try {
          out = await connector.submit(list.map(toOutbound));
        } catch (err) {
          this.logger.warn({ err, connector: connector.name }, 'carrier submit failed');
          out = list.map(() => ({ ok: false as const, temporary: true, code: 'CONNECTOR_ERROR', reason: (err as Error).message }));
        }
        list.forEach((m, i) => results.set(m.id, { connector, result: out[i]! }));
      }),
    );

    const handledExpiry = expired.length > 0 && this.opts.onExpired ? await this.opts.onExpired(expired, now) : new Set<string>();
    const changes: StatusChange[] = expired.filter((m) => !handledExpiry.has(m.id)).map((m) => ({
      messageId: m.id,
      status: 'UNDELIVERED',
      detail: 'EXPIRED',
      at: now,
      refund: true,
    }));
    const submitted: Array<{ id: string; upstreamId: string; connector: string }> = [];
    const retries: Array<{ id: string; dueAt: number; attempts: number }> = [];
    const done = new Set<string>([...gone.map((g) => g.message_id), ...expired.map((m) => m.id)]);
    for (const m of due) {
      const r = results.get(m.id)!;
      if (r.result.ok) {
        submitted.push({ id: m.id, upstreamId: r.result.upstreamId, connector: r.connector.name });
        done.add(m.id);
      } else if (r.result.temporary) {
        const n = (attempts.get(m.id) ?? 0) + 1;
        const dueAt = now + backoffDelay(n, this.opts.retryBaseMs ?? 1_000, this.opts.retryMaxMs ?? 300_000);
        if (m.validity_until !== null && dueAt > m.validity_until) {
          changes.push({ messageId: m.id, status: 'UNDELIVERED', detail: 'EXPIRED', at: now, refund: true });
          done.add(m.id);
        } else {
          retries.push({ id: m.id, dueAt, attempts: n });
        }
      } else {
        changes.push({
          messageId: m.id,
          status: 'UNDELIVERABLE',
          detail: r.result.code === 'NOT_ROUTABLE' ? 'NOT_ROUTABLE' : 'REJECTED',
          at: now,
          refund: true,
        });
        done.add(m.id);
      }
    }
    await this.record(submitted, retries, [...done]);
    if (changes.length > 0) await this.messaging.applyStatusNow(changes);
    return claimed.length;
  }

  private async claim(now: number): Promise<Claimed[]> {
    const lease = now + this.leaseMs;
    const lock = this.store.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const res = await sql<Claimed>`
      update dispatch_queue set claimed_by = ${this.opts.nodeId}, lease_until = ${lease}
      where message_id in (
        select message_id from dispatch_queue
        where due_at <= ${now} and (lease_until is null or lease_until < ${now})
        order by due_at limit ${this.batchSize} ${lock}
      )
      returning message_id, attempts`.execute(this.store.db);
    return res.rows;
  }

  private async record(
    submitted: Array<{ id: string; upstreamId: string; connector: string }>,
    retries: Array<{ id: string; dueAt: number; attempts: number }>,
    done: string[],
  ): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < submitted.length; i += 300) {
        const chunk = submitted.slice(i, i + 300);
        const values = sql.join(chunk.map((s) => sql`(${s.id}, ${s.upstreamId}, ${s.connector})`));
        await sql`update messages set upstream_id = v.column2, connector = v.column3
          from (values ${values}) as v where messages.id = v.column1`.execute(trx);
      }
      for (const r of retries) {
        await trx
          .updateTable('dispatch_queue')
          .set({ due_at: r.dueAt, attempts: r.attempts, claimed_by: null, lease_until: null })
          .where('message_id', '=', r.id)
          .execute();
      }
      for (let i = 0; i < done.length; i += 500) {
        await trx.deleteFrom('dispatch_queue').where('message_id', 'in', done.slice(i, i + 500)).execute();
      }
    });
  }
}

export function toOutbound(m: MessageRow): OutboundMessage {
  return {
    id: m.id,
    type: m.type,
    channelId: m.channel_id,
    organisationId: m.organisation_id,
    recipient: m.recipient,
    sender: m.sender,
    body: JSON.parse(m.body) as Record<string, unknown>,
    validityUntil: m.validity_until,
    registeredDelivery: m.registered_delivery,
  };
}
