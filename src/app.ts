import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { ConfigError, type TernConfig } from './config.ts';
import { CoreError } from './core/errors.ts';
import { ConnectorRegistry, KINDS } from './connectors/registry.ts';
import { ConnectorRouter } from './connectors/router.ts';
import { ConsumptionService } from './core/billing/consumption.ts';
import { FundsService } from './core/billing/funds.ts';
import { VOICE_CALL_ATTEMPTS } from './core/domain/delivery.ts';
import { parseSchedule } from './core/domain/retry.ts';
import { EventConsumers } from './core/events.ts';
import { LookupService } from './core/lookup/service.ts';
import { CarrierEvents } from './core/messaging/carrier-events.ts';
import { Cluster } from './core/cluster.ts';
import { ConnectorAdmin } from './core/routing/admin.ts';
import { fenceMargin } from './core/domain/leases.ts';
import { SecretBox } from './core/secrets.ts';
import { resolveSecretKey } from './secret-key.ts';
import { Dispatch } from './core/messaging/dispatch.ts';
import { Expiry } from './core/messaging/expiry.ts';
import { ClusterRateLimiter } from './core/rate-limit.ts';
import { Retention } from './core/retention.ts';
import { InboundService } from './core/messaging/inbound.ts';
import { MessagingService } from './core/messaging/service.ts';
import { RcsService } from './core/rcs/service.ts';
import { ConnectorService } from './core/routing/service.ts';
import type { Services } from './core/services.ts';
import { SmppBinds } from './core/smpp/binds.ts';
import { SmppConcatParts } from './core/smpp/concat-parts.ts';
import { SmppOutbox } from './core/smpp/outbox.ts';
import { AccessControl } from './core/tenancy/access.ts';
import { TenantAdmission } from './core/tenancy/admission.ts';
import { AuthService } from './core/tenancy/auth.ts';
import { BlacklistService } from './core/tenancy/blacklist.ts';
import { type AdminKeyResult, type DemoResult, ensureAdminKey, ensureDemo } from './core/tenancy/bootstrap.ts';
import { TenancyService } from './core/tenancy/service.ts';
import { SmppCredentialService } from './core/tenancy/smpp-credentials.ts';
import { SubAccountService } from './core/tenancy/sub-accounts.ts';
import { ContactService } from './core/contacts/service.ts';
import { FraudGuards } from './core/fraud/guards.ts';
import { OtpCodes } from './core/otp/codes.ts';
import { OtpService } from './core/otp/service.ts';
import { Sends } from './core/messaging/sends.ts';
import { IdempotencyService } from './core/idempotency.ts';
import { WebhookDeliveries } from './core/webhooks/deliveries.ts';
import { VoiceService } from './core/voice/service.ts';
import { WebhookOutbox } from './core/webhooks/outbox.ts';
import { WorkQueues } from './core/work-queues.ts';
import { MessageFeed } from './core/feed/message-feed.ts';
import { QuoteService } from './core/quotes/service.ts';
import { legacyReplyLinkHook, legacyWebhookFormatter } from './doors/legacy/callbacks.ts';
import { legacyRoutes } from './doors/legacy/routes.ts';
import { consoleRoutes } from './doors/console/routes.ts';
import { buildHttpServer } from './doors/rest/server.ts';
import { CertificateError, type CertificatePair, HttpsListener, loadCertificatePair } from './doors/rest/https.ts';
import { SmppGateway, smppMetricHook } from './doors/smpp/gateway.ts';
import { SmppOutboxWorker } from './doors/smpp/outbox-worker.ts';
import { createSmppServer } from './doors/smpp/server.ts';
import { WebhookHttpClient } from './doors/webhooks/http-client.ts';
import { WebhookSender } from './doors/webhooks/sender.ts';
import { Metrics } from './metrics.ts';
import { createTextToSpeech } from './speech/engine.ts';
import { openStore, type Store } from './store/db.ts';
import { ConnectorTimers } from './workers/connector-timers.ts';
import { dispatcherLoop } from './workers/dispatcher.ts';
import { expiryLoop } from './workers/expiry.ts';
import { Heartbeat } from './workers/heartbeat.ts';
import { Loop } from './workers/loop.ts';
import { retentionLoop } from './workers/retention.ts';
import { SafetyPoll } from './workers/safety-poll.ts';

