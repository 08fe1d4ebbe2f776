import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { omitNulls, present } from '../../../domain/absent.ts';
import { iso } from '../../../domain/dates.ts';
import { fail, underField } from '../../../core/errors.ts';
import { CampaignCsvError, csvRecipients } from '../../../domain/campaign-csv.ts';
import { CsvError, parseCsv } from '../../../domain/csv.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import {
  type Campaign,
  type CampaignRecipient,
  type CampaignBodies,
  type CampaignMessages,
  campaignState,
  type CampaignType,
  MAX_CAMPAIGN_RECIPIENTS,
  type SendIntoCampaign,
} from '../../../core/campaigns/service.ts';
import type { Services } from '../../../core/services.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { MessageRow } from '../../../core/types.ts';
import { assertOwnChannel, authorize, baseUrl } from '../access.ts';
import { sendDateParam } from '../dates.ts';
import { coreErrorPayload } from '../errors.ts';
import { answerSend } from '../idempotency.ts';
import { errorResponses, Nullable, PageQuery, pageItems } from '../schemas.ts';
import { ChannelRef, channelRef } from '../views.ts';
import { dateParam, ListQuery, listMessagesFor, MessageList, readableChannelIds, renderMessage } from '../messages.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));

/** What the SMS and RCS campaign trees do differently. */
export interface CampaignApi<T extends CampaignType> {
  type: T;
  /** `/sms/v1`, `/rcs/v1`. */
  prefix: string;
  tags: string[];
  /** The fields of a campaign's message beside `recipients` and `refClient` (body, from, sentDate, callbacks…). */
  messageFields: Record<string, TSchema>;
  /** The campaign's message from those fields of a request. */
  message(body: Record<string, unknown>): CampaignMessages[T];
  /** What a campaign's `body` may be changed to. */
  body: TSchema;
  /** The body of `POST …/campaigns/{campaignId}/messages`: one message, as the type's own send takes it. */
  sendBody: TSchema;
  /** Sends the message a request describes, on the key's channel, into the campaign. */
  send(
    req: FastifyRequest,
    principal: Principal,
    campaign: { campaignId: string; defaultSendAt: number | null },
    afterInsert: NonNullable<PreparedMessage['afterInsert']>,
  ): Promise<MessageRow>;
}

const CampaignView = Type.Object({
  campaignId: Type.String(),
  channel: ChannelRef,
  status: Type.String({
    enum: ['SCHEDULED', 'SENT', 'CANCELLED'],
    description: 'SCHEDULED until its sentDate (it may be changed or cancelled until then), then SENT; or CANCELLED',
  }),
  refClient: Type.Optional(Type.String()),
  sentDate: Type.String(),
  creationDate: Type.String(),
  cancellationDate: Type.Optional(Type.String()),
  body: Type.Object({}, { additionalProperties: true, description: 'The body its messages were sent with' }),
  recipients: Type.Integer({ description: 'Recipients asked for, messages added later included' }),
  counts: Type.Object({
    accepted: Type.Integer(),
    rejected: Type.Integer({ description: 'Recipients refused at the request (see `errors`)' }),
    byStatus: Type.Record(Type.String(), Type.Integer()),
    clicks: Type.Integer({ description: 'Clicks on the short links of its messages (channels with shortLinks)' }),
    links: Type.Integer({ description: 'Short links its messages carry (one per long URL per message)' }),
    clickedLinks: Type.Integer({ description: 'Of those, the links clicked at least once' }),
  }),
  href: Type.String(),
});

/** The answer of a campaign's creation: the campaign, and the recipients refused at the request. */
const CreatedCampaignView = Type.Object({
  ...CampaignView.properties,
  errors: Type.Array(Type.Object({ index: Type.Integer(), to: Type.String(), errorCode: Type.String(), detail: Type.String() }), {
    description: 'The recipients refused, each with why (empty when none was)',
  }),
});

