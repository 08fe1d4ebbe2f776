import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import type { Services } from '../../../core/services.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { MessageRow } from '../../../core/types.ts';
import { assertOwnChannel, authorize } from '../access.ts';
import { answerSend } from '../idempotency.ts';
import { EventList, eventList, ListQuery, type ListQueryT, listMessagesFor, MessageList, readableChannelIds, renderMessage } from '../messages.ts';
import { errorResponses, IdParams } from '../schemas.ts';

/** What the message routes of one channel type (SMS, RCS, voice) say and do differently. */
export interface ChannelMessages {
  type: 'SMS' | 'RCS' | 'VOICE';
  /** `/sms/v1`, `/rcs/v1`, `/voice/v1`. */
  prefix: string;
  tags: string[];
  /** How the summaries name one message: `message`, `RCS message`…, and with its article. */
  noun: { bare: string; one: string };
  listSummary: string;
  send: {
    summary: string;
    description: string;
    body: TSchema;
    /** Its error answers beside the 201. */
    errors: number[];
    /** Sends carrying an Idempotency-Key are answered once for the key, under this scope (`sms:{channelId}`…). */
    idempotencyScope?: string;
    /** Also at `{prefix}/channels/{channelId}/messages`, for the key's own channel. */
    onChannel?: boolean;
    /** Sends the message a request's body describes on the key's channel. */
    message(req: FastifyRequest, principal: Principal, afterInsert?: PreparedMessage['afterInsert']): Promise<MessageRow>;
  };
}

/**
 * The routes every channel type has for its messages: send, list, read, status history and cancelling a scheduled
 * one, each authorised for the type's channels.
 */
export function channelMessageRoutes(app: FastifyInstance, services: Services, spec: ChannelMessages): void {
  const { messaging } = services;
  const { type, prefix, tags, noun } = spec;
  const security = [{ apiKey: [] }];

  const send = (req: FastifyRequest, reply: FastifyReply, principal: Principal) => {
    const sendOnce = async (afterInsert?: PreparedMessage['afterInsert']) => renderMessage(services, req, await spec.send.message(req, principal, afterInsert));
    if (spec.send.idempotencyScope === undefined) return sendOnce().then((m) => reply.code(201).send(m));
    return answerSend(services, req, reply, spec.send.idempotencyScope, principal.channel, sendOnce);
  };

  const sendSchema = {
    tags,
    security,
    summary: spec.send.summary,
    description: spec.send.description,
    body: spec.send.body,
    response: { 201: Type.Ref('Message'), ...errorResponses(...spec.send.errors) },
  };

  app.post(`${prefix}/messages`, { schema: sendSchema }, async (req, reply) => {
    const principal = await authorize(services, req, 'messages:send', type);
    return send(req, reply, principal);
  });

  if (spec.send.onChannel) {
    app.post(
      `${prefix}/channels/:channelId/messages`,
      { schema: { ...sendSchema, summary: `${spec.send.summary} on a given channel (the key’s own)`, params: Type.Object({ channelId: Type.String() }) } },
      async (req, reply) => {
        const principal = await authorize(services, req, 'messages:send', type);
        assertOwnChannel(principal, (req.params as { channelId: string }).channelId);
        return send(req, reply, principal);
      },
    );
  }

  app.get(
    `${prefix}/messages`,
    {
      schema: { tags, security, summary: spec.listSummary, querystring: ListQuery, response: { 200: MessageList, ...errorResponses(400, 401, 403) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', type);
      return listMessagesFor(services, req, principal, type, req.query as ListQueryT);
    },
  );

  app.get(
    `${prefix}/messages/:id`,
    {
      schema: { tags, security, summary: `Read ${noun.one}`, params: IdParams, response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', type);
      const m = await messaging.get((req.params as { id: string }).id, await readableChannelIds(services, principal), type);
      return renderMessage(services, req, m);
    },
  );

  app.get(
    `${prefix}/messages/:id/events`,
    {
      schema: {
        tags,
        security,
        summary: `Status history of ${noun.one}`,
        params: IdParams,
        response: { 200: EventList, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', type);
      return eventList(await messaging.events((req.params as { id: string }).id, await readableChannelIds(services, principal), type));
    },
  );

  app.delete(
    `${prefix}/messages/:id`,
    {
      schema: {
        tags,
        security,
        summary: `Cancel a scheduled ${noun.bare} (refunded)`,
        params: IdParams,
        response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:send', type);
      const m = await messaging.cancel((req.params as { id: string }).id, await readableChannelIds(services, principal), type);
      return renderMessage(services, req, m);
    },
  );
}
