import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { underField } from '../../../core/errors.ts';
import { SENDER_STATUSES, type RegisteredSender } from '../../../domain/senders.ts';
import { authorize } from '../access.ts';
import { errorResponses } from '../schemas.ts';

const SenderView = Type.Object({
  senderId: Type.String(),
  value: Type.String({ description: 'The sender as recipients see it: a name (up to 11 characters), a short code or a number' }),
  kind: Type.String({ description: 'ALPHANUMERIC, SHORT_CODE or LONG_NUMBER' }),
  countries: Type.Array(Type.String(), { description: 'ISO 3166 alpha-2 countries it may send to; empty: every country' }),
  status: Type.String({ enum: [...SENDER_STATUSES], description: 'PENDING, APPROVED or REJECTED, set by the operator' }),
  creationDate: Type.String(),
  updateDate: Type.String(),
});

const Countries = Type.Array(Type.String({ maxLength: 8 }), { maxItems: 300 });
const SenderRequest = Type.Object({
  value: Type.String({ minLength: 1, maxLength: 32 }),
  countries: Type.Optional(Countries),
});
// The status a request names is checked by the registry, whose refusal says what it got.
const RequestedStatus = Type.String({ maxLength: 32, description: 'PENDING, APPROVED or REJECTED', examples: ['APPROVED'] });
const SenderCreate = Type.Object({ ...SenderRequest.properties, status: Type.Optional(RequestedStatus) });
const SenderDecision = Type.Object({ status: Type.Optional(RequestedStatus), countries: Type.Optional(Countries) }, { minProperties: 1 });
const Items = Type.Object({ items: Type.Array(SenderView) });

function senderView(s: RegisteredSender): Static<typeof SenderView> {
  return {
    senderId: s.id,
    value: s.value,
    kind: s.kind,
    countries: s.countries,
    status: s.status,
    creationDate: new Date(s.createdAt).toISOString(),
    updateDate: new Date(s.updatedAt).toISOString(),
  };
}

/**
 * The sender registry: an organisation lists its senders and asks for new ones (PENDING); the operator registers,
 * approves or rejects them and says in which countries they hold.
 */
export function senderRoutes(app: FastifyInstance, services: Services): void {
  const { senders } = services.tenancy;
  const security = [{ apiKey: [] }];

  app.get(
    '/commons/v1/senders',
    { schema: { tags: ['Senders'], security, summary: "The organisation's senders", response: { 200: Items, ...errorResponses(401, 403) } } },
    async (req) => {
      const principal = await authorize(services, req, 'channel:read');
      return { items: (await senders.list(principal.credential.organisationId)).map(senderView) };
    },
  );

  app.post(
    '/commons/v1/senders',
    {
      schema: {
        tags: ['Senders'],
        security,
        summary: 'Ask for a sender (PENDING until the operator decides)',
        body: SenderRequest,
        response: { 201: SenderView, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'channel:write');
      const body = req.body as Static<typeof SenderRequest>;
      const s = await underField('body.', () => senders.register(principal.credential.organisationId, { value: body.value, countries: body.countries }));
      return reply.code(201).send(senderView(s));
    },
  );

  const OrgParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
  const SenderParams = Type.Object({ id: Type.String({ maxLength: 64 }), senderId: Type.String({ maxLength: 64 }) });
  const tags = ['Admin'];

  app.get(
    '/admin/v1/organisations/:id/senders',
    { schema: { tags, security, summary: "An organisation's senders", params: OrgParams, response: { 200: Items, ...errorResponses(401, 403, 404) } } },
    async (req) => {
      const { id } = req.params as Static<typeof OrgParams>;
      await services.tenancy.getOrganisation(id);
      return { items: (await senders.list(id)).map(senderView) };
    },
  );

  app.post(
    '/admin/v1/organisations/:id/senders',
    {
      schema: {
        tags,
        security,
        summary: 'Register a sender for an organisation (PENDING unless a status is given)',
        params: OrgParams,
        body: SenderCreate,
        response: { 201: SenderView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as Static<typeof OrgParams>;
      const body = req.body as Static<typeof SenderCreate>;
      await services.tenancy.getOrganisation(id);
      const s = await underField('body.', () => senders.register(id, { value: body.value, countries: body.countries, status: body.status }));
      return reply.code(201).send(senderView(s));
    },
  );

  app.patch(
    '/admin/v1/organisations/:id/senders/:senderId',
    {
      schema: {
        tags,
        security,
        summary: 'Decide on a sender: its status (PENDING, APPROVED, REJECTED) and the countries it holds for',
        params: SenderParams,
        body: SenderDecision,
        response: { 200: SenderView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id, senderId } = req.params as Static<typeof SenderParams>;
      const body = req.body as Static<typeof SenderDecision>;
      return senderView(await underField('body.', () => senders.decide(id, senderId, body)));
    },
  );

  app.delete(
    '/admin/v1/organisations/:id/senders/:senderId',
    {
      schema: {
        tags,
        security,
        summary: "Remove a sender from the registry (then only channels' fromFieldList decide; reject it to refuse it)",
        params: SenderParams,
        response: { 200: SenderView, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const { id, senderId } = req.params as Static<typeof SenderParams>;
      return senderView(await senders.remove(id, senderId));
    },
  );
}