export interface TernApp {
  readonly services: Services;
  readonly http: FastifyInstance;
  readonly logger: Logger;
  readonly adminKey: AdminKeyResult;
  readonly demo: DemoResult | null;
  /** The database (tests read it directly). */
  readonly store: Store;
  /** Starts listening; resolves with the bound ports (useful with port 0). */
  start(): Promise<{ httpPort: number; smppPort: number; smppTlsPort?: number; httpsPort?: number }>;
  /** Stops accepting, drains work in flight and closes the database. */
  stop(): Promise<void>;
}

/** The HTTPS certificate and key, checked before anything starts; a bad file stops the start naming its setting. */
function loadHttpsPair(config: TernConfig): CertificatePair | null {
  if (config.httpsPort === null || config.httpsCert === null || config.httpsKey === null) return null;
  try {
    return loadCertificatePair(config.httpsCert, config.httpsKey);
  } catch (err) {
    if (err instanceof CertificateError) throw new ConfigError(err.file === 'cert' ? 'TERN_HTTPS_CERT' : 'TERN_HTTPS_KEY', err.message);
    throw err;
  }
}

/** How often data past its retention is pruned. */
const PRUNE_EVERY_MS = 60_000;

export interface AppOptions {
  logger?: Logger;
  demo?: boolean;
}

/**
 * The composition root: builds the store, the core's use cases, the connectors and the doors, declares what runs
 * with every message event and which worker wakes for which queue, and starts and stops them in order.
 */
