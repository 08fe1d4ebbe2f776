import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { VERSION } from '../../../version.ts';
import { errorPayload } from '../errors.ts';

export function opsRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Operations'];

  // Polled: the answer is made once (the schema's level is the one this node found and left at start).
  const { applied, latest, pending } = services.database.schema;
  const health = { status: 'ok', version: VERSION, schema: { applied, ...(latest !== null && { latest }), pending } };
  app.get(
    '/healthz',
    {
      schema: {
        tags,
        summary: "Liveness: the process answers, with Tern's version and its database schema's migrations",
        response: {
          200: Type.Object({
            status: Type.String(),
            version: Type.String({ description: "Tern's version (semver)" }),
            schema: Type.Object(
              {
                applied: Type.Integer({ description: 'migrations applied to the database' }),
                latest: Type.Optional(Type.String({ description: 'the newest applied migration (absent when none is)' })),
                pending: Type.Integer({ description: 'migrations of this version not applied (0 once a node has started)' }),
              },
              { description: 'the database schema as this node found and left it at start' },
            ),
          }),
        },
      },
    },
    async () => health,
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags,
        summary: 'Readiness: the database answers (and, SQLite, can be written)',
        response: { 200: Type.Object({ status: Type.String(), database: Type.String() }), 503: Type.Ref('Error') },
      },
    },
    async (_req, reply) => {
      // Bounded by a short timeout whatever the database does: a frozen database makes it answer 503, not hang.
      const r = await services.database.ready();
      if (r.ready) return { status: 'ready', database: services.database.dialect };
      return reply.code(503).header('retry-after', 5).send(errorPayload('STORAGE_UNAVAILABLE', r.reason));
    },
  );

  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics' } }, async (_req, reply) => {
    const body = await services.metrics.registry.metrics();
    return reply.type(services.metrics.registry.contentType).send(body);
  });
}