const CampaignListQuery = Type.Object({
  ...PageQuery,
  startDate: Type.Optional(Type.String({ description: 'Created at or after (ISO 8601)' })),
  endDate: Type.Optional(Type.String({ description: 'Created before (ISO 8601)' })),
  'searchBy[refClient]': Type.Optional(Type.String()),
});

const ChannelParams = Type.Object({ channelId: Type.String({ maxLength: 64 }) });
const CampaignParams = Type.Object({ campaignId: Type.String({ maxLength: 64 }) });
const ChannelCampaignParams = Type.Object({ channelId: Type.String({ maxLength: 64 }), campaignId: Type.String({ maxLength: 64 }) });

/** A campaign's recipients: its `recipients`, or the rows of its `csv` — exactly one of the two. */
export function requestRecipients(body: {
  recipients?: Array<{ to: string; refClient?: string | null; ref_client?: string | null; values?: Record<string, string> }>;
  csv?: string;
}): CampaignRecipient[] {
  if (body.recipients !== undefined && body.csv !== undefined) fail('INVALID_REQUEST', 'give recipients or csv, not both', 'csv');
  if (body.csv === undefined) {
    return (body.recipients ?? fail('INVALID_REQUEST', 'recipients or csv is required', 'recipients')).map((r) => ({
      to: r.to,
      refClient: r.refClient ?? r.ref_client,
      ...(r.values && { values: r.values }),
    }));
  }
  try {
    return csvRecipients(parseCsv(body.csv));
  } catch (err) {
    if (err instanceof CsvError || err instanceof CampaignCsvError) fail('INVALID_REQUEST', err.message, 'csv');
    throw err;
  }
}

const chain =
  (first: NonNullable<PreparedMessage['afterInsert']>, then?: PreparedMessage['afterInsert']): NonNullable<PreparedMessage['afterInsert']> =>
  async (db, row) => {
    await first(db, row);
    if (then) await then(db, row);
  };

/**
 * The smsmode campaign tree of one message type, under `{prefix}/campaigns` (the key's channel, or its
 * organisation's channels for MANAGER and ADMIN keys) and `{prefix}/channels/{channelId}/campaigns` (only the key's
 * own channel: any other id is 403): create and list campaigns; read, change (while scheduled) and cancel one; send
 * more messages into one and list its messages.
 */
