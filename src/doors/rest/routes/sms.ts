import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { parseApiDate } from '../../../core/domain/dates.ts';
import { MESSAGE_STATUSES } from '../../../core/domain/status.ts';
import { seesOrganisation } from '../../../core/domain/tenancy.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { fail, underField } from '../../../core/errors.ts';
import { coreErrorPayload } from '../errors.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import { normaliseRecipient } from '../../../core/messaging/sms.ts';
import { messageObject } from '../../../core/messaging/view.ts';
import type { MessageRow } from '../../../core/types.ts';
import { authorize, baseUrl } from '../access.ts';
import { answerSend } from '../idempotency.ts';
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
    from: Nullable(Type.String()),
    body: Type.Object({}, { additionalProperties: true }),
    price: Type.Optional(Type.Object({ amount: Type.Number(), currency: Type.String(), kind: Type.Optional(Type.String()) })),
    status: Type.Optional(
      Type.Object({
        value: Type.String(),
        deliveryDate: Type.String(),
        detail: Nullable(Type.String()),
        lookup: Type.Optional(
          Type.Object({ mccMnc: Type.String(), country: Nullable(Type.String()), network: Nullable(Type.String()) }),
        ),
      }),
    ),
    refClient: Nullable(Type.String()),
    callbackUrlStatus: Nullable(Type.String()),
    callbackUrlMo: Nullable(Type.String()),
    href: Type.String(),
  },
  { $id: 'Message', additionalProperties: true },
);

export const MessageList = Type.Object({
  items: Type.Array(Type.Ref('Message')),
  page: Type.Integer(),
  pageSize: Type.Integer(),
});

const SmsBody = Type.Object({
  text: Type.String({ minLength: 1 }),
  encoding: Type.Optional(Type.String({ enum: ['GSM7', 'UNICODE'] })),
  stop: Type.Optional(Type.Boolean()),
});

const SendSmsBody = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  body: SmsBody,
  from: OptionalString({ maxLength: 64 }),
  refClient: OptionalString(),
  ref_client: OptionalString({ description: 'Alias of refClient' }),
  sentDate: OptionalString({ description: 'ISO 8601; a future date schedules the message' }),
  callbackUrlStatus: OptionalString(),
  callbackUrlMo: OptionalString(),
});

const CampaignBody = Type.Object({
  recipients: Type.Array(
    Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }), refClient: OptionalString(), ref_client: OptionalString() }),
    { minItems: 1, maxItems: 10_000 },
  ),
  body: SmsBody,
  from: OptionalString({ maxLength: 64 }),
  refClient: OptionalString(),
  ref_client: OptionalString(),
  sentDate: OptionalString(),
  callbackUrlStatus: OptionalString(),
  callbackUrlMo: OptionalString(),
});

const CampaignView = Type.Object({
  campaignId: Type.String(),
  channel: Type.Object({ channelId: Type.String(), name: Type.String(), type: Type.String(), flow: Type.String() }),
  refClient: Nullable(Type.String()),
  sentDate: Type.String(),
  creationDate: Type.String(),
  recipients: Type.Integer(),
  counts: Type.Object({ accepted: Type.Integer(), rejected: Type.Integer(), byStatus: Type.Record(Type.String(), Type.Integer()) }),
  errors: Type.Optional(
    Type.Array(Type.Object({ index: Type.Integer(), to: Type.String(), errorCode: Type.String(), detail: Type.String() })),
  ),
  href: Type.String(),
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
    Type.Object({ eventId: Type.String(), kind: Type.String(), status: Type.String(), detail: Nullable(Type.String()), date: Type.String() }),
  ),
});

const DEFAULT_LIST_WINDOW_MS = 10 * 86_400_000;

