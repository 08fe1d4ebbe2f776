import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { type VelocityLimit, VELOCITY_BOUNDS, policyCountries } from '../../../domain/fraud-guards.ts';
import type { OrganisationGuards } from '../../../core/fraud/guards.ts';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';

const VelocityLimitView = Type.Object(
  {
    prefix: Type.String({
      pattern: `^\\d{0,${VELOCITY_BOUNDS.prefixDigits}}$`,
      description: 'Numbers it is about: those starting with these digits ("" for every number)',
    }),
    rangeDigits: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: VELOCITY_BOUNDS.rangeDigits,
        description: 'Numbers differing only in their last rangeDigits digits count together (3: blocks of 1,000); absent: the whole prefix is one range',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: VELOCITY_BOUNDS.limit, description: 'One-time passwords allowed to one range in a window' }),
    windowSeconds: Type.Integer({ minimum: 1, maximum: VELOCITY_BOUNDS.windowSeconds }),
  },
  { additionalProperties: false },
);

const GuardsInput = Type.Object(
  {
    allowedCountries: Type.Optional(
      Nullable(
        Type.Array(Type.String({ maxLength: 8 }), {
          minItems: 1,
          maxItems: 300,
          description: 'ISO 3166 alpha-2 codes, or ["*"] for every country; null: back to the default',
        }),
      ),
    ),
    velocityLimits: Type.Optional(
      Nullable(
        Type.Array(VelocityLimitView, { maxItems: VELOCITY_BOUNDS.count, description: '[] for none; null: back to the defaults (TERN_VELOCITY_LIMITS)' }),
      ),
    ),
  },
  { additionalProperties: false, description: 'Fields left out keep their value' },
);

const GuardsView = Type.Object({
  organisationId: Type.String(),
  allowedCountries: Type.Optional(Type.Array(Type.String(), { description: "The organisation's own list; absent: the default" })),
  velocityLimits: Type.Optional(Type.Array(VelocityLimitView, { description: "The organisation's own limits; absent: the defaults" })),
  effective: Type.Object({
    allowedCountries: Type.Optional(
      Type.Array(Type.String(), {
        description: 'What applies: its own list, else its defaultCountry and TERN_ALLOWED_COUNTRIES; absent: no country guard (no defaultCountry, no list)',
      }),
    ),
    velocityLimits: Type.Array(VelocityLimitView),
  }),
});

function limitView(l: VelocityLimit): Static<typeof VelocityLimitView> {
  return { prefix: l.prefix, ...(l.rangeDigits === null ? {} : { rangeDigits: l.rangeDigits }), limit: l.limit, windowSeconds: l.windowSeconds };
}

function guardsView(g: OrganisationGuards): Static<typeof GuardsView> {
  return {
    organisationId: g.organisationId,
    ...(g.ownCountries === null ? {} : { allowedCountries: g.ownCountries }),
    ...(g.ownVelocityLimits === null ? {} : { velocityLimits: g.ownVelocityLimits.map(limitView) }),
    effective: {
      ...(g.countries === null ? {} : { allowedCountries: policyCountries(g.countries) }),
      velocityLimits: g.velocityLimits.map(limitView),
    },
  };
}

/**
 * An organisation's fraud guards (operator API): the destination countries it may send to, and the velocity limits of
 * its one-time passwords. Every node applies a change at once.
 */
export function fraudGuardRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];

  app.get(
    '/admin/v1/organisations/:id/fraud-guards',
    {
      schema: {
        tags,
        security,
        summary: "An organisation's fraud guards: its own settings and what applies",
        params: IdParams,
        response: { 200: GuardsView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      return guardsView(await services.fraudGuards.of(id));
    },
  );

  app.put(
    '/admin/v1/organisations/:id/fraud-guards',
    {
      schema: {
        tags,
        security,
        summary: "Sets an organisation's destination countries and velocity limits",
        description:
          'A message to another country ends UNDELIVERABLE / COUNTRY_NOT_ALLOWED at accept, not charged; a one-time password past a ' +
          'velocity limit of its range ends UNDELIVERABLE / VELOCITY_LIMIT_EXCEEDED and raises a velocity.exceeded webhook (once a window).',
        params: IdParams,
        body: GuardsInput,
        response: { 200: GuardsView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const b = req.body as Static<typeof GuardsInput>;
      const guards = await underField('body.', () =>
        services.fraudGuards.set(id, {
          allowedCountries: b.allowedCountries,
          velocityLimits:
            b.velocityLimits === undefined || b.velocityLimits === null
              ? b.velocityLimits
              : b.velocityLimits.map((l) => ({ prefix: l.prefix, rangeDigits: l.rangeDigits ?? null, limit: l.limit, windowSeconds: l.windowSeconds })),
        }),
      );
      return guardsView(guards);
    },
  );
}