export function campaignRoutes<T extends CampaignType>(app: FastifyInstance, services: Services, api: CampaignApi<T>): void {
  const { campaigns } = services;
  const { tags, prefix, type } = api;
  const security = [{ apiKey: [] }];
  const noun = type === 'SMS' ? 'SMS' : 'RCS';

  const CampaignBody = Type.Object({
    recipients: Type.Optional(
      Type.Array(
        Type.Object({
          to: Type.String({ minLength: 1, maxLength: 32 }),
          refClient: OptionalString(),
          ref_client: OptionalString(),
          values: Type.Optional(
            Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 1000 }), {
              description: "Ours: this recipient's values of the template's variables",
            }),
          ),
        }),
        { minItems: 1, maxItems: MAX_CAMPAIGN_RECIPIENTS },
      ),
    ),
    csv: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Ours, instead of recipients: a CSV file with a header — a number column (number, msisdn, to, phone…), an optional refClient column, and every other column the value of the template variable its header names',
      }),
    ),
    refClient: OptionalString(),
    ref_client: OptionalString({ description: 'Alias of refClient' }),
    ...api.messageFields,
  });
  type CampaignBodyT = Static<typeof CampaignBody>;

  const CampaignPatch = Type.Object(
    {
      sentDate: Type.Optional(Type.String({ minLength: 1, description: 'ISO 8601: the new send time of all its scheduled messages' })),
      refClient: OptionalString({ description: 'Null or empty removes it' }),
      ref_client: OptionalString({ description: 'Alias of refClient' }),
      body: Type.Optional(api.body),
    },
    { description: 'What to change; what is absent stays' },
  );
  type CampaignPatchT = Static<typeof CampaignPatch>;

  /** The channels a request reaches: on a channel path only the key's own one. */
  const scope = async (req: FastifyRequest, principal: Principal): Promise<string[]> => {
    const { channelId } = req.params as { channelId?: string };
    if (channelId === undefined) return readableChannelIds(services, principal, type);
    assertOwnChannel(principal, channelId);
    return [principal.channel.id];
  };

  const view = async (req: FastifyRequest, { campaign, counts, clicks, links }: Campaign, errors?: Static<typeof CreatedCampaignView>['errors']) => {
    const channel = await services.messaging.channel(campaign.channel_id);
    const accepted = Object.values(counts).reduce((a, b) => a + b, 0);
    return {
      campaignId: campaign.id,
      channel: channelRef(channel),
      status: campaignState(campaign, Date.now()),
      ...present('refClient', campaign.ref_client),
      sentDate: iso(campaign.send_at),
      creationDate: iso(campaign.created_at),
      ...present('cancellationDate', campaign.cancelled_at === null ? null : iso(campaign.cancelled_at)),
      body: omitNulls(JSON.parse(campaign.body) as Record<string, unknown>),
      recipients: campaign.recipients,
      counts: { accepted, rejected: Math.max(0, campaign.recipients - accepted), byStatus: counts, clicks, links: links.links, clickedLinks: links.clicked },
      ...(errors ? { errors } : {}),
      href: `${baseUrl(services, req)}${prefix}/campaigns/${campaign.id}`,
    };
  };

  const paths = (tail: string) => [
    { url: `${prefix}${tail}`, onChannel: false },
    { url: `${prefix}/channels/:channelId${tail}`, onChannel: true },
  ];
  const onThisChannel = (onChannel: boolean) => (onChannel ? ' (the key’s own channel; any other channel id is 403)' : '');

  for (const { url, onChannel } of paths('/campaigns')) {
    app.post(
      url,
      {
        bodyLimit: 8 * 1024 * 1024,
        schema: {
          tags,
          security,
          summary: `Send one ${noun} message to each of up to 10,000 recipients${onThisChannel(onChannel)}`,
          description:
            'Each recipient is validated and billed on its own; bad recipients are reported in `errors` and the others go. ' +
            'A future sentDate schedules the campaign: until then it can be changed (PATCH) or cancelled (DELETE).',
          ...(onChannel && { params: ChannelParams }),
          body: CampaignBody,
          response: { 201: CreatedCampaignView, ...errorResponses(400, 401, 403, 413, 415) },
        },
      },
      async (req, reply) => {
        const principal = await authorize(services, req, 'messages:send', type);
        if (onChannel) assertOwnChannel(principal, (req.params as { channelId: string }).channelId);
        const body = req.body as CampaignBodyT;
        const result = await underField('body.', async () =>
          campaigns.create(type, principal.channel, {
            recipients: requestRecipients(body),
            refClient: body.refClient ?? body.ref_client,
            message: api.message(body),
          }),
        );
        const errors = result.errors.map(({ index, to, error }) => {
          const { errorCode, detail } = coreErrorPayload(error.under('body.'));
          return { index, to, errorCode, detail };
        });
        return reply.code(201).send(await view(req, await campaigns.get(result.campaignId, [principal.channel.id]), errors));
      },
    );

    app.get(
      url,
      {
        schema: {
          tags,
          security,
          summary: `List ${noun} campaigns, newest first${onThisChannel(onChannel)}`,
          ...(onChannel && { params: ChannelParams }),
          querystring: CampaignListQuery,
          response: { 200: pageItems(CampaignView), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:read', type);
        const channelIds = await scope(req, principal);
        const q = req.query as Static<typeof CampaignListQuery>;
        const page = q.page ?? 1;
        const pageSize = q.pageSize ?? 10;
        const list = await campaigns.list({
          channelIds,
          from: dateParam(q.startDate, 'query.startDate')?.getTime(),
          to: dateParam(q.endDate, 'query.endDate')?.getTime(),
          refClient: q['searchBy[refClient]'],
          offset: (page - 1) * pageSize,
          limit: pageSize,
        });
        return { items: await Promise.all(list.map((c) => view(req, c))), page, pageSize };
      },
    );
  }

  for (const { url, onChannel } of paths('/campaigns/:campaignId')) {
    const params = onChannel ? ChannelCampaignParams : CampaignParams;
    app.get(
      url,
      {
        schema: {
          tags,
          security,
          summary: `Read a ${noun} campaign with its counts per status${onThisChannel(onChannel)}`,
          params,
          response: { 200: CampaignView, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:read', type);
        return view(req, await campaigns.get((req.params as { campaignId: string }).campaignId, await scope(req, principal)));
      },
    );

    app.patch(
      url,
      {
        schema: {
          tags,
          security,
          summary: `Change a scheduled ${noun} campaign: its sentDate, refClient or body${onThisChannel(onChannel)}`,
          description:
            'All or nothing, and only before its sentDate (409 once it started sending, or when cancelled). A new sentDate ' +
            'moves every scheduled message of the campaign; a new body is priced again: the difference is charged or ' +
            'refunded per message (409.002 when the balance does not cover it).',
          params,
          body: CampaignPatch,
          response: { 200: CampaignView, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:send', type);
        const channelIds = await scope(req, principal);
        const body = req.body as CampaignPatchT;
        const refClient = 'refClient' in body ? body.refClient : 'ref_client' in body ? body.ref_client : undefined;
        const changed = await underField('body.', () =>
          campaigns.change<T>((req.params as { campaignId: string }).campaignId, channelIds, {
            ...(body.sentDate !== undefined && { sentDate: sendDateParam(body.sentDate, 'body.sentDate')! }),
            ...(refClient !== undefined && { refClient }),
            ...(body.body !== undefined && { body: body.body as CampaignBodies[T] }),
          }),
        );
        return view(req, changed);
      },
    );

    app.delete(
      url,
      {
        schema: {
          tags,
          security,
          summary: `Cancel a scheduled ${noun} campaign: its scheduled messages are CANCELLED and refunded${onThisChannel(onChannel)}`,
          params,
          response: { 200: CampaignView, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:send', type);
        return view(req, await campaigns.cancel((req.params as { campaignId: string }).campaignId, await scope(req, principal)));
      },
    );
  }

  for (const { url, onChannel } of paths('/campaigns/:campaignId/messages')) {
    const params = onChannel ? ChannelCampaignParams : CampaignParams;
    app.post(
      url,
      {
        schema: {
          tags,
          security,
          summary: `Send one more ${noun} message as part of a campaign${onThisChannel(onChannel)}`,
          description:
            'The message object of the send (201), with its campaignId; the campaign counts it. Without a sentDate it ' +
            'goes at the campaign’s while that is ahead. Not into a cancelled campaign (409). Supports the Idempotency-Key header.',
          params,
          body: api.sendBody,
          response: { 201: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (req, reply) => {
        const principal = await authorize(services, req, 'messages:send', type);
        const channelIds = await scope(req, principal);
        const { campaignId } = req.params as { campaignId: string };
        const into: SendIntoCampaign = (campaign, afterInsert) => api.send(req, principal, campaign, afterInsert);
        return answerSend(services, req, reply, `${type.toLowerCase()}-campaign:${campaignId}`, principal.channel, async (idempotent) => {
          const m = await campaigns.addMessage(campaignId, principal.channel, channelIds, (campaign, afterInsert) =>
            into(campaign, chain(afterInsert, idempotent)),
          );
          return renderMessage(services, req, m);
        });
      },
    );

    app.get(
      url,
      {
        schema: {
          tags,
          security,
          summary: `List a ${noun} campaign's messages${onThisChannel(onChannel)}`,
          params,
          querystring: ListQuery,
          response: { 200: MessageList, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:read', type);
        const { campaignId } = req.params as { campaignId: string };
        const { campaign } = await campaigns.get(campaignId, await scope(req, principal));
        const query = req.query as Static<typeof ListQuery>;
        return listMessagesFor(
          services,
          req,
          principal,
          type,
          { ...query, startDate: query.startDate ?? iso(campaign.created_at - 1) },
          { campaignId, channelIds: [campaign.channel_id] },
        );
      },
    );
  }
}
