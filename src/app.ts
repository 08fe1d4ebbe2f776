import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildHttpServer } from './api/server.ts';
import type { TernConfig } from './config.ts';
import { Metrics } from './metrics.ts';
import { AuthService } from './services/auth.ts';
import { type AdminKeyResult, type DemoResult, ensureAdminKey, ensureDemo } from './services/bootstrap.ts';
import type { Services } from './services/container.ts';
import { TenancyService } from './services/tenancy.ts';
import { openStore } from './store/db.ts';

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
  const services: Services = { config, store, metrics: new Metrics(), tenancy, auth };
  const demo = opts.demo ? await ensureDemo(store, tenancy) : null;
  const http = await buildHttpServer(services, logger);

  let stopped = false;
  return {
    services,
    http,
    logger,
    adminKey,
    demo,
    async start() {
      await http.listen({ host: config.httpHost, port: config.httpPort });
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address ? address.port : config.httpPort;
      return { httpPort };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await http.close();
      await store.close();
    },
  };
}