/** The channels a key may read messages of: its own, or its organisation's for MANAGER/ADMIN keys. */
export async function readableChannelIds(services: Services, principal: Principal): Promise<string[]> {
  if (!seesOrganisation(principal.credential.roles)) return [principal.channel.id];
  return (await services.tenancy.listChannels([principal.credential.organisationId])).map((c) => c.id);
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
  extraFilter: { campaignId?: string } = {},
) {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 10;
  const now = Date.now();
  const end = dateParam(query.endDate, 'query.endDate')?.getTime() ?? now + 1;
  const start = dateParam(query.startDate, 'query.startDate')?.getTime() ?? Math.min(end, now) - DEFAULT_LIST_WINDOW_MS;
  if (start > end) fail('INVALID_DATE', 'query.startDate: must not be after endDate');
  const recipient = query['searchBy[recipient.to]'];
  const rows = await services.messaging.list({
    channelIds: await readableChannelIds(services, principal),
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

export function smsRoutes(app: FastifyInstance, services: Services): void {
  const { messaging } = services;
  const tags = ['SMS'];
  const security = [{ apiKey: [] }];
  app.addSchema(MessageSchema);

  const send = (req: FastifyRequest, reply: FastifyReply, principal: Principal) =>
    answerSend(services, req, reply, 'sms', principal.channel, (afterInsert) => sendOnce(req, principal, afterInsert));

  const sendOnce = async (req: FastifyRequest, principal: Principal, afterInsert?: PreparedMessage['afterInsert']) => {
    const body = req.body as Static<typeof SendSmsBody>;
    const m = await underField('body.', () => messaging.sendSms(principal.channel, {
      to: body.recipient.to,
      text: body.body.text,
      encoding: body.body.encoding as 'GSM7' | 'UNICODE' | undefined,
      stop: body.body.stop,
      from: body.from,
      refClient: body.refClient ?? body.ref_client,
      sentDate: dateParam(body.sentDate, 'body.sentDate'),
      callbackUrlStatus: body.callbackUrlStatus,
      callbackUrlMo: body.callbackUrlMo,
      source: 'REST',
    }, afterInsert));
    return renderMessage(services, req, m);
  };

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
      if ((req.params as { channelId: string }).channelId !== principal.channel.id) {
        fail('NOT_FOUND', 'channel not found for this key');
      }
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
      const events = await messaging.events((req.params as { id: string }).id, await readableChannelIds(services, principal), 'SMS');
      return { items: events.map((e) => ({ eventId: e.id, kind: e.kind, status: e.status, detail: e.detail, date: new Date(e.at).toISOString() })) };
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

  const campaignView = async (req: FastifyRequest, principal: Principal, campaignId: string, errors?: unknown[]) => {
    const { campaign, counts } = await messaging.campaign(campaignId, await readableChannelIds(services, principal));
    const channel = await messaging.channel(campaign.channel_id);
    const accepted = Object.values(counts).reduce((a, b) => a + b, 0);
    return {
      campaignId: campaign.id,
      channel: { channelId: channel.id, name: channel.name, type: channel.type, flow: channel.flow },
      refClient: campaign.ref_client,
      sentDate: new Date(campaign.send_at).toISOString(),
      creationDate: new Date(campaign.created_at).toISOString(),
      recipients: campaign.recipients,
      counts: { accepted, rejected: campaign.recipients - accepted, byStatus: counts },
      ...(errors ? { errors } : {}),
      href: `${baseUrl(services, req)}/sms/v1/campaigns/${campaign.id}`,
    };
  };

  app.post(
    '/sms/v1/campaigns',
    {
      bodyLimit: 8 * 1024 * 1024,
      schema: {
        tags,
        security,
        summary: 'Send one message to each of up to 10,000 recipients',
        description: 'Each recipient is validated and billed on its own; bad recipients are reported in `errors` and the others go.',
        body: CampaignBody,
        response: { 201: CampaignView, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      const body = req.body as Static<typeof CampaignBody>;
      const result = await underField('body.', () => messaging.sendCampaign(principal.channel, {
        recipients: body.recipients.map((r) => ({ to: r.to, refClient: r.refClient ?? r.ref_client })),
        refClient: body.refClient ?? body.ref_client,
        message: {
          text: body.body.text,
          encoding: body.body.encoding as 'GSM7' | 'UNICODE' | undefined,
          stop: body.body.stop,
          from: body.from,
          sentDate: dateParam(body.sentDate, 'body.sentDate'),
          callbackUrlStatus: body.callbackUrlStatus,
          callbackUrlMo: body.callbackUrlMo,
        },
      }));
      const errors = result.errors.map(({ index, to, error }) => {
        const { errorCode, detail } = coreErrorPayload(error.under('body.'));
        return { index, to, errorCode, detail };
      });
      return reply.code(201).send(await campaignView(req, principal, result.campaignId, errors));
    },
  );

  const CampaignParams = Type.Object({ id: Type.String() });
  app.get(
    '/sms/v1/campaigns/:id',
    { schema: { tags, security, summary: 'Read a campaign with its counts per status', params: CampaignParams, response: { 200: CampaignView, ...errorResponses(401, 403, 404) } } },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      return campaignView(req, principal, (req.params as { id: string }).id);
    },
  );

  app.get(
    '/sms/v1/campaigns/:id/messages',
    {
      schema: {
        tags,
        security,
        summary: "List a campaign's messages",
        params: CampaignParams,
        querystring: ListQuery,
        response: { 200: MessageList, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      const { id } = req.params as { id: string };
      const { campaign } = await messaging.campaign(id, await readableChannelIds(services, principal));
      const query = req.query as ListQueryT;
      return listMessagesFor(services, req, principal, 'SMS', { ...query, startDate: query.startDate ?? new Date(campaign.created_at - 1).toISOString() }, { campaignId: id });
    },
  );

  app.delete(
    '/sms/v1/campaigns/:id',
    { schema: { tags, security, summary: 'Cancel the scheduled messages of a campaign (refunded)', params: CampaignParams, response: { 200: CampaignView, ...errorResponses(401, 403, 404, 409) } } },
    async (req) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      const { id } = req.params as { id: string };
      await messaging.cancelCampaign(id, await readableChannelIds(services, principal));
      return campaignView(req, principal, id);
    },
  );
}
