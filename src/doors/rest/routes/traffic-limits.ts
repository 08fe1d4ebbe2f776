import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { type GroupLimits, MAX_PER_SECOND, type RouteGroup } from '../../../domain/traffic.ts';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { errorResponses, IdParams } from '../schemas.ts';

const PerSecond = Type.Integer({ minimum: 1, maximum: MAX_PER_SECOND });
const Limits = Type.Object(
  { perKey: PerSecond, perOrganisation: PerSecond },
  { additionalProperties: false, description: 'Requests a second: for each API key, and for the whole organisation' },
);
const CUSTOMER_GROUPS = ['send', 'read', 'lookup'] as const;

const LimitsInput = Type.Object(
  { send: Type.Optional(Limits), read: Type.Optional(Limits), lookup: Type.Optional(Limits) },
  { additionalProperties: false, description: 'The groups given replace the defaults for this organisation; the others keep them' },
);
const LimitsView = Type.Object({
  organisationId: Type.String(),
  send: Limits,
  read: Limits,
  lookup: Limits,
});

/** An organisation's traffic limits (operator API): what it may send, read and look up a second. */
export function trafficLimitRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];
  const view = async (organisationId: string) => {
    const l = await services.access.limitsOf(organisationId, Date.now());
    return { organisationId, send: l.send, read: l.read, lookup: l.lookup };
  };

  app.get(
    '/admin/v1/organisations/:id/rate-limits',
    {
      schema: {
        tags,
        security,
        summary: "An organisation's traffic limits (its own, or the defaults of TERN_RATE_LIMITS)",
        params: IdParams,
        response: { 200: LimitsView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      return view(id);
    },
  );

  app.put(
    '/admin/v1/organisations/:id/rate-limits',
    {
      schema: {
        tags,
        security,
        summary: "Sets an organisation's own traffic limits; every node applies them at once",
        params: IdParams,
        body: LimitsInput,
        response: { 200: LimitsView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      const body = req.body as Static<typeof LimitsInput>;
      const own: Partial<Record<RouteGroup, GroupLimits>> = {};
      for (const g of CUSTOMER_GROUPS) if (body[g]) own[g] = body[g];
      await underField('body.', () => services.access.setLimits(id, own));
      return view(id);
    },
  );
}
