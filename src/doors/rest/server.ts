import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { redactUrl } from '../../log-redaction.ts';
import type { Services } from '../../core/services.ts';
import { asCoreError, RateLimitedError, StorageError, type Quota } from '../../core/errors.ts';
import { quotaOf } from './access.ts';
import { watchTurn } from '../http-turns.ts';
import { REQUEST_ID_HEADER, requestIdOf } from '../request-id.ts';
import { errorPayload, toErrorReply } from './errors.ts';
import { adminRoutes } from './routes/admin.ts';
import { auditHooks } from './audit.ts';
import { auditRoutes } from './routes/audit.ts';
import { privacyRoutes } from './routes/privacy.ts';
import { adminConnectorRoutes } from './routes/admin-connectors.ts';
import { blacklistRoutes } from './routes/blacklist.ts';
import { senderRoutes } from './routes/senders.ts';
import { commonsRoutes } from './routes/commons.ts';
import { connectorRoutes } from './routes/connectors.ts';
import { consumptionRoutes } from './routes/consumptions.ts';
import { lookupRoutes } from './routes/lookup.ts';
import { shortLinkRoutes } from './routes/short-links.ts';
import { opsRoutes } from './routes/ops.ts';
import { organisationRoutes } from './routes/organisations.ts';
import { rcsRoutes } from './routes/rcs.ts';
import { simulatorRoutes } from './routes/simulator.ts';
import { smppAdminRoutes } from './routes/smpp-credentials.ts';
import { smsRoutes } from './routes/sms.ts';
import { templateRoutes } from './routes/templates.ts';
import { trafficLimitRoutes } from './routes/traffic-limits.ts';
import { sendingWindowRoutes } from './routes/sending-windows.ts';
import { voiceRoutes } from './routes/voice.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { fraudGuardRoutes } from './routes/fraud-guards.ts';
import { otpRoutes } from './routes/otp.ts';
import { keyRoutes } from './routes/keys.ts';
import { liveRoutes } from './routes/live.ts';
import { quoteRoutes } from './routes/quotes.ts';
import { ErrorBody } from './schemas.ts';
import { sharedSchemaCompilers } from './schema-compilers.ts';
import { userRoutes } from './routes/users.ts';
import { registerTextGuard } from './text-guard.ts';
import { openApiDocumentHandler } from './openapi-document.ts';
import { enrichOpenApi } from './openapi-enrich.ts';
import { capConnections, connectionTimeouts } from './connection-limits.ts';
import { unansweredConnectionReaper } from './unanswered-connections.ts';

const BODY_LIMIT = 1024 * 1024;

/**
 * Per-request log lines, when the log level is `debug` or finer: one line a request as it ends (method, URL with its
 * secret parameters censored, headers with the credential ones censored, status, time), none as it comes in.
 */
class RequestLogs extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** RateLimit-Limit/-Remaining/-Reset (seconds to the window's end), and Retry-After when the request was refused. */
function rateLimitHeaders(reply: FastifyReply, quota: Quota | undefined, retryAt?: number): void {
  const now = Date.now();
  if (quota) {
    reply.header('ratelimit-limit', quota.limit);
    reply.header('ratelimit-remaining', quota.remaining);
    reply.header('ratelimit-reset', Math.max(0, Math.ceil((quota.resetAt - now) / 1000)));
  }
  if (retryAt !== undefined) reply.header('retry-after', Math.max(1, Math.ceil((retryAt - now) / 1000)));
}

export async function buildHttpServer(services: Services, logger: Logger): Promise<FastifyInstance> {
  const limits = services.http.limits;
  const { keepAliveTimeout, requestTimeout, ...serverOptions } = connectionTimeouts(limits);
  const app: FastifyInstance = Fastify({
    // Fastify sets these two on the server it makes (its defaults: 72 s, and no limit on a request), the rest it hands over.
    keepAliveTimeout: keepAliveTimeout!,
    requestTimeout: requestTimeout!,
    http: serverOptions,
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request log lines cost about 40 % of throughput on this class of machine: written at `debug` only. Errors
    // are logged at every level; every line of a request carries its id.
    logController: new RequestLogs({ disableRequestLogging: !logger.isLevelEnabled('debug'), requestIdLogLabel: 'requestId' }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: services.http.trustProxy,
    return503OnClosing: true,
    ajv: { customOptions: { allErrors: false, coerceTypes: 'array', removeAdditional: false } },
    schemaController: { compilersFactory: sharedSchemaCompilers },
  });

  capConnections(app.server, limits);

  app.addSchema(ErrorBody);
  const unanswered = unansweredConnectionReaper(app.server);
  app.addHook('preClose', (done) => {
    unanswered.closing();
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tern',
        version: '0.1.0',
        description: 'Self-hostable messaging service with an smsmode-compatible REST API. Authenticate with the X-Api-Key header.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) => enrichOpenApi((documentObject as { openapiObject: Record<string, unknown> }).openapiObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof RateLimitedError) rateLimitHeaders(reply, err.quota, err.retryAt);
    const core = asCoreError(err);
    // The database's failures are logged where they happen, once for a flood of them (see store/health.ts).
    if (core instanceof StorageError) reply.header('retry-after', core.retryAfterSeconds);
    const { status, body } = toErrorReply(err as FastifyError, req);
    if (status >= 500 && !(core instanceof StorageError)) req.log.error({ err, url: redactUrl(req.url), method: req.method }, 'request failed');
    return reply.code(status).send(body);
  });

  app.setNotFoundHandler((req, reply) => reply.code(404).send(errorPayload('ROUTE_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`)));

  // The server's own hooks wait for nothing: written with `done` rather than as async functions, which cost every
  // request a promise and a turn of the microtask queue each.
  app.addHook('onRequest', (req, reply, done) => {
    // Every answer carries the request's id (errors and 404s included: headers set here stay on them).
    reply.header(REQUEST_ID_HEADER, req.id);
    watchTurn(req, reply.raw);
    done();
  });

  app.addHook('onSend', (req, reply, payload, done) => {
    const quota = quotaOf(req);
    if (quota && !reply.hasHeader('ratelimit-limit')) rateLimitHeaders(reply, quota);
    done(null, payload);
  });

  const { metrics } = services;
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: req.method, route, status: reply.statusCode });
    metrics.httpDuration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
    done();
  });

  registerTextGuard(app, (url) => url.startsWith('/http/'));
  // Before any route is added: it hooks the routes that change something.
  auditHooks(app, services);

  app.get(
    '/openapi.json',
    { schema: { hide: true } },
    openApiDocumentHandler(() => app.swagger()),
  );

  opsRoutes(app, services);
  adminRoutes(app, services);
  adminConnectorRoutes(app, services);
  privacyRoutes(app, services);
  auditRoutes(app, services);
  commonsRoutes(app, services);
  organisationRoutes(app, services);
  consumptionRoutes(app, services);
  lookupRoutes(app, services);
  smsRoutes(app, services);
  templateRoutes(app, services);
  rcsRoutes(app, services);
  voiceRoutes(app, services);
  webhookRoutes(app, services);
  blacklistRoutes(app, services);
  senderRoutes(app, services);
  simulatorRoutes(app, services);
  smppAdminRoutes(app, services);
  trafficLimitRoutes(app, services);
  sendingWindowRoutes(app, services);
  fraudGuardRoutes(app, services);
  otpRoutes(app, services);
  connectorRoutes(app, services);
  keyRoutes(app, services);
  userRoutes(app, services);
  liveRoutes(app, services);
  quoteRoutes(app, services);
  shortLinkRoutes(app, services);

  return app;
}