export async function createApp(config: TernConfig, opts: AppOptions = {}): Promise<TernApp> {
  const logger = opts.logger ?? pino({ level: config.logLevel });
  const httpsPair = loadHttpsPair(config);
  const store = await openStore(config.databaseUrl, config.nodeId, { sqliteSynchronous: config.sqliteSynchronous, sqliteCacheMb: config.sqliteCacheMb });
  const adminKey = await ensureAdminKey(store, config.adminKey);
  const secretKey = resolveSecretKey(config.secretKey, config.databaseUrl);
  const box = new SecretBox(secretKey.key);
  if (secretKey.source === 'file') logger.info({ path: secretKey.path }, 'secrets are sealed with the key in this file (set TERN_SECRET_KEY to use another)');
  if (secretKey.source === 'none') logger.warn('TERN_SECRET_KEY is not set: webhook signing secrets and operator secrets cannot be stored');
  const tenancy = new TenancyService(store, box);
  const sealed = await tenancy.sealSecretsInClear();
  if (sealed > 0) logger.info({ channels: sealed }, 'webhook signing secrets stored in clear were sealed');
  const auth = new AuthService(store, tenancy, adminKey.hash);
  const smppCredentials = new SmppCredentialService(store, tenancy);
  const consumers = new EventConsumers();
  const validity = { messageValiditySeconds: config.messageValiditySeconds };
  const messaging = new MessagingService(store, tenancy, validity, consumers);
  await messaging.init();
  const inbound = new InboundService(store, tenancy, messaging);

  let boundHttpPort = config.httpPort;
  const publicBase = () =>
    config.publicUrl ?? `http://${config.httpHost === '0.0.0.0' || config.httpHost === '::' ? 'localhost' : config.httpHost}:${boundHttpPort}`;
  const rateLimiter = new ClusterRateLimiter(store);
  const cluster = new Cluster(store, config.nodeId, { leaseMs: config.dispatchLeaseMs });

  // Operator connections: definitions in the database, live connectors in the registry, routes in the router.
  const carrierEvents = new CarrierEvents(store, messaging, async (events) => void (await inbound.receive(events)), {
    callAttempts: VOICE_CALL_ATTEMPTS,
    callRetryMs: config.voiceRetryMs,
  });
  const connectors = new ConnectorService(store, carrierEvents.sink, { box, limiter: rateLimiter, cluster, publicBase });
  const connectorAdmin = new ConnectorAdmin(store, KINDS, box);
  // Connectors placing calls read the recording from the voice service (made below; read only once calls are placed).
  const registry = new ConnectorRegistry(
    connectors,
    { simulator: config.simulator, voiceAudio: (id) => voice.callAudio(id) },
    logger.child({ component: 'connectors' }),
  );
  const router = new ConnectorRouter(registry);

  const lookup = new LookupService(store, { liveStatus: (n) => router.liveStatus(n) });
  const voice = new VoiceService(store, messaging, createTextToSpeech(config.tts), logger.child({ component: 'voice' }));
  const rcs = new RcsService(
    store,
    messaging,
    { capability: (msisdn) => router.rcsCapability(msisdn), revoke: (messages) => router.revoke(messages) },
    validity,
    logger.child({ component: 'rcs' }),
  );
  const webhooks = new WebhookOutbox(store, messaging, publicBase, parseSchedule(config.webhookRetrySchedule));
  webhooks.registerFormatter(legacyWebhookFormatter);
  const smppOutbox = new SmppOutbox(store);
  const metrics = new Metrics();
  metrics.watchStatements(() => store.statements.count);
  const access = new AccessControl(store, auth, rateLimiter, {
    defaults: config.trafficLimits,
    failuresPerMinute: config.authFailuresPerMinute,
    onFailure: (door) => metrics.authFailures.inc({ door }),
    onLockout: (door) => metrics.authLockouts.inc({ door }),
    onLimited: (group) => metrics.rateLimited.inc({ group }),
  });
  const smppBinds = new SmppBinds(store, config.nodeId);
  const smpp = new SmppGateway(tenancy, messaging, smppCredentials, smppOutbox, access, smppBinds, new SmppConcatParts(store, config.nodeId), logger.child({ component: 'smpp' }));

  // Fraud guards look at every message before it is stored; a one-time password's text is put back for connectors only.
  const fraudGuards = new FraudGuards(store, tenancy, rateLimiter, {
    ...config.fraud,
    onBlocked: (guard) => metrics.fraudBlocked.inc({ guard }),
    onAlert: (guard) => metrics.fraudAlerts.inc({ guard }),
  });
  messaging.screenWith(fraudGuards.screen);
  const otp = new OtpService(store, tenancy, messaging, voice, new OtpCodes(secretKey.key), publicBase, config.otp, logger.child({ component: 'otp' }), {
    sent: (channel) => metrics.otpSent.inc({ channel }),
    settled: (status) => metrics.otpSettled.inc({ status }),
    checked: (result) => metrics.otpChecks.inc({ result }),
  });
  registry.revealWith((batch) => otp.reveal(batch));
  metrics.watchOtp(() => otp.conversion());

  // What runs in the transaction of every message event, in this order.
  consumers.declare([
    legacyReplyLinkHook, // a reply's legacy callback URL must be on it before its webhook is written
    webhooks.hook,
    rcs.conversationHook,
    smpp.hook,
  ]);

  const idempotency = new IdempotencyService(store);
  const funds = new FundsService(store, idempotency);
  metrics.watchConnectors(async () => {
    const waiting = await connectors.oldestWaiting();
    const now = Date.now();
    return registry.names().flatMap((name) => {
      const s = router.state(name);
      if (!s) return [];
      const since = waiting.get(name);
      return [{ name, state: s.state, binds: s.binds, inFlight: s.inFlight, unknownOutcomes: s.unknownOutcomes, repeatsRecognised: s.repeatsRecognised, counters: s.counters, oldestQueuedSeconds: since === undefined ? null : Math.max(0, (now - since) / 1000) }];
    });
  });
  const services: Services = {
    config,
    metrics,
    publicBase,
    database: { dialect: store.dialect, ping: () => store.ping() },
    tenancy,
    auth,
    access,
    admission: new TenantAdmission(config.organisationConcurrency, undefined, () => metrics.turnsWaited.inc()),
    smppCredentials,
    subAccounts: new SubAccountService(store, tenancy, smppCredentials, funds, box),
    contacts: new ContactService(store),
    sends: new Sends(store, messaging),
    blacklist: new BlacklistService(store),
    lookup,
    messaging,
    rcs,
    voice,
    inbound,
    webhooks,
    webhookDeliveries: new WebhookDeliveries(store),
    funds,
    idempotency,
    consumption: new ConsumptionService(store),
    connectors,
    connectorAdmin,
    router,
    rateLimiter,
    otp,
    fraudGuards,
    feed: new MessageFeed(store),
    quotes: new QuoteService(tenancy, messaging),
    smppSessions: {
      list: (credentialIds) =>
        (credentialIds ? credentialIds.flatMap((id) => smppServer.sessions(id)) : smppServer.sessions()).map((s) => ({
          credentialId: s.principalKey,
          systemId: s.systemId,
          mode: s.mode,
          remoteAddress: s.remoteAddress,
          secure: s.secure,
          boundAt: s.boundAt,
        })),
    },
  };
  if (config.connectors || config.routes) {
    try {
      await connectorAdmin.applyConfiguration(config.connectors, config.routes);
    } catch (err) {
      await store.close();
      if (err instanceof CoreError) throw new ConfigError('TERN_CONFIG', err.detail);
      throw err;
    }
  }
  const demo = opts.demo ? await ensureDemo(store, tenancy) : null;
  const http = await buildHttpServer(services, logger);
  legacyRoutes(http, services);
  await consoleRoutes(http);
  const https =
    httpsPair &&
    new HttpsListener(
      {
        host: config.httpHost,
        port: config.httpsPort!,
        certFile: config.httpsCert!,
        keyFile: config.httpsKey!,
        handler: (req, res) => http.routing(req, res),
        logger: logger.child({ component: 'https' }),
      },
      httpsPair,
    );

  const expiry = new Expiry(store, messaging, { RCS: (ids, now) => rcs.expire(ids, now) });
  const dispatch = new Dispatch(store, messaging, router, logger.child({ component: 'dispatcher' }), {
    nodeId: config.nodeId,
    leaseMs: config.dispatchLeaseMs,
    onTakenOver: (n) => services.metrics.dispatchTakenOver.inc(n),
    onFenced: (when, n) => services.metrics.fenced.inc({ queue: 'dispatch', when: `${when}_send` }, n),
    onExpired: (rows, now) => expiry.handleByType(rows, now),
    onPlaced: (placements) => {
      // Each expires at the end of its validity, unless a receipt comes first.
      for (const p of placements) if (p.validityUntil !== null) sweeper.at(p.validityUntil);
      // Receipts wait for their placement only where they are matched on the operator's id.
      return carrierEvents.placed(placements.filter((p) => router.connector(p.connector)?.receiptsNameMessage !== true));
    },
  });
  const dispatcher = dispatcherLoop(dispatch, config.nodeId, config.dispatchLeaseMs, logger.child({ component: 'dispatcher' }));
  messaging.handOffTo(dispatcher);
  const sweeper = expiryLoop(expiry, logger.child({ component: 'expiry' }), config.safetyPollMs);
  const retention = retentionLoop(
    [
      { name: 'idempotency keys', prune: (now) => idempotency.prune(now) },
      { name: 'rate limit windows', prune: (now) => rateLimiter.prune(now) },
      { name: 'settled connector records', prune: (now) => connectors.pruneRecords(now) },
      { name: 'forgotten lockouts', prune: (now) => access.prune(now) },
      ...new Retention(store, config.retention).tasks(),
      { name: 'settled one-time passwords', prune: (now) => otp.prune(now, config.retention.messageDays * 86_400_000) },
    ],
    logger.child({ component: 'retention' }),
    PRUNE_EVERY_MS,
  );
  const timers = new ConnectorTimers(connectors, router, logger.child({ component: 'connectors' }), config.dispatchLeaseMs);
  const receiptMatcher = new Loop((): Promise<number | null> => carrierEvents.retryUnmatched(Date.now()), null, (err) =>
    logger.error({ err }, 'matching kept receipts failed; retrying'),
  );
  const webhookClient = new WebhookHttpClient({ allowPrivate: config.webhookAllowPrivate, maxConcurrentPerHost: config.webhookConnections });
  const webhookSender = new WebhookSender(webhooks, webhookClient, messaging, logger.child({ component: 'webhooks' }), {
    leaseMs: config.dispatchLeaseMs,
    onFenced: (when, n) => services.metrics.fenced.inc({ queue: 'webhooks', when: `${when}_send` }, n),
  });
  const smppServer = createSmppServer({
    host: config.smppHost,
    port: config.smppPort,
    window: config.smppWindow,
    ...(config.smppTlsPort !== null &&
      config.smppTlsCert !== null &&
      config.smppTlsKey !== null && {
        tls: { port: config.smppTlsPort, cert: readFileSync(config.smppTlsCert), key: readFileSync(config.smppTlsKey) },
      }),
    handler: smpp,
    logger: logger.child({ component: 'smpp' }),
    onMetric: smppMetricHook(services.metrics),
    maxConcurrentRequests: 100,
    safetyPollMs: config.safetyPollMs,
  });
  webhooks.handTo(webhookSender);
  const smppSender = new SmppOutboxWorker(smppOutbox, smppServer, logger.child({ component: 'smpp-outbox' }));
  smppOutbox.handTo(smppSender);
  services.metrics.watchSmppOutbox(() => smppOutbox.pending());
  smpp.onReceiverBound((credentialId) => smppSender.bound(credentialId));

  // Which worker wakes for which queue (written here or, on PostgreSQL, by another node).
  store.signals.on('dispatch', () => dispatcher.wake());
  store.signals.on('connector-records', () => timers.wake());
  connectors.onRecordsDue((lanes) => timers.wake(lanes));
  connectors.handRecordsTo(timers);
  store.signals.on('receipts', () => receiptMatcher.wake());
  store.signals.on('webhooks', () => webhookSender.wake());
  store.signals.on('smpp-outbox', () => smppSender.wake());
  const otpTimers = new Loop(() => otp.pass(Date.now()), null, (err) => logger.error({ err }, 'one-time password timers failed; retrying'));
  store.signals.on('otp', () => otpTimers.wake());

  // Behind the wake-ups: a slow look at every queue for work due that no wake-up announced.
  const workQueues = new WorkQueues(store);
  const safetyPoll = new SafetyPoll(workQueues, config.safetyPollMs, logger.child({ component: 'safety-poll' }));
  // A node that stops beating (it died, or stalled) leaves work behind: what it held is taken over as its leases run
  // out (all of them by TERN_DISPATCH_LEASE_SECONDS after it is noticed), what it had scheduled is looked at again.
  // The dispatcher takes over what they claimed; the other queues do not record who claimed a row: their workers look
  // at them, as the sweeps look at what the stopped nodes had received.
  const lookAtWorkLeft = () => {
    workQueues.wakeAll(['dispatch']);
    sweeper.wake();
    smppServer.sweepConcat();
  };
  const heartbeat = new Heartbeat(
    cluster,
    (nodes) => {
      logger.warn({ nodes }, 'nodes stopped beating: their work is taken over as their leases run out');
      dispatcher.takeOver(nodes);
      lookAtWorkLeft();
      setTimeout(lookAtWorkLeft, config.dispatchLeaseMs + fenceMargin(config.dispatchLeaseMs)).unref();
    },
    logger.child({ component: 'cluster' }),
  );

  let stopped = false;
  return {
    services,
    http,
    logger,
    adminKey,
    demo,
    store,
    async start() {
      // In the background (the first voice send waits for it, nothing else does), or left to that send.
      voice.checkAtStart();
      // What this node held before a restart under the same id is free once those leases ran out: looked at by then.
      safetyPoll.start(Date.now() + Math.min(config.safetyPollMs, config.dispatchLeaseMs + fenceMargin(config.dispatchLeaseMs)));
      await heartbeat.start();
      await registry.start();
      receiptMatcher.start();
      otpTimers.start();
      dispatcher.start();
      timers.start();
      sweeper.start();
      retention.start(Date.now() + PRUNE_EVERY_MS);
      await http.listen({ host: config.httpHost, port: config.httpPort });
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address ? address.port : config.httpPort;
      boundHttpPort = httpPort;
      const httpsPort = https ? await https.listen() : undefined;
      if (https) logger.info({ httpsPort, subject: https.certificate.subject, validTo: https.certificate.validTo }, 'HTTPS listening');
      webhookSender.start();
      // Binds this node id held before a restart belong to sessions that are gone.
      await smppBinds.forget();
      const smppPorts = await smppServer.listen();
      smppSender.start();
      logger.info(smppPorts, 'SMPP listening');
      return {
        httpPort,
        smppPort: smppPorts.port,
        ...(smppPorts.tlsPort !== undefined && { smppTlsPort: smppPorts.tlsPort }),
        ...(httpsPort !== undefined && { httpsPort }),
      };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // SMPP first: its clients are unbound while the pipeline behind them still runs.
      await smppServer.close();
      await smppBinds.forget().catch((err: unknown) => logger.warn({ err }, 'could not give back the SMPP binds of this node'));
      await Promise.all([https?.close(), http.close()]);
      await otpTimers.stop();
      await services.feed.stop();
      await messaging.drain();
      await dispatcher.stop();
      await sweeper.stop();
      await retention.stop();
      await timers.stop();
      await registry.stop();
      await receiptMatcher.stop();
      await heartbeat.stop();
      await safetyPoll.stop();
      await cluster.leave().catch((err: unknown) => logger.warn({ err }, 'leaving the cluster failed'));
      await messaging.drain();
      await webhookSender.stop();
      await smppSender.stop();
      await workQueues.handOver().catch((err: unknown) => logger.warn({ err }, 'could not hand the work this node had scheduled over to the other nodes'));
      await webhookClient.close();
      await voice.close();
      await store.close();
    },
  };
}
