import { maskMsisdn } from '../domain/privacy.ts';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { TernConfig } from '../config/index.ts';
import type { Services } from '../core/services.ts';
import { type AdminKeyResult, type DemoResult, ensureDemo } from '../core/tenancy/bootstrap.ts';
import { legacyReplyLinkHook } from '../doors/legacy/callbacks.ts';
import { createLogger } from '../log-redaction.ts';
import { openStore, type Store } from '../store/db.ts';
import { buildConnectors } from './connectors.ts';
import { buildCore, buildNetworkUseCases } from './core.ts';
import { buildDoors, loadHttpsPair } from './doors.ts';
import { type Part, startParts, stopParts, unlessDiskFull as startStepOf } from './lifecycle.ts';
import { buildWorkers } from './workers.ts';
import { whenDatabaseAnswers } from './database-at-start.ts';

export interface TernApp {
  /** The settings it was built with. */
  readonly config: TernConfig;
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

export interface AppOptions {
  logger?: Logger;
  demo?: boolean;
}

/**
 * The composition root: builds the store, the core's use cases, the connectors, the doors and the workers (each in
 * its own builder beside this file), declares what runs with every message event, and lists the parts of the node in
 * the order they start; they stop in the reverse order.
 */
export async function createApp(config: TernConfig, opts: AppOptions = {}): Promise<TernApp> {
  // JSON on standard output: phone numbers masked unless TERN_LOG_MASK_NUMBERS says otherwise.
  const logger = opts.logger ?? createLogger(config.logLevel, undefined, { maskNumber: (config.logMaskNumbers ?? true) ? maskMsisdn : null });
  const httpsPair = loadHttpsPair(config);
  const databaseLog = logger.child({ component: 'database' });
  const store = await whenDatabaseAnswers(
    () =>
      openStore(config.databaseUrl, config.nodeId, {
        sqliteSynchronous: config.sqliteSynchronous,
        sqliteCacheMb: config.sqliteCacheMb,
        statementTimeoutMs: config.dbStatementTimeoutMs,
        connectTimeoutMs: config.dbConnectTimeoutMs,
        log: databaseLog,
      }),
    config.databaseUrl.startsWith('sqlite:') ? 0 : config.dbStartWaitMs,
    databaseLog,
  );
  const unlessDiskFull = startStepOf(store, logger);
  // The HTTP port is known once the server listens (port 0 takes any free one).
  let boundHttpPort = config.httpPort;
  const publicBase = () =>
    config.publicUrl ?? `http://${config.httpHost === '0.0.0.0' || config.httpHost === '::' ? 'localhost' : config.httpHost}:${boundHttpPort}`;

  const core = await buildCore(config, store, logger, publicBase, unlessDiskFull);
  const connectors = await buildConnectors(config, core, logger);
  const network = buildNetworkUseCases(config, core, connectors.router, logger);
  // An RCS message the operator gave up on (its time to live ran out there) falls back to SMS as at its validity's end.
  core.carrierEvents.whenUndelivered('RCS', (ids, now) => network.rcs.expire(ids, now));
  const demo = opts.demo ? await unlessDiskFull('the demo organisation', () => ensureDemo(store, core.tenancy), null) : null;
  const doors = await buildDoors(config, core, connectors, network, logger, publicBase, httpsPair);
  // What runs in the transaction of every message event: the list and its order are the core's (core/events.ts).
  core.consumers.declare({
    legacyReplyLink: legacyReplyLinkHook,
    webhooks: core.webhooks.hook,
    rcsConversation: network.rcs.conversationHook,
    smppOutbox: doors.smpp.hook,
  });
  const workers = buildWorkers(config, core, connectors, network, doors, logger, unlessDiskFull);
  const { http, https, smppServer } = doors;

  const ports: { httpPort?: number; httpsPort?: number; smpp?: { port: number; tlsPort?: number } } = {};
  // Started in this order and stopped in the reverse one: what produces work stops before what carries it on (the
  // doors first, the senders of webhooks and SMPP receipts late), and the database closes last.
  const parts: Part[] = [
    { name: 'database', stop: () => store.close() },
    // Checked in the background (the first voice send waits for it, nothing else does), or left to that send.
    { name: 'text-to-speech', start: () => core.voice.checkAtStart(), stop: () => core.voice.close() },
    { name: 'webhook client', stop: () => doors.webhookClient.close() },
    {
      name: 'work left to the other nodes',
      stop: () =>
        workers.workQueues.handOver().catch((err: unknown) => logger.warn({ err }, 'could not hand the work this node had scheduled over to the other nodes')),
    },
    workers.smppSender,
    workers.webhookSender,
    { name: 'status changes written', stop: () => core.messaging.drain() },
    { name: 'cluster membership', stop: () => core.cluster.leave().catch((err: unknown) => logger.warn({ err }, 'leaving the cluster failed')) },
    workers.safetyPoll,
    workers.heartbeat,
    workers.receiptMatcher,
    { name: 'connectors', start: () => connectors.registry.start(), stop: () => connectors.registry.stop() },
    workers.connectorTimers,
    workers.lookupBatches,
    workers.retention,
    workers.expiry,
    workers.dispatcher,
    { name: 'accepts written', stop: () => core.messaging.drain() },
    { name: 'message feed', stop: () => core.feed.stop() },
    workers.otpTimers,
    {
      name: 'HTTP',
      async start() {
        await http.listen({ host: config.httpHost, port: config.httpPort });
        const address = http.server.address();
        boundHttpPort = typeof address === 'object' && address ? address.port : config.httpPort;
        ports.httpPort = boundHttpPort;
        if (!https) return;
        ports.httpsPort = await https.listen();
        logger.info({ httpsPort: ports.httpsPort, subject: https.certificate.subject, validTo: https.certificate.validTo }, 'HTTPS listening');
      },
      stop: async () => void (await Promise.all([https?.close(), http.close()])),
    },
    // Stopped first: its clients are unbound while the pipeline behind them still runs.
    {
      name: 'SMPP',
      async start() {
        // Binds this node id held before a restart belong to sessions that are gone.
        await unlessDiskFull('giving back the SMPP binds of an earlier run', () => core.smppBinds.forget(), undefined);
        ports.smpp = await smppServer.listen();
        logger.info(ports.smpp, 'SMPP listening');
      },
      async stop() {
        await smppServer.close();
        await core.smppBinds.forget().catch((err: unknown) => logger.warn({ err }, 'could not give back the SMPP binds of this node'));
      },
    },
  ];

  let stopped = false;
  return {
    config,
    services: doors.services,
    http,
    logger,
    adminKey: core.adminKey,
    demo,
    store,
    async start() {
      await startParts(parts);
      const smpp = ports.smpp!;
      return {
        httpPort: ports.httpPort!,
        smppPort: smpp.port,
        ...(smpp.tlsPort !== undefined && { smppTlsPort: smpp.tlsPort }),
        ...(ports.httpsPort !== undefined && { httpsPort: ports.httpsPort }),
      };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopParts(parts, logger);
    },
  };
}
