import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { present } from '../../../domain/absent.ts';
import { iso } from '../../../domain/dates.ts';
import type { Services } from '../../../core/services.ts';
import type { DeliveryWithAttempts } from '../../../core/webhooks/deliveries.ts';
import type { WebhookDelivery } from '../../../core/types.ts';
import { authorize } from '../access.ts';
import { errorResponses, PageQuery } from '../schemas.ts';
import { readableChannelIds } from '../messages.ts';

const DELIVERY_STATES = ['PENDING', 'DELIVERED', 'FAILED', 'GONE', 'REFUSED'] as const;

const Attempt = Type.Object({
  date: Type.String(),
  outcome: Type.String(),
  httpStatus: Type.Optional(Type.Integer({ description: 'Absent when no answer came' })),
  latencyMs: Type.Integer(),
  error: Type.Optional(Type.String()),
});

const Delivery = Type.Object({
  deliveryId: Type.String({ description: 'Also the webhook-id header, stable across retries' }),
  eventId: Type.String(),
  messageId: Type.String(),
  channelId: Type.String(),
  kind: Type.String({ enum: ['STATUS', 'MO', 'OTP', 'ALERT'], description: 'OTP: otp.approved and otp.expired; ALERT: velocity.exceeded' }),
  method: Type.String(),
  url: Type.String(),
  payload: Type.Optional(Type.String({ description: 'The request body sent, the same at every attempt' })),
  status: Type.String({ enum: [...DELIVERY_STATES] }),
  attemptCount: Type.Integer(),
  nextAttemptDate: Type.Optional(Type.String({ description: 'While PENDING' })),
  lastHttpStatus: Type.Optional(Type.Integer()),
  lastError: Type.Optional(Type.String()),
  creationDate: Type.String(),
  deliveryDate: Type.Optional(Type.String()),
  attempts: Type.Array(Attempt, { description: 'Oldest first' }),
});

const DeliveryQuery = Type.Object({
  ...PageQuery,
  'searchBy[messageId]': Type.Optional(Type.String()),
  'searchBy[status]': Type.Optional(Type.String({ enum: [...DELIVERY_STATES] })),
});

function deliveryView(d: WebhookDelivery) {
  return {
    deliveryId: d.id,
    eventId: d.event_id,
    messageId: d.message_id,
    channelId: d.channel_id,
    kind: d.kind,
    method: d.method,
    url: d.url,
    ...present('payload', d.payload === '' ? null : d.payload),
    status: d.state,
    attemptCount: d.attempts,
    ...present('nextAttemptDate', d.state === 'PENDING' ? iso(d.next_attempt_at) : null),
    ...present('lastHttpStatus', d.last_http_status),
    ...present('lastError', d.last_error),
    creationDate: iso(d.created_at),
    ...present('deliveryDate', d.delivered_at === null ? null : iso(d.delivered_at)),
  };
}

function deliveryWithAttemptsView({ delivery, attempts }: DeliveryWithAttempts) {
  return {
    ...deliveryView(delivery),
    attempts: attempts.map((a) => ({
      date: new Date(a.at).toISOString(),
      outcome: a.outcome,
      ...present('httpStatus', a.http_status),
      latencyMs: a.latency_ms,
      ...present('error', a.error),
    })),
  };
}

export function webhookRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Webhooks'];
  const security = [{ apiKey: [] }];

  app.get(
    '/commons/v1/webhooks/deliveries',
    {
      schema: {
        tags,
        security,
        summary: 'Webhook deliveries with every attempt (newest first)',
        querystring: DeliveryQuery,
        response: { 200: Type.Object({ items: Type.Array(Delivery), page: Type.Integer(), pageSize: Type.Integer() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'webhooks:read');
      const q = req.query as Static<typeof DeliveryQuery>;
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 10;
      const deliveries = await services.webhookDeliveries.list({
        channelIds: await readableChannelIds(services, principal),
        ...(q['searchBy[messageId]'] ? { messageId: q['searchBy[messageId]'] } : {}),
        ...(q['searchBy[status]'] ? { state: q['searchBy[status]'] } : {}),
        page,
        pageSize,
      });
      return { items: deliveries.map(deliveryWithAttemptsView), page, pageSize };
    },
  );

  app.get(
    '/commons/v1/webhooks/deliveries/:id',
    {
      schema: {
        tags,
        security,
        summary: 'One webhook delivery with its attempts',
        params: Type.Object({ id: Type.String() }),
        response: { 200: Delivery, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'webhooks:read');
      const d = await services.webhookDeliveries.get((req.params as { id: string }).id, await readableChannelIds(services, principal));
      return deliveryWithAttemptsView(d);
    },
  );

  app.post(
    '/commons/v1/webhooks/deliveries/:id/replay',
    {
      schema: {
        tags,
        security,
        summary: 'Send a delivery again now (same webhook-id and body), whatever its state',
        params: Type.Object({ id: Type.String() }),
        response: { 202: Delivery, ...errorResponses(401, 403, 404) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'webhooks:write');
      const id = (req.params as { id: string }).id;
      const channelIds = await readableChannelIds(services, principal);
      await services.webhookDeliveries.replay(id, channelIds);
      services.webhooks.nudge();
      return reply.code(202).send(deliveryWithAttemptsView(await services.webhookDeliveries.get(id, channelIds)));
    },
  );
}
