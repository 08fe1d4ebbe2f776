import type { Logger } from 'pino';
import type { TernConfig } from '../config/index.ts';
import { Dispatch } from '../core/messaging/dispatch.ts';
import { Expiry } from '../core/messaging/expiry.ts';
import { Retention } from '../core/retention.ts';
import { QUEUE_DEPTH_CAP, WorkQueues } from '../core/work-queues.ts';
import { SmppOutboxWorker } from '../doors/smpp/outbox-worker.ts';
import { WebhookSender } from '../doors/webhooks/sender.ts';
import { fenceMargin } from '../domain/leases.ts';
import { LOOKUP_BATCH_QUEUE } from '../store/lookup-batches.ts';
import { OTP_TIMER_QUEUE } from '../store/otp.ts';
import { CONNECTOR_RECORD_QUEUE, DISPATCH_QUEUE, type QueueDefinition, SMPP_OUTBOX_QUEUE, UNMATCHED_RECEIPT_QUEUE, WEBHOOK_QUEUE } from '../store/queue.ts';
import type { Signal } from '../store/signals.ts';
import { ConnectorTimers } from '../workers/connector-timers.ts';
import { dispatcherLoop } from '../workers/dispatcher.ts';
import { expiryLoop } from '../workers/expiry.ts';
import { Heartbeat } from '../workers/heartbeat.ts';
import { Loop } from '../workers/loop.ts';
import { retentionLoop } from '../workers/retention.ts';
import { SafetyPoll } from '../workers/safety-poll.ts';
import type { Connectors } from './connectors.ts';
import type { Core, NetworkUseCases } from './core.ts';
import type { Doors } from './doors.ts';
import type { StartStep } from './lifecycle.ts';

/** How often data past its retention is pruned. */
const PRUNE_EVERY_MS = 60_000;

/** One worker of the node: what wakes it, what is handed to it, and how it starts and stops. */
export type Worker = {
  name: string;
  /** Declares where this node hands it work in memory as it commits, without a claim (see core/messaging/handoff.ts). */
  handOff?(): void;
  start(): void | Promise<void>;
  stop(): Promise<void>;
} & (
  | {
      /** The leased queue it reads: its signal wakes the worker when rows are written (here, or by another node). */
      queue: QueueDefinition;
      wake(): void;
    }
  /** A worker on a clock. */
  | { queue: null }
);

export type Workers = ReturnType<typeof buildWorkers>;

/**
 * The workers: each queue's, and those on a clock (expiry, retention, the heartbeat and the safety poll). Built
 * here, woken by their queue's signal, and handed work as their table says; started and stopped by the composition
 * root, in the order of its parts.
 */
