import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import { requireAdmin } from '../access.ts';

/** Parses a connector route's body as its content type says; the raw text is kept for signature checks. */
function parseBody(req: FastifyRequest, raw: string): unknown {
  if (raw === '') return undefined;
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      fail('INVALID_REQUEST', 'the body is not valid JSON', 'body');
    }
  }
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(raw));
  return raw;
}

/**
 * The HTTP routes connectors mount for themselves (an operator's delivery-report callback, a simulator's MO
 * injection), under `/connectors/{name}/…`. They are looked up at each request, so a connector added at run time
 * answers at once. Operator routes take the operator key; public ones are checked by the connector itself.
 */
export function connectorRoutes(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
      const { name } = req.params as { name: string; '*': string };
      const path = `/${(req.params as { '*': string })['*'] ?? ''}`;
      const connector = services.router.connector(name);
      // A callback that comes while its connector restarts is answered with a status its sender retries, not lost.
      if (!connector && services.router.isStarting(name)) fail('UNAVAILABLE', `connector ${name} is restarting; try again in a moment`);
      const route = connector?.routes?.().find((r) => r.method === req.method && r.path === path);
      if (!route) fail('NOT_FOUND', `connector ${name} has no route ${req.method} ${path}`);
      if (route.access === 'operator') await requireAdmin(services, req);
      const raw = typeof req.body === 'string' ? req.body : '';
      const answer = await route.handle({
        method: req.method,
        path,
        query: req.query as Record<string, string | string[] | undefined>,
        headers: req.headers,
        body: parseBody(req, raw),
        rawBody: raw,
      });
      if (answer.contentType) reply.type(answer.contentType);
      return reply.code(answer.status).send(answer.body ?? '');
    };
    scope.route({ method: ['GET', 'POST'], url: '/connectors/:name/*', schema: { hide: true }, handler });
  });
}
