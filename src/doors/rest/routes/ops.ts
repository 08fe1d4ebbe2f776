import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { errorPayload } from '../errors.ts';

export function opsRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Operations'];

  app.get(
    '/healthz',
    {
      schema: {
        tags,
        summary: 'Liveness: the process answers',
        response: { 200: Type.Object({ status: Type.String() }) },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags,
        summary: 'Readiness: the database answers',
        response: { 200: Type.Object({ status: Type.String(), database: Type.String() }), 503: Type.Ref('Error') },
      },
    },
    async (_req, reply) => {
      try {
        await services.database.ping();
        return { status: 'ready', database: services.database.dialect };
      } catch (err) {
        return reply.code(503).send(errorPayload('UNAVAILABLE', `database unreachable: ${(err as Error).message}`));
      }
    },
  );

  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics' } }, async (_req, reply) => {
    const body = await services.metrics.registry.metrics();
    return reply.type(services.metrics.registry.contentType).send(body);
  });
}
