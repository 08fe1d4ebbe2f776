import { sql } from 'kysely';
import type { Logger } from 'pino';
import { nextRetryDelay } from '../../core/domain/retry.ts';
import { GroupCommitter } from '../../core/group-commit.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { Store } from '../../store/db.ts';
import type { WebhookDeliveryTable } from '../../store/schema.ts';
import type { AttemptResult, WebhookHttpClient } from './http-client.ts';
import { signWebhook } from './signing.ts';
import { uuidv7 } from '../../core/domain/ids.ts';
import { WakeableLoop } from '../../workers/loop.ts';

export interface WebhookSenderOptions {
  schedule: readonly number[];
  maxInFlight?: number;
  /** Attempts waiting or running for one origin beyond which its next deliveries are deferred. */
  maxPendingPerOrigin?: number;
  claimBatch?: number;
  leaseMs?: number;
  idlePollMs?: number;
}

interface Recorded {
  delivery: WebhookDeliveryTable;
  result: AttemptResult;
  at: number;
}

/**
 * Sends claimed webhook deliveries without waiting for one before the next: each attempt runs on its own, bounded
 * per destination by the HTTP client and overall by `maxInFlight`, so a slow or dead receiver only ties up its own
 * slots. Outcomes are recorded in batches; failures are retried on the schedule, then marked FAILED.
 */
export class WebhookSender {
  private readonly loop: WakeableLoop;
  private inFlight = 0;
  private readonly inFlightDone = new Set<Promise<void>>();
  private readonly recorder: GroupCommitter<Recorded, void>;
  private readonly maxInFlight: number;
  private readonly maxPendingPerOrigin: number;
  private readonly claimBatch: number;
  private readonly leaseMs: number;

  constructor(
    private readonly store: Store,
    private readonly client: WebhookHttpClient,
    private readonly messaging: MessagingService,
    private readonly logger: Logger,
    private readonly opts: WebhookSenderOptions,
  ) {
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.maxPendingPerOrigin = opts.maxPendingPerOrigin ?? 16;
    this.claimBatch = opts.claimBatch ?? 200;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.loop = new WakeableLoop(() => this.run(), opts.idlePollMs ?? 500);
    this.recorder = new GroupCommitter((items) => this.record(items), 500);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all([...this.inFlightDone]);
    await this.recorder.idle();
  }

  wake(): void {
    this.loop.wake();
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        const room = this.maxInFlight - this.inFlight;
        if (room <= 0) return;
        const claimed = await this.claim(Date.now(), Math.min(room, this.claimBatch));
        if (claimed.length === 0 || this.loop.isStopped) return;
        const deferred: string[] = [];
        for (const d of claimed) {
          if (this.client.pending(d.url) >= this.maxPendingPerOrigin) {
            deferred.push(d.id);
            continue;
          }
          this.launch(d);
        }
        if (deferred.length > 0) await this.defer(deferred, Date.now() + 1_000);
        if (claimed.length < Math.min(room, this.claimBatch)) return;
      }
    } catch (err) {
      this.logger.error({ err }, 'webhook sender pass failed; retrying');
    }
  }

  private launch(d: WebhookDeliveryTable): void {
    this.inFlight++;
    const p = this.attempt(d)
      .catch((err) => this.logger.error({ err, delivery: d.id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        this.inFlight--;
        this.inFlightDone.delete(p);
        this.wake();
      });
    this.inFlightDone.add(p);
  }

  private async attempt(d: WebhookDeliveryTable): Promise<void> {
    let result: AttemptResult;
    if (d.method === 'GET') {
      result = await this.client.send({ method: 'GET', url: d.url, query: JSON.parse(d.payload) as Record<string, string> });
    } else {
      const channel = await this.messaging.channel(d.channel_id);
      const now = Date.now();
      const secrets = [channel.webhookSecret];
      if (channel.webhookSecretPrevious && (channel.webhookSecretPreviousUntil ?? 0) > now) {
        secrets.push(channel.webhookSecretPrevious);
      }
      const headers = signWebhook({ secrets, id: d.id, timestamp: new Date(now), body: d.payload });
      result = await this.client.send({
        method: 'POST',
        url: d.url,
        body: d.payload,
        headers: { ...headers, 'content-type': 'application/json' },
      });
    }
    await this.recorder.submit({ delivery: d, result, at: Date.now() });
  }

  private async claim(now: number, limit: number): Promise<WebhookDeliveryTable[]> {
    const lock = this.store.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const res = await sql<WebhookDeliveryTable>`
      update webhook_deliveries set lease_until = ${now + this.leaseMs}
      where id in (
        select id from webhook_deliveries
        where state = 'PENDING' and next_attempt_at <= ${now} and (lease_until is null or lease_until < ${now})
        order by next_attempt_at limit ${limit} ${lock}
      )
      returning *`.execute(this.store.db);
    return res.rows;
  }

  private async defer(ids: string[], until: number): Promise<void> {
    await this.store.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: until, lease_until: null })
      .where('id', 'in', ids)
      .execute();
  }

  private async record(items: Recorded[]): Promise<void[]> {
    await this.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values(
          items.map((i) => ({
            id: uuidv7(i.at),
            delivery_id: i.delivery.id,
            at: i.at,
            outcome: i.result.outcome,
            http_status: i.result.httpStatus,
            latency_ms: Math.round(i.result.latencyMs),
            error: i.result.error,
          })),
        )
        .execute();
      const updates = items.map(({ delivery: d, result: r, at }) => {
        const attempts = d.attempts + 1;
        let state = 'PENDING';
        let next = d.next_attempt_at;
        if (r.outcome === 'delivered') state = 'DELIVERED';
        else if (r.outcome === 'gone') state = 'GONE';
        else if (r.outcome === 'refused') state = 'REFUSED';
        else {
          const delay = nextRetryDelay(attempts, this.opts.schedule);
          if (delay === null) state = 'FAILED';
          else next = at + delay;
        }
        const deliveredAt = state === 'DELIVERED' ? at : null;
        return sql`(${d.id}, ${state}, ${attempts}, ${next}, ${r.httpStatus}, ${r.error}, ${at}, ${deliveredAt})`;
      });
      for (let i = 0; i < updates.length; i += 200) {
        await sql`update webhook_deliveries set state = v.column2, attempts = cast(v.column3 as integer),
            next_attempt_at = cast(v.column4 as bigint), lease_until = null,
            last_http_status = cast(v.column5 as integer), last_error = v.column6,
            updated_at = cast(v.column7 as bigint), delivered_at = cast(v.column8 as bigint)
          from (values ${sql.join(updates.slice(i, i + 200))}) as v where webhook_deliveries.id = v.column1`.execute(trx);
      }
    });
    return items.map(() => undefined);
  }
}
