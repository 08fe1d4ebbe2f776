import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { underField } from '../../../core/errors.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import type { MessageRow } from '../../../core/types.ts';
import { assertOwnChannel, authorize } from '../access.ts';
import { answerSend } from '../idempotency.ts';
import { sendDateParam } from '../dates.ts';
import { campaignRoutes } from './campaigns.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';
import { MessageSchema, MessageList, ListQuery, EventList, eventList, readableChannelIds, listMessagesFor, renderMessage, type ListQueryT } from '../messages.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));

export const SmsBody = Type.Object({
  text: Type.String({ minLength: 1 }),
  encoding: Type.Optional(Type.String({ enum: ['GSM7', 'UNICODE'] })),
  stop: Type.Optional(Type.Boolean()),
});

export const SendSmsBody = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  body: SmsBody,
  from: OptionalString({ maxLength: 64 }),
  refClient: OptionalString(),
  ref_client: OptionalString({ description: 'Alias of refClient' }),
  sentDate: OptionalString({ description: "ISO 8601; a future date schedules the message; without an offset it is read in the organisation's timeZone" }),
  callbackUrlStatus: OptionalString(),
  callbackUrlMo: OptionalString(),
});

/** Sends the SMS a request's body describes on the key's channel; into a campaign, at its time by default, when given. */
export function sendSmsRequest(
  services: Services,
  req: FastifyRequest,
  principal: Principal,
  afterInsert?: PreparedMessage['afterInsert'],
  campaign?: { campaignId: string; defaultSendAt: number | null },
): Promise<MessageRow> {
  const body = req.body as Static<typeof SendSmsBody>;
  return underField('body.', () =>
    services.messaging.sendSms(
      principal.channel,
      {
        to: body.recipient.to,
        text: body.body.text,
        encoding: body.body.encoding as 'GSM7' | 'UNICODE' | undefined,
        stop: body.body.stop,
        from: body.from,
        refClient: body.refClient ?? body.ref_client,
        sentDate: sendDateParam(body.sentDate, 'body.sentDate') ?? (campaign?.defaultSendAt ? new Date(campaign.defaultSendAt) : null),
        callbackUrlStatus: body.callbackUrlStatus,
        callbackUrlMo: body.callbackUrlMo,
        source: campaign ? 'CAMPAIGN' : 'REST',
        campaignId: campaign?.campaignId,
      },
      afterInsert,
    ),
  );
}

export function smsRoutes(app: FastifyInstance, services: Services): void {
  const { messaging } = services;
  const tags = ['SMS'];
  const security = [{ apiKey: [] }];
  app.addSchema(MessageSchema);

  const send = (req: FastifyRequest, reply: FastifyReply, principal: Principal) =>
    answerSend(services, req, reply, 'sms', principal.channel, async (afterInsert) =>
      renderMessage(services, req, await sendSmsRequest(services, req, principal, afterInsert)),
    );

  const sendSchema = {
    tags,
    security,
    summary: 'Send an SMS',
    description: 'Answers 201 with the message object once it is durably stored. Supports the Idempotency-Key header.',
    body: SendSmsBody,
    response: { 201: Type.Ref('Message'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
  };

  app.post('/sms/v1/messages', { schema: sendSchema }, async (req, reply) => {
    const principal = await authorize(services, req, 'messages:send', 'SMS');
    return send(req, reply, principal);
  });

  app.post(
    '/sms/v1/channels/:channelId/messages',
    { schema: { ...sendSchema, summary: 'Send an SMS on a given channel (the key’s own)', params: Type.Object({ channelId: Type.String() }) } },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      assertOwnChannel(principal, (req.params as { channelId: string }).channelId);
      return send(req, reply, principal);
    },
  );

  app.get(
    '/sms/v1/messages',
    {
      schema: {
        tags,
        security,
        summary: 'List messages (MT by default, last 10 days by default)',
        querystring: ListQuery,
        response: { 200: MessageList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      return listMessagesFor(services, req, principal, 'SMS', req.query as ListQueryT);
    },
  );

  app.get(
    '/sms/v1/messages/:id',
    {
      schema: { tags, security, summary: 'Read a message', params: IdParams, response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      const m = await messaging.get((req.params as { id: string }).id, await readableChannelIds(services, principal), 'SMS');
      return renderMessage(services, req, m);
    },
  );

  app.get(
    '/sms/v1/messages/:id/events',
    {
      schema: { tags, security, summary: 'Status history of a message', params: IdParams, response: { 200: EventList, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      return eventList(await messaging.events((req.params as { id: string }).id, await readableChannelIds(services, principal), 'SMS'));
    },
  );

  app.delete(
    '/sms/v1/messages/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a scheduled message (refunded)',
        params: IdParams,
        response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      const m = await messaging.cancel((req.params as { id: string }).id, await readableChannelIds(services, principal), 'SMS');
      return renderMessage(services, req, m);
    },
  );

  campaignRoutes(app, services, {
    type: 'SMS',
    prefix: '/sms/v1',
    tags,
    messageFields: {
      body: SmsBody,
      from: OptionalString({ maxLength: 64 }),
      sentDate: OptionalString({ description: "ISO 8601; a future date schedules the campaign; without an offset it is read in the organisation's timeZone" }),
      callbackUrlStatus: OptionalString(),
      callbackUrlMo: OptionalString(),
    },
    message: (fields) => {
      const b = fields as Static<typeof SendSmsBody>;
      return {
        text: b.body.text,
        encoding: b.body.encoding as 'GSM7' | 'UNICODE' | undefined,
        stop: b.body.stop,
        from: b.from,
        sentDate: sendDateParam(b.sentDate, 'body.sentDate'),
        callbackUrlStatus: b.callbackUrlStatus,
        callbackUrlMo: b.callbackUrlMo,
      };
    },
    body: SmsBody,
    sendBody: SendSmsBody,
    send: (req, principal, campaign, afterInsert) => sendSmsRequest(services, req, principal, afterInsert, campaign),
  });
}
