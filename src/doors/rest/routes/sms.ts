import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { parseApiDate } from '../../../core/domain/dates.ts';
import { MESSAGE_STATUSES } from '../../../core/domain/status.ts';
import { seesOrganisation } from '../../../core/domain/tenancy.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import { normaliseRecipient } from '../../../core/messaging/sms.ts';
import { messageObject } from '../../../core/messaging/view.ts';
import type { MessageEventRow, MessageRow } from '../../../core/types.ts';
import { present } from '../../../core/domain/absent.ts';
import { assertOwnChannel, authorize, baseUrl } from '../access.ts';
import { answerSend } from '../idempotency.ts';
import { sendDateParam } from '../dates.ts';
import { campaignRoutes } from './campaigns.ts';
import { errorResponses, IdParams, Nullable, PageQuery } from '../schemas.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));

export const MessageSchema = Type.Object(
  {
    messageId: Type.String({ format: 'uuid' }),
    acceptedAt: Type.String(),
    sentDate: Type.String(),
    campaignId: Type.Optional(Type.String()),
    originMessageId: Type.Optional(Type.String()),
    channel: Type.Object({ channelId: Type.String(), name: Type.String(), type: Type.String(), flow: Type.String() }),
    type: Type.String(),
    direction: Type.String({ enum: ['MT', 'MO'] }),
    recipient: Type.Object({ to: Type.String() }),
    from: Type.Optional(Type.String()),
    body: Type.Object({}, { additionalProperties: true }),
    price: Type.Optional(Type.Object({ amount: Type.Number(), currency: Type.String(), kind: Type.Optional(Type.String()) })),
    status: Type.Optional(
      Type.Object({
        value: Type.String(),
        deliveryDate: Type.String(),
        detail: Type.Optional(Type.String({ description: 'Why, for a message that failed or was cancelled' })),
        lookup: Type.Optional(
          Type.Object({ mccMnc: Type.String(), country: Type.Optional(Type.String()), network: Type.Optional(Type.String()) }),
        ),
      }),
    ),
    refClient: Type.Optional(Type.String()),
    callbackUrlStatus: Type.Optional(Type.String()),
    callbackUrlMo: Type.Optional(Type.String()),
    href: Type.String(),
  },
  {
    $id: 'Message',
    additionalProperties: true,
    description: 'The send answer, the GET body and every webhook body; a field that is not set or not known is absent',
  },
);

export const MessageList = Type.Object({
  items: Type.Array(Type.Ref('Message')),
  page: Type.Integer(),
  pageSize: Type.Integer(),
});

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

export const ListQuery = Type.Object({
  ...PageQuery,
  startDate: Type.Optional(Type.String()),
  endDate: Type.Optional(Type.String()),
  'searchBy[direction]': Type.Optional(Type.String({ enum: ['MT', 'MO'] })),
  'searchBy[status.value]': Type.Optional(Type.String({ enum: [...MESSAGE_STATUSES] })),
  'searchBy[refClient]': Type.Optional(Type.String()),
  'searchBy[recipient.to]': Type.Optional(Type.String()),
  'searchBy[campaignId]': Type.Optional(Type.String()),
});

export const EventList = Type.Object({
  items: Type.Array(
    Type.Object({ eventId: Type.String(), kind: Type.String(), status: Type.String(), detail: Type.Optional(Type.String()), date: Type.String() }),
  ),
});

/** A message's events, for the SMS, RCS and voice `…/events` answers. */
export function eventList(events: MessageEventRow[]): Static<typeof EventList> {
  return { items: events.map((e) => ({ eventId: e.id, kind: e.kind, status: e.status, ...present('detail', e.detail), date: new Date(e.at).toISOString() })) };
}

const DEFAULT_LIST_WINDOW_MS = 10 * 86_400_000;

/** The channels a key may read messages of: its own, or its organisation's (of `type`, if given) for MANAGER/ADMIN keys. */
export async function readableChannelIds(services: Services, principal: Principal, type?: string): Promise<string[]> {
  if (!seesOrganisation(principal.credential.roles)) return [principal.channel.id];
  const channels = await services.tenancy.listChannels([principal.credential.organisationId]);
  return channels.filter((c) => type === undefined || c.type === type).map((c) => c.id);
}

export function dateParam(value: string | null | undefined, field: string): Date | null {
  if (value === undefined || value === null || value === '') return null;
  return parseApiDate(value) ?? fail('INVALID_DATE', `${field}: "${value}" is not an ISO 8601 date`);
}

type ListQueryT = Static<typeof ListQuery>;

/** Shared by the SMS, RCS and voice listings. */
export async function listMessagesFor(
  services: Services,
  req: FastifyRequest,
  principal: Principal,
  type: string,
  query: ListQueryT,
  extraFilter: { campaignId?: string; channelIds?: string[] } = {},
) {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 10;
  const now = Date.now();
  const end = dateParam(query.endDate, 'query.endDate')?.getTime() ?? now + 1;
  const start = dateParam(query.startDate, 'query.startDate')?.getTime() ?? Math.min(end, now) - DEFAULT_LIST_WINDOW_MS;
  if (start > end) fail('INVALID_DATE', 'query.startDate: must not be after endDate');
  const recipient = query['searchBy[recipient.to]'];
  const rows = await services.messaging.list({
    channelIds: extraFilter.channelIds ?? (await readableChannelIds(services, principal)),
    type,
    direction: query['searchBy[direction]'] ?? (extraFilter.campaignId ? undefined : 'MT'),
    status: query['searchBy[status.value]'],
    refClient: query['searchBy[refClient]'],
    recipient: recipient ? normaliseRecipient(recipient, 'query.searchBy[recipient.to]') : undefined,
    campaignId: extraFilter.campaignId ?? query['searchBy[campaignId]'],
    from: start,
    to: end,
    offset: (page - 1) * pageSize,
    limit: pageSize,
  });
  return { items: await renderMessages(services, req, rows), page, pageSize };
}

export async function renderMessages(services: Services, req: FastifyRequest, rows: MessageRow[]) {
  const base = baseUrl(services, req);
  return Promise.all(rows.map(async (m) => messageObject(m, await services.messaging.channel(m.channel_id), base)));
}

export async function renderMessage(services: Services, req: FastifyRequest, m: MessageRow) {
  return messageObject(m, await services.messaging.channel(m.channel_id), baseUrl(services, req));
}

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
