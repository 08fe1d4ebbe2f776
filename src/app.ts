import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildHttpServer } from './doors/rest/server.ts';
import { Router } from './connectors/router.ts';
import { SimulatorCarrier } from './connectors/simulator/sms.ts';
import { SimulatorRcs } from './connectors/simulator/rcs.ts';
import type { TernConfig } from './config.ts';
import { Metrics } from './metrics.ts';
import { SimulatorHlr } from './connectors/simulator/hlr.ts';
import { AuthService } from './core/tenancy/auth.ts';
import { BlacklistService } from './core/tenancy/blacklist.ts';
import { type AdminKeyResult, type DemoResult, ensureAdminKey, ensureDemo } from './core/tenancy/bootstrap.ts';
import { ConsumptionService } from './core/billing/consumption.ts';
import type { Services } from './core/services.ts';
import { FundsService } from './core/billing/funds.ts';
import { IdempotencyService } from './core/idempotency.ts';
import { LookupService } from './core/lookup/service.ts';
import { parseSchedule } from './core/domain/retry.ts';
import { InboundService } from './core/messaging/inbound.ts';
import { carrierEventSink } from './core/messaging/carrier-events.ts';
import { RcsService } from './core/rcs/service.ts';
import { MessagingService } from './core/messaging/service.ts';
import { TenancyService } from './core/tenancy/service.ts';
import { openStore } from './store/db.ts';
import { Dispatcher } from './workers/dispatcher.ts';
import { ExpirySweeper } from './workers/expiry.ts';
import { WebhookSender } from './doors/webhooks/sender.ts';
import { WebhookHttpClient } from './doors/webhooks/http-client.ts';
import { WebhookOutbox } from './core/webhooks/outbox.ts';
import { WebhookDeliveries } from './core/webhooks/deliveries.ts';
import { VoiceSimulatorCarrier } from './connectors/simulator/voice.ts';
import { LegacyService } from './doors/legacy/service.ts';
import { legacyReplyLinkHook, legacyWebhookFormatter } from './doors/legacy/callbacks.ts';
import { VoiceService } from './core/voice/service.ts';
import { EspeakTts } from './core/voice/tts.ts';
import { SmppGateway, smppMetricHook } from './doors/smpp/gateway.ts';
import { createSmppServer } from './doors/smpp/server.ts';
import { SmppOutboxWorker } from './doors/smpp/outbox-worker.ts';

export interface TernApp {
  readonly services: Services;
  readonly http: FastifyInstance;
  readonly logger: Logger;
  readonly adminKey: AdminKeyResult;
  readonly demo: DemoResult | null;
  /** Starts listening; resolves with the bound ports (useful with port 0). */
  start(): Promise<{ httpPort: number; smppPort: number; smppTlsPort?: number }>;
  /** Stops accepting, drains work in flight and closes the database. */
  stop(): Promise<void>;
}

export interface AppOptions {
  logger?: Logger;
  demo?: boolean;
}