export function buildWorkers(
  config: TernConfig,
  core: Core,
  connectors: Connectors,
  network: NetworkUseCases,
  doors: Doors,
  logger: Logger,
  unlessDiskFull: StartStep,
) {
  const { store, messaging, metrics, carrierEvents } = core;
  const { router } = connectors;
  const leaseMs = config.dispatchLeaseMs;

  const expiry = new Expiry(store, messaging, { RCS: (ids, now) => network.rcs.validityEnded(ids, now) });
  const sweeper = expiryLoop(expiry, logger.child({ component: 'expiry' }), config.safetyPollMs);
  const dispatch = new Dispatch(store, messaging, router, logger.child({ component: 'dispatcher' }), {
    nodeId: config.nodeId,
    leaseMs,
    lookups: network.lookup,
    onTakenOver: (n) => metrics.dispatchTakenOver.inc(n),
    onFenced: (when, n) => metrics.fenced.inc({ queue: 'dispatch', when: `${when}_send` }, n),
    onExpired: (rows, now) => expiry.handleByType(rows, now),
    onPlaced: (placements) => {
      // Each expires at the end of its validity, unless a receipt comes first.
      for (const p of placements) if (p.validityUntil !== null) sweeper.at(p.validityUntil);
      // Receipts wait for their placement only where they are matched on the operator's id.
      return carrierEvents.placed(placements.filter((p) => router.connector(p.connector)?.receiptsNameMessage !== true));
    },
  });
  const dispatcher = dispatcherLoop(dispatch, config.nodeId, leaseMs, logger.child({ component: 'dispatcher' }));
  const timers = new ConnectorTimers(core.connectors, router, logger.child({ component: 'connectors' }), leaseMs);
  const receiptMatcher = new Loop(
    (): Promise<number | null> => carrierEvents.retryUnmatched(Date.now()),
    null,
    (err) => logger.error({ err }, 'matching kept receipts failed; retrying'),
  );
  const webhookSender = new WebhookSender(core.webhooks, doors.webhookClient, messaging, logger.child({ component: 'webhooks' }), {
    leaseMs,
    onFenced: (when, n) => metrics.fenced.inc({ queue: 'webhooks', when: `${when}_send` }, n),
    onAttempts: (ended) => metrics.countWebhookOutcomes(ended),
  });
  const smppSender = new SmppOutboxWorker(core.smppOutbox, doors.smppServer, logger.child({ component: 'smpp-outbox' }));
  const otpTimers = new Loop(
    () => core.otp.pass(Date.now()),
    null,
    (err) => logger.error({ err }, 'one-time password timers failed; retrying'),
  );
  const lookupBatches = new Loop(
    () => network.lookupBatches.pass(Date.now()),
    null,
    (err) => logger.error({ err }, 'lookup batches failed; retrying'),
  );
  network.lookupBatches.onRoom(() => lookupBatches.wake());
  const retention = retentionLoop(
    [
      { name: 'idempotency keys', prune: (now) => core.idempotency.prune(now) },
      { name: 'rate limit windows', prune: (now) => core.rateLimiter.prune(now) },
      { name: 'settled connector records', prune: (now) => core.connectors.pruneRecords(now) },
      { name: 'forgotten lockouts', prune: (now) => core.access.prune(now) },
      { name: 'ended console sessions and links', prune: (now) => core.users.prune(now) },
      { name: 'past sending window ramps', prune: (now) => core.messaging.windows.prune(now) },
      ...new Retention(store, config.retention).tasks(),
      { name: 'message texts past their content retention', prune: (now) => core.privacy.eraseExpiredContent(now) },
      { name: 'audit log entries', prune: (now) => core.audit.prune(now) },
      { name: 'settled one-time passwords', prune: (now) => core.otp.prune(now, config.retention.messageDays * 86_400_000) },
    ],
    logger.child({ component: 'retention' }),
    PRUNE_EVERY_MS,
  );

  // Behind the wake-ups: a slow look at every queue for work due that no wake-up announced.
  const workQueues = new WorkQueues(store);
  metrics.watchQueues(() => workQueues.backlog(), QUEUE_DEPTH_CAP);
  const safetyPoll = new SafetyPoll(workQueues, config.safetyPollMs, logger.child({ component: 'safety-poll' }));
  // A node that stops beating (it died, or stalled) leaves work behind: what it held is taken over as its leases run
  // out (all of them by TERN_DISPATCH_LEASE_SECONDS after it is noticed), what it had scheduled is looked at again.
  // The dispatcher takes over what they claimed; the other queues do not record who claimed a row: their workers look
  // at them, as the sweeps look at what the stopped nodes had received.
  const lookAtWorkLeft = () => {
    workQueues.wakeAll(['dispatch']);
    sweeper.wake();
    doors.smppServer.sweepConcat();
  };
  const heartbeat = new Heartbeat(
    core.cluster,
    (nodes) => {
      logger.warn({ nodes }, 'nodes stopped beating: their work is taken over as their leases run out');
      dispatcher.takeOver(nodes);
      lookAtWorkLeft();
      setTimeout(lookAtWorkLeft, leaseMs + fenceMargin(leaseMs)).unref();
    },
    logger.child({ component: 'cluster' }),
  );

  const table = {
    dispatcher: {
      name: 'dispatcher',
      queue: DISPATCH_QUEUE,
      handOff: () => messaging.handOffTo(dispatcher),
      start: () => dispatcher.start(),
      stop: () => dispatcher.stop(),
      wake: () => dispatcher.wake(),
    },
    connectorTimers: {
      name: 'connector timers',
      queue: CONNECTOR_RECORD_QUEUE,
      handOff: () => {
        core.connectors.handRecordsTo(timers);
        core.connectors.onRecordsDue((lanes) => timers.wake(lanes));
      },
      start: () => timers.start(),
      stop: () => timers.stop(),
      wake: () => timers.wake(),
    },
    receiptMatcher: {
      name: 'receipt matcher',
      queue: UNMATCHED_RECEIPT_QUEUE,
      start: () => receiptMatcher.start(),
      stop: () => receiptMatcher.stop(),
      wake: () => receiptMatcher.wake(),
    },
    webhookSender: {
      name: 'webhook sender',
      queue: WEBHOOK_QUEUE,
      handOff: () => core.webhooks.handTo(webhookSender),
      start: () => webhookSender.start(),
      stop: () => webhookSender.stop(),
      wake: () => webhookSender.wake(),
    },
    smppSender: {
      name: 'SMPP outbox',
      queue: SMPP_OUTBOX_QUEUE,
      handOff: () => {
        core.smppOutbox.handTo(smppSender);
        doors.smpp.onReceiverBound((credentialId) => smppSender.bound(credentialId));
      },
      start: () => smppSender.start(),
      stop: () => smppSender.stop(),
      wake: () => smppSender.wake(),
    },
    otpTimers: {
      name: 'one-time password timers',
      queue: OTP_TIMER_QUEUE,
      start: () => otpTimers.start(),
      stop: () => otpTimers.stop(),
      wake: () => otpTimers.wake(),
    },
    lookupBatches: {
      name: 'lookup batches',
      queue: LOOKUP_BATCH_QUEUE,
      start: () => lookupBatches.start(),
      // The batches under way write their webhook before the connectors they use stop.
      stop: async () => {
        await lookupBatches.stop();
        await network.lookupBatches.drain();
      },
      wake: () => lookupBatches.wake(),
    },
    expiry: {
      name: 'expiry',
      queue: null,
      start: () => sweeper.start(),
      stop: () => sweeper.stop(),
    },
    retention: {
      name: 'retention',
      queue: null,
      start: () => retention.start(Date.now() + PRUNE_EVERY_MS),
      stop: () => retention.stop(),
    },
    heartbeat: {
      name: 'heartbeat',
      queue: null,
      start: () => unlessDiskFull('the first heartbeat', () => heartbeat.start(), undefined),
      stop: () => heartbeat.stop(),
    },
    safetyPoll: {
      name: 'safety poll',
      queue: null,
      // What this node held before a restart under the same id is free once those leases ran out: looked at by then.
      start: () => safetyPoll.start(Date.now() + Math.min(config.safetyPollMs, leaseMs + fenceMargin(leaseMs))),
      stop: () => safetyPoll.stop(),
    },
  } satisfies Record<string, Worker>;

  const queues: Signal[] = [];
  for (const worker of Object.values(table) as Worker[]) {
    worker.handOff?.();
    if (worker.queue === null) continue;
    store.signals.on(worker.queue.signal, () => worker.wake());
    queues.push(worker.queue.signal);
  }
  // The database answers again after a failure: every worker looks at its queue now rather than at its next retry.
  store.health.onChange((state) => {
    if (state === 'up') for (const signal of queues) store.signals.fire(signal);
  });
  return { ...table, workQueues };
}
