import { batchOutcomeView } from '../doors/rest/routes/lookup.ts';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError, type TernConfig } from '../config/index.ts';
import type { Services } from '../core/services.ts';
import { consoleRoutes } from '../doors/console/routes.ts';
import { legacyWebhookFormatter } from '../doors/legacy/callbacks.ts';
import { legacyRoutes } from '../doors/legacy/routes.ts';
import { CertificateError, type CertificatePair, HttpsListener, loadCertificatePair } from '../doors/rest/https.ts';
import { buildHttpServer } from '../doors/rest/server.ts';
import { SmppGateway, smppMetricHook } from '../doors/smpp/gateway.ts';
import { createSmppServer } from '../doors/smpp/server/index.ts';
import { WebhookHttpClient } from '../doors/webhooks/http-client.ts';
import type { Connectors } from './connectors.ts';
import type { Core, NetworkUseCases } from './core.ts';

export type Doors = Awaited<ReturnType<typeof buildDoors>>;

/** The HTTPS certificate and key, checked before anything starts; a bad file stops the start naming its setting. */
export function loadHttpsPair(config: TernConfig): CertificatePair | null {
  if (config.httpsPort === null || config.httpsCert === null || config.httpsKey === null) return null;
  try {
    return loadCertificatePair(config.httpsCert, config.httpsKey);
  } catch (err) {
    if (err instanceof CertificateError) throw new ConfigError(err.file === 'cert' ? 'TERN_HTTPS_CERT' : 'TERN_HTTPS_KEY', err.message);
    throw err;
  }
}

/**
 * The doors onto the core: the SMPP server (and its gateway into the core), the use cases every door shares
 * (`Services`), the HTTP server with the REST, legacy and console routes, the HTTPS listener beside it, and the
 * client that posts webhooks.
 */
export async function buildDoors(
  config: TernConfig,
  core: Core,
  connectors: Connectors,
  network: NetworkUseCases,
  logger: Logger,
  publicBase: () => string,
  httpsPair: CertificatePair | null,
) {
  const { store, metrics } = core;
  core.webhooks.registerFormatter(legacyWebhookFormatter);
  network.lookupBatches.formatWith(batchOutcomeView);

  const smpp = new SmppGateway(
    core.tenancy,
    core.messaging,
    core.sms,
    core.smppCredentials,
    core.smppOutbox,
    core.access,
    core.smppBinds,
    core.smppConcatParts,
    logger.child({ component: 'smpp' }),
  );
  const smppServer = createSmppServer({
    host: config.smppHost,
    port: config.smppPort,
    window: config.smppWindow,
    concatTimeoutMs: config.smppConcatTimeoutMs,
    ...(config.smppTlsPort !== null &&
      config.smppTlsCert !== null &&
      config.smppTlsKey !== null && {
        tls: { port: config.smppTlsPort, cert: readFileSync(config.smppTlsCert), key: readFileSync(config.smppTlsKey) },
      }),
    handler: smpp,
    logger: logger.child({ component: 'smpp' }),
    onMetric: smppMetricHook(metrics),
    maxConcurrentRequests: 100,
    safetyPollMs: config.safetyPollMs,
  });

  const services: Services = {
    http: { publicUrl: config.publicUrl, port: config.httpPort, trustProxy: config.trustProxy, limits: config.httpLimits },
    metrics,
    publicBase,
    database: { dialect: store.dialect, schema: store.schemaLevel, ping: () => store.ping(), ready: () => store.ready() },
    tenancy: core.tenancy,
    auth: core.auth,
    access: core.access,
    users: core.users,
    sso: core.sso,
    admission: core.admission,
    smppCredentials: core.smppCredentials,
    subAccounts: core.subAccounts,
    contacts: core.contacts,
    sends: core.sends,
    blacklist: core.blacklist,
    privacy: core.privacy,
    audit: core.audit,
    lookup: network.lookup,
    lookupBatches: network.lookupBatches,
    messaging: core.messaging,
    sms: core.sms,
    templates: core.templates,
    shortLinks: core.shortLinks,
    rcs: network.rcs,
    voice: core.voice,
    inbound: core.inbound,
    campaigns: network.campaigns,
    webhooks: core.webhooks,
    webhookDeliveries: core.webhookDeliveries,
    funds: core.funds,
    idempotency: core.idempotency,
    consumption: core.consumption,
    connectors: core.connectors,
    connectorAdmin: core.connectorAdmin,
    deliveryQuality: core.deliveryQuality,
    router: connectors.router,
    rateLimiter: core.rateLimiter,
    otp: core.otp,
    fraudGuards: core.fraudGuards,
    feed: core.feed,
    quotes: core.quotes,
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
        limits: config.httpLimits,
        handler: (req, res) => http.routing(req, res),
        logger: logger.child({ component: 'https' }),
      },
      httpsPair,
    );
  const webhookClient = new WebhookHttpClient({
    allowPrivate: config.webhookAllowPrivate,
    maxConcurrentPerHost: config.webhookConnections,
    maxSockets: config.webhookSockets.total,
    maxSocketsPerTenant: config.webhookSockets.perOrganisation,
  });
  services.metrics.watchWebhookSockets(() => webhookClient.usage());
  return { services, smpp, smppServer, http, https, webhookClient };
}
