import type { Logger } from 'pino';
import { GroupCommitter } from '../../core/group-commit.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { WebhookOutbox } from '../../core/webhooks/outbox.ts';
import { Loop } from '../../workers/loop.ts';
import type { AttemptResult, WebhookHttpClient } from './http-client.ts';
import { signWebhook } from './signing.ts';

export interface WebhookSenderOptions {
  maxInFlight?: number;
  /** Attempts waiting or running for one origin beyond which its next deliveries are deferred. */
  maxPendingPerOrigin?: number;
  claimBatch?: number;
  /** How long a claimed delivery is reserved for this node (a node that dies gives its deliveries up after it). */
  leaseMs?: number;
  /** The slow poll behind the wake-ups. */
  safetyPollMs?: number;
}

type Delivery = Awaited<ReturnType<WebhookOutbox['claim']>>[number];

interface Recorded {
  delivery: Delivery;
  outcome: AttemptResult;
  at: number;
}

/**
 * Sends claimed webhook deliveries without waiting for one before the next: each attempt runs on its own, bounded
 * per destination by the HTTP client and overall by `maxInFlight`, so a slow or dead receiver only ties up its own
 * slots. Outcomes are recorded in batches through the outbox, which retries failures on its schedule.
 */
export class WebhookSender {
  private readonly loop: Loop;
  private inFlight = 0;
  private readonly inFlightDone = new Set<Promise<void>>();
  private readonly recorder: GroupCommitter<Recorded, void>;
  private readonly maxInFlight: number;
  private readonly maxPendingPerOrigin: number;
  private readonly claimBatch: number;
  private readonly leaseMs: number;

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly client: WebhookHttpClient,
    private readonly messaging: MessagingService,
    private readonly logger: Logger,
    opts: WebhookSenderOptions = {},
  ) {
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.maxPendingPerOrigin = opts.maxPendingPerOrigin ?? 16;
    this.claimBatch = opts.claimBatch ?? 200;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.loop = new Loop(() => this.run(), opts.safetyPollMs ?? 5_000, (err) =>
      this.logger.error({ err }, 'webhook sender pass failed; retrying'),
    );
    this.recorder = new GroupCommitter(async (items) => {
      await this.outbox.settle(items);
      return items.map((): void => undefined);
    }, 500);
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

  private async run(): Promise<number | null> {
    for (;;) {
      const room = Math.min(this.maxInFlight - this.inFlight, this.claimBatch);
      // Full: a finishing attempt wakes the loop.
      if (room <= 0) return null;
      const now = Date.now();
      const claimed = await this.outbox.claim(now, room, this.leaseMs);
      if (this.loop.isStopped) return null;
      const deferred: string[] = [];
      for (const d of claimed) {
        if (this.client.pending(d.url) >= this.maxPendingPerOrigin) deferred.push(d.id);
        else this.launch(d);
      }
      if (deferred.length > 0) await this.outbox.defer(deferred, Date.now() + 1_000);
      if (claimed.length < room) return this.outbox.nextDue(Date.now());
    }
  }

  private launch(d: Delivery): void {
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

  private async attempt(d: Delivery): Promise<void> {
    let outcome: AttemptResult;
    if (d.method === 'GET') {
      outcome = await this.client.send({ method: 'GET', url: d.url, query: JSON.parse(d.payload) as Record<string, string> });
    } else {
      const channel = await this.messaging.channel(d.channel_id);
      const now = Date.now();
      const secrets = [channel.webhookSecret];
      if (channel.webhookSecretPrevious && (channel.webhookSecretPreviousUntil ?? 0) > now) {
        secrets.push(channel.webhookSecretPrevious);
      }
      const headers = signWebhook({ secrets, id: d.id, timestamp: new Date(now), body: d.payload });
      outcome = await this.client.send({
        method: 'POST',
        url: d.url,
        body: d.payload,
        headers: { ...headers, 'content-type': 'application/json' },
      });
    }
    await this.recorder.submit({ delivery: d, outcome, at: Date.now() });
  }
}
