import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildHttpServer } from './api/server.ts';
import { Router } from './carriers/router.ts';
import { SimulatorCarrier } from './carriers/simulator.ts';
import type { TernConfig } from './config.ts';
import { Metrics } from './metrics.ts';
import { SimulatorHlr } from './carriers/simulator-hlr.ts';
import { AuthService } from './services/auth.ts';
import { type AdminKeyResult, type DemoResult, ensureAdminKey, ensureDemo } from './services/bootstrap.ts';
import type { Services } from './services/container.ts';
import { LookupService } from './services/lookup.ts';
import { carrierEventSink, type InboundHandler } from './services/messaging/receipts.ts';
import { MessagingService } from './services/messaging/service.ts';
import { TenancyService } from './services/tenancy.ts';
import { openStore } from './store/db.ts';
import { Dispatcher } from './workers/dispatcher.ts';
import { ExpirySweeper } from './workers/expiry.ts';

export interface TernApp {
  readonly services: Services;
  readonly http: FastifyInstance;
  readonly logger: Logger;
  readonly adminKey: AdminKeyResult;
  readonly demo: DemoResult | null;
  /** Starts listening; resolves with the bound ports (useful with port 0). */
  start(): Promise<{ httpPort: number }>;
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
  const router = new Router();
  const simulator = new SimulatorCarrier(store, config.simulator, logger.child({ component: 'simulator' }));
  router.register(simulator);
  router.setRoutes([{ prefix: '', type: '*', flow: '*', connectors: [simulator.name] }]);
  const services: Services = {
    config,
    store,
    metrics: new Metrics(),
    tenancy,
    auth,
    lookup,
    messaging,
    router,
    simulator,
  };
  const demo = opts.demo ? await ensureDemo(store, tenancy) : null;
  const http = await buildHttpServer(services, logger);

  let inbound: InboundHandler | null = null;
  const sink = carrierEventSink(store, messaging, () => inbound);
  const dispatcher = new Dispatcher(store, messaging, router, logger.child({ component: 'dispatcher' }), {
    nodeId: config.nodeId,
  });
  messaging.onAccepted((rows) => {
    if (rows.some((r) => r.status === 'ENROUTE')) dispatcher.wake();
  });
  const expiry = new ExpirySweeper(store, messaging, logger.child({ component: 'expiry' }));

  let stopped = false;
  return {
    services,
    http,
    logger,
    adminKey,
    demo,
    async start() {
      for (const c of router.all()) await c.start(sink);
      dispatcher.start();
      expiry.start();
      await http.listen({ host: config.httpHost, port: config.httpPort });
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address ? address.port : config.httpPort;
      return { httpPort };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await http.close();
      await messaging.drain();
      await dispatcher.stop();
      await expiry.stop();
      for (const c of router.all()) await c.stop();
      await messaging.drain();
      await store.close();
    },
  };
}
