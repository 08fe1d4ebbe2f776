import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Services } from '../../core/services.ts';
import { RateLimitedError, type Quota } from '../../core/errors.ts';
import { quotaOf } from './access.ts';
import { watchTurn } from '../http-turns.ts';
import { errorPayload, toErrorReply } from './errors.ts';
import { adminRoutes } from './routes/admin.ts';
import { adminConnectorRoutes } from './routes/admin-connectors.ts';
import { blacklistRoutes } from './routes/blacklist.ts';
import { commonsRoutes } from './routes/commons.ts';
import { connectorRoutes } from './routes/connectors.ts';
import { consumptionRoutes } from './routes/consumptions.ts';
import { lookupRoutes } from './routes/lookup.ts';
import { opsRoutes } from './routes/ops.ts';
import { organisationRoutes } from './routes/organisations.ts';
import { rcsRoutes } from './routes/rcs.ts';
import { simulatorRoutes } from './routes/simulator.ts';
import { smppAdminRoutes } from './routes/smpp-credentials.ts';
import { smsRoutes } from './routes/sms.ts';
import { trafficLimitRoutes } from './routes/traffic-limits.ts';
import { voiceRoutes } from './routes/voice.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { fraudGuardRoutes } from './routes/fraud-guards.ts';
import { otpRoutes } from './routes/otp.ts';
import { keyRoutes } from './routes/keys.ts';
import { liveRoutes } from './routes/live.ts';
import { quoteRoutes } from './routes/quotes.ts';
import { ErrorBody } from './schemas.ts';
import { sharedSchemaCompilers } from './schema-compilers.ts';
import { registerTextGuard } from './text-guard.ts';
import { unansweredConnectionReaper } from './unanswered-connections.ts';

const BODY_LIMIT = 1024 * 1024;

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
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request log lines cost about 40 % of throughput on this class of machine; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    trustProxy: services.config.trustProxy,
    return503OnClosing: true,
    ajv: { customOptions: { allErrors: false, coerceTypes: 'array', removeAdditional: false } },
    schemaController: { compilersFactory: sharedSchemaCompilers },
  });

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
        description:
          'Self-hostable messaging service with an smsmode-compatible REST API. Authenticate with the X-Api-Key header.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof RateLimitedError) rateLimitHeaders(reply, err.quota, err.retryAt);
    const { status, body } = toErrorReply(err as FastifyError, req);
    if (status >= 500) req.log.error({ err, url: req.url, method: req.method }, 'request failed');
    return reply.code(status).send(body);
  });

  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send(errorPayload('ROUTE_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`)),
  );

  // The server's own hooks wait for nothing: written with `done` rather than as async functions, which cost every
  // request a promise and a turn of the microtask queue each.
  app.addHook('onRequest', (req, reply, done) => {
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

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  opsRoutes(app, services);
  adminRoutes(app, services);
  adminConnectorRoutes(app, services);
  commonsRoutes(app, services);
  organisationRoutes(app, services);
  consumptionRoutes(app, services);
  lookupRoutes(app, services);
  smsRoutes(app, services);
  rcsRoutes(app, services);
  voiceRoutes(app, services);
  webhookRoutes(app, services);
  blacklistRoutes(app, services);
  simulatorRoutes(app, services);
  smppAdminRoutes(app, services);
  trafficLimitRoutes(app, services);
  fraudGuardRoutes(app, services);
  otpRoutes(app, services);
  connectorRoutes(app, services);
  keyRoutes(app, services);
  liveRoutes(app, services);
  quoteRoutes(app, services);

  return app;
}

