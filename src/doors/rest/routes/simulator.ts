import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { omitNulls } from '../../../domain/absent.ts';
import type { Services } from '../../../core/services.ts';
import { errorResponses, PageQuery, Uuid } from '../schemas.ts';
import { RCS_LIMITS, RCS_MO_BODY_TYPES } from '../../../domain/rcs.ts';
import { DEFAULT_SIMULATOR } from '../../../core/routing/service.ts';
import { fail } from '../../../core/errors.ts';
import { normaliseRecipient } from '../../../core/messaging/prepare.ts';
import { tagged } from './rcs.ts';
import { renderMessage } from '../messages.ts';

const SmsMoBody = Type.Object({
  from: Type.String({ minLength: 1, maxLength: 32, description: "The mobile user's number" }),
  to: Type.String({ minLength: 1, maxLength: 32, description: 'The number or short code that receives it' }),
  text: Type.String({ minLength: 1, maxLength: 1600 }),
});

const Accepted = Type.Object({ status: Type.String() });

/** Operator tools of the simulated network: inject what a real operator would send Tern. */
export function simulatorRoutes(app: FastifyInstance, services: Services): void {
  rcsSimulatorRoutes(app, services);
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];

  app.post(
    '/admin/v1/simulator/mo',
    {
      schema: {
        tags,
        security,
        summary: 'Inject an inbound SMS (MO) into the simulated network',
        body: SmsMoBody,
        response: { 202: Accepted, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body as Static<typeof SmsMoBody>;
      await services.connectors.inject(DEFAULT_SIMULATOR, [
        { kind: 'mo', type: 'SMS', from: body.from, to: body.to, body: { text: body.text }, at: Date.now() },
      ]);
      return reply.code(202).send({ status: 'received' });
    },
  );

  const HandsetList = Type.Object({
    items: Type.Array(
      Type.Object({
        text: Type.String({ description: 'What the phone shows (SMS, RCS text) or what the call said' }),
        receivedAt: Type.String(),
        type: Type.String({ enum: ['SMS', 'RCS', 'VOICE'] }),
        messageId: Type.String(),
      }),
    ),
  });
  app.get(
    '/admin/v1/simulator/handsets/:msisdn/messages',
    {
      schema: {
        tags,
        security,
        summary: 'What a simulated phone received, newest first',
        description:
          'The text of each message the simulated network delivered to the number (a one-time password with its code, as the person reads it), ' +
          'and what each answered call said.',
        params: Type.Object({ msisdn: Type.String({ minLength: 1, maxLength: 32 }) }),
        querystring: Type.Object({ pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) }),
        response: { 200: HandsetList, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const msisdn = normaliseRecipient((req.params as { msisdn: string }).msisdn, 'path.msisdn');
      const { pageSize = 20 } = req.query as { pageSize?: number };
      // The simulated network is every simulator connector (the default ones: SMS and RCS, and voice): their inboxes together.
      const { connectors } = await services.connectors.definitions();
      const handsets = connectors
        .filter((c) => c.kind === 'SIMULATOR' && c.enabled)
        .flatMap(
          (c) =>
            services.router
              .connector(c.name)
              ?.routes?.()
              .filter((r) => r.method === 'GET' && r.path === '/handsets') ?? [],
        );
      if (handsets.length === 0) fail('NOT_FOUND', 'the simulated network is not running (no SIMULATOR connector)');
      type Item = Static<typeof HandsetList>['items'][number];
      const items: Item[] = [];
      for (const route of handsets) {
        const answer = await route.handle({
          method: 'GET',
          path: '/handsets',
          query: { msisdn, limit: String(pageSize) },
          headers: {},
          body: undefined,
          rawBody: '',
        });
        if (answer.status !== 200) fail('INVALID_REQUEST', String((answer.body as { error?: unknown } | undefined)?.error ?? 'refused by the simulator'));
        items.push(...(answer.body as { items: Item[] }).items);
      }
      items.sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : a.receivedAt > b.receivedAt ? -1 : 0));
      return { items: items.slice(0, pageSize) };
    },
  );

  const Unrouted = Type.Object({
    id: Type.String(),
    connector: Type.String(),
    type: Type.String(),
    from: Type.String(),
    to: Type.String(),
    body: Type.Object({}, { additionalProperties: true }),
    receivedAt: Type.String(),
  });
  app.get(
    '/admin/v1/inbound/unrouted',
    {
      schema: {
        tags,
        security,
        summary: 'Inbound messages whose destination matched no channel',
        querystring: Type.Object(PageQuery),
        response: { 200: Type.Object({ items: Type.Array(Unrouted), page: Type.Integer(), pageSize: Type.Integer() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const { page = 1, pageSize = 10 } = req.query as { page?: number; pageSize?: number };
      const rows = await services.inbound.listUnrouted(page, pageSize);
      return {
        items: rows.map((r) => ({
          id: r.id,
          connector: r.connector,
          type: r.type,
          from: r.sender,
          to: r.recipient,
          body: omitNulls(JSON.parse(r.body) as Record<string, unknown>),
          receivedAt: new Date(r.received_at).toISOString(),
        })),
        page,
        pageSize,
      };
    },
  );
}

const RcsMoRequest = Type.Object({
  from: Type.String({ minLength: 1, maxLength: 32, description: "The mobile user's number" }),
  to: Type.String({ minLength: 1, maxLength: 64, description: "The agent: the RCS channel's defaultFromField or one of its fromFieldList" }),
  body: tagged(
    {
      TEXT: Type.Object({ type: Type.Literal('TEXT'), text: Type.String({ minLength: 1, maxLength: RCS_LIMITS.text }) }, { additionalProperties: false }),
      SUGGESTION: Type.Object(
        {
          type: Type.Literal('SUGGESTION'),
          text: Type.String({ minLength: 1, maxLength: RCS_LIMITS.suggestionText }),
          postbackData: Type.String({ maxLength: RCS_LIMITS.postbackData }),
        },
        { additionalProperties: false },
      ),
      LOCATION: Type.Object(
        {
          type: Type.Literal('LOCATION'),
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
        },
        { additionalProperties: false },
      ),
      FILE: Type.Object(
        {
          type: Type.Literal('FILE'),
          fileUrl: Type.String({ minLength: 1, maxLength: RCS_LIMITS.fileUrl }),
          filename: Type.String({ minLength: 1, maxLength: 255 }),
          contentType: Type.String({ minLength: 1, maxLength: 255 }),
          thumbnailUrl: Type.Optional(Type.String({ minLength: 1, maxLength: RCS_LIMITS.fileUrl })),
        },
        { additionalProperties: false },
      ),
    },
    `What the user sent: ${RCS_MO_BODY_TYPES.join(', ')}`,
  ),
});

const RcsReadRequest = Type.Object({ messageId: Uuid });

/** The RCS side of the simulated network: a user's MO and READ reports. */
export function rcsSimulatorRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];

  app.post(
    '/admin/v1/simulator/rcs/mo',
    {
      schema: {
        tags,
        security,
        summary: 'Inject an inbound RCS message (MO) from a user to an agent',
        description: 'Stored as an MO of the channel whose agent it names, sent to its callbackUrlMo, and it opens a 24-hour conversation.',
        body: RcsMoRequest,
        response: { 202: Type.Object({ status: Type.String() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body as Static<typeof RcsMoRequest>;
      await services.connectors.inject(DEFAULT_SIMULATOR, [
        { kind: 'mo', type: 'RCS', from: body.from, to: body.to, body: body.body as Record<string, unknown>, at: Date.now() },
      ]);
      return reply.code(202).send({ status: 'received' });
    },
  );

  app.post(
    '/admin/v1/simulator/rcs/read',
    {
      schema: {
        tags,
        security,
        summary: 'Report an RCS message as read by its recipient',
        description: 'The simulator also does this by itself a while after delivery (not for numbers ending in 0008).',
        body: RcsReadRequest,
        response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const { messageId } = req.body as Static<typeof RcsReadRequest>;
      const [m] = await services.messaging.getMany([messageId]);
      if (!m || m.type !== 'RCS' || m.direction !== 'MT') fail('NOT_FOUND', `RCS message ${messageId} not found`);
      if (m.status !== 'ENROUTE' && m.status !== 'DELIVERED' && m.status !== 'READ') {
        fail('CONFLICT', `message ${messageId} is ${m.status}; only a message on its way or delivered can be read`);
      }
      await services.connectors.inject(m.connector ?? DEFAULT_SIMULATOR, [{ kind: 'receipt', messageId, status: 'READ', at: Date.now() }]);
      const [after] = await services.messaging.getMany([messageId]);
      return renderMessage(services, req, after!);
    },
  );
}
