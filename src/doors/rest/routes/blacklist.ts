import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { normaliseRecipient } from '../../../core/messaging/prepare.ts';
import { authorize } from '../access.ts';
import { errorResponses, PageQuery } from '../schemas.ts';

const Entry = Type.Object({ msisdn: Type.String(), source: Type.String(), creationDate: Type.String() });

/** The organisation's opt-out list: STOP replies add to it, START replies remove; MARKETING sends skip it. */
export function blacklistRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Blacklist'];
  const security = [{ apiKey: [] }];
  const view = (r: { msisdn: string; source: string; created_at: number }) => ({
    msisdn: r.msisdn,
    source: r.source,
    creationDate: new Date(r.created_at).toISOString(),
  });

  const Query = Type.Object({ ...PageQuery, 'searchBy[msisdn]': Type.Optional(Type.String()) });
  app.get(
    '/commons/v1/blacklist',
    {
      schema: {
        tags,
        security,
        summary: "The organisation's blacklisted numbers",
        querystring: Query,
        response: { 200: Type.Object({ items: Type.Array(Entry), page: Type.Integer(), pageSize: Type.Integer() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:read');
      const q = req.query as Static<typeof Query>;
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 10;
      const msisdn = q['searchBy[msisdn]'] ? normaliseRecipient(q['searchBy[msisdn]'], 'query.searchBy[msisdn]') : undefined;
      const rows = await services.blacklist.list(principal.credential.organisationId, { ...(msisdn ? { msisdn } : {}), page, pageSize });
      return { items: rows.map(view), page, pageSize };
    },
  );

  const Body = Type.Object({ msisdn: Type.String({ minLength: 1, maxLength: 32 }) });
  app.post(
    '/commons/v1/blacklist',
    { schema: { tags, security, summary: 'Blacklist a number', body: Body, response: { 201: Entry, ...errorResponses(400, 401, 403, 409) } } },
    async (req, reply) => {
      const principal = await authorize(services, req, 'blacklist:write');
      const msisdn = normaliseRecipient((req.body as Static<typeof Body>).msisdn, 'body.msisdn');
      return reply.code(201).send(view(await services.blacklist.add(principal.credential.organisationId, msisdn)));
    },
  );

  app.delete(
    '/commons/v1/blacklist/:msisdn',
    {
      schema: {
        tags,
        security,
        summary: 'Remove a number from the blacklist',
        params: Type.Object({ msisdn: Type.String() }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'blacklist:write');
      const msisdn = normaliseRecipient((req.params as { msisdn: string }).msisdn, 'path.msisdn');
      await services.blacklist.remove(principal.credential.organisationId, msisdn);
      return reply.code(204).send();
    },
  );
}