/** The composition root: builds the store, the services and the doors, in dependency order. */
export async function createApp(config: TernConfig, opts: AppOptions = {}): Promise<TernApp> {
  const logger = opts.logger ?? pino({ level: config.logLevel });
  const store = await openStore(config.databaseUrl);
  const adminKey = await ensureAdminKey(store, config.adminKey);
  const tenancy = new TenancyService(store);
  const auth = new AuthService(store, tenancy, adminKey.hash);
  const lookup = new LookupService(store, new SimulatorHlr());
  const messaging = new MessagingService(store, tenancy, config, logger);
  await messaging.init();
  const voice = new VoiceService(store, messaging, new EspeakTts(), logger.child({ component: 'voice' }));
  // Before the webhook outbox's hook: reply links must be in the message when its webhook is written.
  messaging.addEventHook(legacyReplyLinkHook);
  const webhookClient = new WebhookHttpClient({ allowPrivate: config.webhookAllowPrivate });
  let boundHttpPort = config.httpPort;
  const publicBase = () =>
    config.publicUrl ?? `http://${config.httpHost === '0.0.0.0' || config.httpHost === '::' ? 'localhost' : config.httpHost}:${boundHttpPort}`;
  const webhooks = new WebhookOutbox(messaging, publicBase);
  messaging.addEventHook(webhooks.hook);
  webhooks.registerFormatter(legacyWebhookFormatter);
  const inboundService = new InboundService(store, tenancy, messaging);
  const router = new Router();
  const simulator = new SimulatorCarrier(store, config.simulator, logger.child({ component: 'simulator' }));
  router.register(simulator);
  const voiceSimulator = new VoiceSimulatorCarrier(
    store,
    { ...config.simulator, retryMs: config.simulator.voiceRetryMs },
    logger.child({ component: 'simulator-voice' }),
  );
  router.register(voiceSimulator);
  router.setRoutes([
    { prefix: '', type: 'VOICE', flow: '*', connectors: [voiceSimulator.name] },
    { prefix: '', type: '*', flow: '*', connectors: [simulator.name] },
  ]);
  const simulatorRcs = new SimulatorRcs(store, simulator, logger.child({ component: 'simulator-rcs' }));
  messaging.addEventHook(simulatorRcs.hook);
  const rcs = new RcsService(store, messaging, simulatorRcs, config, logger.child({ component: 'rcs' }));
  messaging.addEventHook(rcs.conversationHook);
  const idempotency = new IdempotencyService(store);
  const funds = new FundsService(store, idempotency);
  const smpp = new SmppGateway(store, tenancy, messaging, logger.child({ component: 'smpp' }));
  messaging.addEventHook(smpp.hook);
  const services: Services = {
    config,
    store,
    metrics: new Metrics(),
    tenancy,
    auth,
    blacklist: new BlacklistService(store),
    lookup,
    messaging,
    rcs,
    router,
    simulator,
    webhooks,
    webhookDeliveries: new WebhookDeliveries(store),
    inbound: inboundService,
    publicBase,
    funds,
    idempotency,
    consumption: new ConsumptionService(store),
    voice,
    legacy: new LegacyService(auth, tenancy, messaging, voice, funds),
    smpp,
  };
  const demo = opts.demo ? await ensureDemo(store, tenancy) : null;
  const http = await buildHttpServer(services, logger);

  const sink = carrierEventSink(store, messaging, async (events) => {
    await inboundService.receive(events);
  });
  const dispatcher = new Dispatcher(store, messaging, router, logger.child({ component: 'dispatcher' }), {
    nodeId: config.nodeId,
    leaseMs: config.dispatchLeaseMs,
    onExpired: (rows, now) => expiry.handleByType(rows, now),
  });
  messaging.onAccepted((rows) => {
    if (rows.some((r) => r.status === 'ENROUTE')) dispatcher.wake();
  });
  const expiry = new ExpirySweeper(store, messaging, logger.child({ component: 'expiry' }));
  expiry.setHandler('RCS', (ids, now) => rcs.expire(ids, now));
  const webhookSender = new WebhookSender(store, webhookClient, messaging, logger.child({ component: 'webhooks' }), {
    schedule: parseSchedule(config.webhookRetrySchedule),
  });
  messaging.onCommitted(() => {
    if (webhooks.takeWritten()) webhookSender.wake();
  });
  const smppServer = createSmppServer({
    host: config.smppHost,
    port: config.smppPort,
    ...(config.smppTlsPort !== null &&
      config.smppTlsCert !== null &&
      config.smppTlsKey !== null && {
        tls: { port: config.smppTlsPort, cert: readFileSync(config.smppTlsCert), key: readFileSync(config.smppTlsKey) },
      }),
    handler: smpp,
    logger: logger.child({ component: 'smpp' }),
    onMetric: smppMetricHook(services.metrics),
    maxConcurrentRequests: 100,
  });
  const smppOutbox = new SmppOutboxWorker(store, smppServer, logger.child({ component: 'smpp-outbox' }), {
    metrics: services.metrics,
  });
  smpp.onReceiverBound((credentialId) => smppOutbox.bound(credentialId));
  messaging.onCommitted(() => {
    if (smpp.takeWritten()) smppOutbox.wake();
  });

  let stopped = false;
  return {
    services,
    http,
    logger,
    adminKey,
    demo,
    async start() {
      await voice.checkAvailability();
      for (const c of router.all()) await c.start(sink);
      simulatorRcs.start();
      dispatcher.start();
      expiry.start();
      await http.listen({ host: config.httpHost, port: config.httpPort });
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address ? address.port : config.httpPort;
      boundHttpPort = httpPort;
      webhookSender.start();
      const smppPorts = await smppServer.listen();
      smppOutbox.start();
      logger.info(smppPorts, 'SMPP listening');
      return { httpPort, smppPort: smppPorts.port, ...(smppPorts.tlsPort !== undefined && { smppTlsPort: smppPorts.tlsPort }) };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // SMPP first: its clients are unbound while the pipeline behind them still runs.
      await smppServer.close();
      await http.close();
      await messaging.drain();
      await dispatcher.stop();
      await expiry.stop();
      await simulatorRcs.stop();
      for (const c of router.all()) await c.stop();
      await messaging.drain();
      await webhookSender.stop();
      await smppOutbox.stop();
      await webhookClient.close();
      await store.close();
    },
  };
}
