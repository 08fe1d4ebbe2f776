import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import type { WebhookDelivery } from '../../../core/types.ts';
import { authorize } from '../access.ts';
import { errorResponses, Nullable, PageQuery } from '../schemas.ts';
import { readableChannelIds } from './sms.ts';

const DELIVERY_STATES = ['PENDING', 'DELIVERED', 'FAILED', 'GONE', 'REFUSED'] as const;

const Attempt = Type.Object({
  date: Type.String(),
  outcome: Type.String(),
  httpStatus: Nullable(Type.Integer()),
  latencyMs: Type.Integer(),
  error: Nullable(Type.String()),
});

const Delivery = Type.Object({
  deliveryId: Type.String({ description: 'Also the webhook-id header, stable across retries' }),
  eventId: Type.String(),
  messageId: Type.String(),
  channelId: Type.String(),
  kind: Type.String({ enum: ['STATUS', 'MO'] }),
  method: Type.String(),
  url: Type.String(),
  status: Type.String({ enum: [...DELIVERY_STATES] }),
  attemptCount: Type.Integer(),
  nextAttemptDate: Nullable(Type.String()),
  lastHttpStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  creationDate: Type.String(),
  deliveryDate: Nullable(Type.String()),
  attempts: Type.Optional(Type.Array(Attempt)),
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
    status: d.state,
    attemptCount: d.attempts,
    nextAttemptDate: d.state === 'PENDING' ? new Date(d.next_attempt_at).toISOString() : null,
    lastHttpStatus: d.last_http_status,
    lastError: d.last_error,
    creationDate: new Date(d.created_at).toISOString(),
    deliveryDate: d.delivered_at === null ? null : new Date(d.delivered_at).toISOString(),
  };
}

export function webhookRoutes(app: FastifyInstance, services: Services): void {
  const db = services.store.db;
  const tags = ['Webhooks'];
  const security = [{ apiKey: [] }];

  const attemptsOf = async (id: string) =>
    (await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('at').execute()).map((a) => ({
      date: new Date(a.at).toISOString(),
      outcome: a.outcome,
      httpStatus: a.http_status,
      latencyMs: a.latency_ms,
      error: a.error,
    }));

  const find = async (id: string, channelIds: string[]) => {
    const d = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    if (!d || !channelIds.includes(d.channel_id)) fail('NOT_FOUND', `webhook delivery ${id} not found`);
    return d;
  };

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
      let query = db.selectFrom('webhook_deliveries').selectAll().where('channel_id', 'in', await readableChannelIds(services, principal));
      if (q['searchBy[messageId]']) query = query.where('message_id', '=', q['searchBy[messageId]']);
      if (q['searchBy[status]']) query = query.where('state', '=', q['searchBy[status]']);
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').offset((page - 1) * pageSize).limit(pageSize).execute();
      return { items: await Promise.all(rows.map(async (d) => ({ ...deliveryView(d), attempts: await attemptsOf(d.id) }))), page, pageSize };
    },
  );

  app.get(
    '/commons/v1/webhooks/deliveries/:id',
    {
      schema: { tags, security, summary: 'One webhook delivery with its attempts', params: Type.Object({ id: Type.String() }), response: { 200: Delivery, ...errorResponses(401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'webhooks:read');
      const d = await find((req.params as { id: string }).id, await readableChannelIds(services, principal));
      return { ...deliveryView(d), attempts: await attemptsOf(d.id) };
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
      const d = await find((req.params as { id: string }).id, await readableChannelIds(services, principal));
      const now = Date.now();
      await db
        .updateTable('webhook_deliveries')
        .set({ state: 'PENDING', attempts: 0, next_attempt_at: now, lease_until: null, updated_at: now, delivered_at: null })
        .where('id', '=', d.id)
        .execute();
      services.webhooks.nudge();
      const fresh = await find(d.id, [d.channel_id]);
      return reply.code(202).send({ ...deliveryView(fresh), attempts: await attemptsOf(d.id) });
    },
  );
}
