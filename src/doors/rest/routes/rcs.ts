import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, type TObject, type TSchema, Type } from 'typebox';
import {
  RCS_BODY_TYPES,
  RCS_CARD_ORIENTATIONS,
  RCS_CARD_WIDTHS,
  RCS_LIMITS,
  RCS_MEDIA_HEIGHTS,
  RCS_SUGGESTION_TYPES,
  RCS_VALIDITY_UNITS,
  type RcsBody,
  type RcsValidity,
} from '../../../domain/rcs.ts';
import { toEuros } from '../../../domain/money.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import type { ConversationWithMessages } from '../../../core/rcs/service.ts';
import { normaliseRecipient } from '../../../core/messaging/prepare.ts';
import { present } from '../../../domain/absent.ts';
import type { MessageRow } from '../../../core/types.ts';
import { authorize, baseUrl } from '../access.ts';
import { sendDateParam } from '../dates.ts';
import { errorResponses, IdParams, Nullable, PageQuery } from '../schemas.ts';
import { campaignRoutes } from './campaigns.ts';
import { channelMessageRoutes } from './channel-messages.ts';
import { dateParam, readableChannelIds, renderMessages } from '../messages.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));
const Strict = { additionalProperties: false } as const;
const oneOf = (values: readonly string[]) => Type.String({ enum: [...values] });

/**
 * An object whose shape depends on its `type`: AJV checks only the variant the `type` names (if/then), so an error
 * names the field that is wrong in that variant instead of "matches none of the variants".
 */
export function tagged(variants: Record<string, TObject>, description: string): TSchema {
  const types = Object.keys(variants);
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    description,
    required: ['type'],
    properties: { type: { type: 'string', enum: types } },
    // oxlint-disable-next-line unicorn/no-thenable -- JSON Schema's if/then, read by the validator
    allOf: types.map((t) => ({ if: { properties: { type: { const: t } } }, then: variants[t] })),
  });
}

const suggestionFields = {
  text: Type.String({ minLength: 1, maxLength: RCS_LIMITS.suggestionText }),
  postbackData: Type.String({ maxLength: RCS_LIMITS.postbackData }),
};
const suggestion = (type: string, fields: Record<string, TSchema> = {}) => Type.Object({ type: Type.Literal(type), ...suggestionFields, ...fields }, Strict);

const Suggestion = tagged(
  {
    REPLY: suggestion('REPLY'),
    OPEN_URL: suggestion('OPEN_URL', { url: Type.String({ minLength: 1, maxLength: 2048 }) }),
    DIAL_PHONE: suggestion('DIAL_PHONE', { phoneNumber: Type.String({ minLength: 1, maxLength: 32 }) }),
    CREATE_CALENDAR_EVENT: suggestion('CREATE_CALENDAR_EVENT', {
      startTime: Type.String({ minLength: 1 }),
      endTime: Type.String({ minLength: 1 }),
      title: Type.String({ minLength: 1, maxLength: RCS_LIMITS.calendarTitle }),
      description: Type.Optional(Type.String({ maxLength: RCS_LIMITS.calendarDescription })),
    }),
    SHOW_LOCATION: suggestion('SHOW_LOCATION', {
      latitude: Type.Number({ minimum: -90, maximum: 90 }),
      longitude: Type.Number({ minimum: -180, maximum: 180 }),
      label: Type.Optional(Type.String({ maxLength: RCS_LIMITS.locationLabel })),
    }),
    REQUEST_LOCATION: suggestion('REQUEST_LOCATION'),
  },
  `A suggested reply or action: ${RCS_SUGGESTION_TYPES.join(', ')}`,
);

const suggestions = (max: number) => Type.Optional(Type.Array(Suggestion, { maxItems: max }));

const CardContent = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: RCS_LIMITS.cardTitle })),
    description: Type.Optional(Type.String({ maxLength: RCS_LIMITS.cardDescription })),
    media: Type.Optional(
      Type.Object({ fileUrl: Type.String({ minLength: 1, maxLength: RCS_LIMITS.fileUrl }), height: Type.Optional(oneOf(RCS_MEDIA_HEIGHTS)) }, Strict),
    ),
    suggestions: suggestions(RCS_LIMITS.cardSuggestions),
  },
  { ...Strict, description: 'A rich card: a title or media is required' },
);

/** A carousel card: the content object itself (smsmode's form), or wrapped as `{ content }`. */
const CarouselCard = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  if: { required: ['content'] },
  // oxlint-disable-next-line unicorn/no-thenable -- JSON Schema's if/then, read by the validator
  then: Type.Object({ content: CardContent }, Strict),
  else: CardContent,
});

export const RcsBodySchema = tagged(
  {
    TEXT: Type.Object(
      {
        type: Type.Literal('TEXT'),
        text: Type.String({ minLength: 1, maxLength: RCS_LIMITS.text }),
        suggestions: suggestions(RCS_LIMITS.messageSuggestions),
      },
      Strict,
    ),
    CARD: Type.Object(
      {
        type: Type.Literal('CARD'),
        content: CardContent,
        orientation: Type.Optional(oneOf(RCS_CARD_ORIENTATIONS)),
        suggestions: suggestions(RCS_LIMITS.messageSuggestions),
      },
      Strict,
    ),
    CAROUSEL: Type.Object(
      {
        type: Type.Literal('CAROUSEL'),
        contents: Type.Array(CarouselCard, { minItems: RCS_LIMITS.carouselMinCards, maxItems: RCS_LIMITS.carouselMaxCards }),
        cardWidth: Type.Optional(oneOf(RCS_CARD_WIDTHS)),
      },
      Strict,
    ),
    FILE: Type.Object(
      {
        type: Type.Literal('FILE'),
        fileUrl: Type.String({ minLength: 1, maxLength: RCS_LIMITS.fileUrl }),
        thumbnailUrl: Type.Optional(Type.String({ minLength: 1, maxLength: RCS_LIMITS.fileUrl })),
        filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        contentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      },
      Strict,
    ),
  },
  `The rich message: ${RCS_BODY_TYPES.join(', ')}`,
);

/** What an RCS message carries besides its recipient and reference (a campaign's messages share them). */
const RcsMessageFields = {
  body: RcsBodySchema,
  from: OptionalString({ maxLength: 64, description: "The agent; default the channel's defaultFromField" }),
  sentDate: OptionalString({ description: "ISO 8601; a future date schedules the message; without an offset it is read in the organisation's timeZone" }),
  validity: Type.Optional(
    Type.Object(
      { amount: Type.Integer({ minimum: 1 }), timeUnit: oneOf(Object.keys(RCS_VALIDITY_UNITS)) },
      { ...Strict, description: 'How long the message may wait for delivery: at most 15 days' },
    ),
  ),
  callbackUrlStatus: OptionalString(),
  callbackUrlMo: OptionalString(),
  fallback: Type.Optional(
    Type.Object(
      { text: Type.String({ minLength: 1 }), from: OptionalString({ maxLength: 64 }) },
      {
        ...Strict,
        description:
          "Tern's extension: an SMS sent through the channel's fallbackSmsChannelId when the recipient is not RCS-capable or the message is not delivered within its validity",
      },
    ),
  ),
};

export const SendRcsBody = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  refClient: OptionalString(),
  ref_client: OptionalString({ description: 'Alias of refClient' }),
  ...RcsMessageFields,
});

const CapabilityView = Type.Object({ msisdn: Type.String(), capable: Type.Boolean(), features: Type.Array(Type.String()) });

const ConversationView = Type.Object({
  conversationId: Type.String(),
  channel: Type.Object({ channelId: Type.String(), name: Type.String(), type: Type.String(), flow: Type.String() }),
  agent: Type.Optional(Type.String()),
  recipient: Type.Object({ to: Type.String() }),
  openedAt: Type.String(),
  expiresAt: Type.String(),
  status: Type.String({ enum: ['OPEN', 'CLOSED'] }),
  openedByMessageId: Type.Optional(Type.String()),
  price: Type.Object({ amount: Type.Number(), currency: Type.String(), kind: Type.String() }),
  messageCount: Type.Integer(),
  messages: Type.Array(Type.Ref('Message')),
  href: Type.String(),
});

const ConversationQuery = Type.Object({
  ...PageQuery,
  startDate: Type.Optional(Type.String()),
  endDate: Type.Optional(Type.String()),
  'searchBy[recipient.to]': Type.Optional(Type.String()),
  'searchBy[status]': Type.Optional(oneOf(['OPEN', 'CLOSED'])),
});

const DEFAULT_LIST_WINDOW_MS = 10 * 86_400_000;

type SendRcsBodyT = Static<typeof SendRcsBody>;

/** The message fields of an RCS request, as the RCS use cases take them. */
function rcsMessage(body: Omit<SendRcsBodyT, 'recipient' | 'refClient' | 'ref_client'>) {
  return {
    body: body.body as unknown as RcsBody,
    from: body.from,
    sentDate: sendDateParam(body.sentDate, 'body.sentDate'),
    validity: (body.validity as RcsValidity | undefined) ?? null,
    callbackUrlStatus: body.callbackUrlStatus,
    callbackUrlMo: body.callbackUrlMo,
    fallback: body.fallback ?? null,
  };
}

/** Sends the RCS message a request's body describes on the key's channel; into a campaign, at its time by default, when given. */
export function sendRcsRequest(
  services: Services,
  req: FastifyRequest,
  principal: Principal,
  afterInsert?: PreparedMessage['afterInsert'],
  campaign?: { campaignId: string; defaultSendAt: number | null },
): Promise<MessageRow> {
  const body = req.body as SendRcsBodyT;
  const message = rcsMessage(body);
  return underField('body.', () =>
    services.rcs.send(
      principal.channel,
      {
        ...message,
        to: body.recipient.to,
        refClient: body.refClient ?? body.ref_client,
        sentDate: message.sentDate ?? (campaign?.defaultSendAt ? new Date(campaign.defaultSendAt) : null),
        source: campaign ? 'CAMPAIGN' : 'REST',
        campaignId: campaign?.campaignId,
      },
      afterInsert,
    ),
  );
}

export function rcsRoutes(app: FastifyInstance, services: Services): void {
  const { messaging, rcs } = services;
  const tags = ['RCS'];
  const security = [{ apiKey: [] }];

  channelMessageRoutes(app, services, {
    type: 'RCS',
    prefix: '/rcs/v1',
    tags,
    noun: { bare: 'RCS message', one: 'an RCS message' },
    listSummary: 'List RCS messages, MT or MO (searchBy[direction]; MT by default, last 10 days by default)',
    send: {
      summary: 'Send an RCS message',
      description:
        'TEXT, CARD, CAROUSEL or FILE, with suggestions. Answers 201 with the message object once it is durably stored. ' +
        'A recipient that is not RCS-capable ends UNDELIVERABLE / NOT_RCS_CAPABLE at no charge, or, with `fallback`, ' +
        'UNDELIVERED / FALLBACK_SMS with the SMS in `fallbackMessageId`. `price.kind` is BASIC, SINGLE or CONVERSATION. ' +
        'Supports the Idempotency-Key header.',
      body: SendRcsBody,
      errors: [400, 401, 403, 409, 413, 415, 422],
      idempotencyScope: 'rcs',
      onChannel: true,
      message: (req, principal, afterInsert) => sendRcsRequest(services, req, principal, afterInsert),
    },
  });

  app.get(
    '/rcs/v1/capabilities/:msisdn',
    {
      schema: {
        tags,
        security,
        summary: 'Whether a number can receive RCS (Tern’s extension)',
        params: Type.Object({ msisdn: Type.String({ minLength: 1, maxLength: 32 }) }),
        response: { 200: CapabilityView, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      await authorize(services, req, 'messages:send', 'RCS');
      return rcs.capability((req.params as { msisdn: string }).msisdn, 'path.msisdn');
    },
  );

  const conversationView = async (req: FastifyRequest, c: ConversationWithMessages, now: number) => {
    const channel = await messaging.channel(c.conversation.channel_id);
    const charged = c.messages.reduce((sum, m) => sum + (m.direction === 'MT' ? m.charged : 0), 0);
    return {
      conversationId: c.conversation.id,
      channel: { channelId: channel.id, name: channel.name, type: channel.type, flow: channel.flow },
      ...present('agent', c.conversation.agent),
      recipient: { to: c.conversation.msisdn },
      openedAt: new Date(c.conversation.opened_at).toISOString(),
      expiresAt: new Date(c.conversation.expires_at).toISOString(),
      status: c.conversation.expires_at > now ? 'OPEN' : 'CLOSED',
      ...present('openedByMessageId', c.conversation.opened_by),
      price: { amount: toEuros(charged), currency: 'EUR', kind: 'CONVERSATION' },
      messageCount: c.messages.length,
      messages: await renderMessages(services, req, c.messages),
      href: `${baseUrl(services, req)}/rcs/v1/conversations/${c.conversation.id}`,
    };
  };

  app.get(
    '/rcs/v1/conversations',
    {
      schema: {
        tags,
        security,
        summary: 'List conversations opened by users (Tern’s extension), newest first, with their messages',
        description: 'A user’s MO opens a 24-hour conversation with the agent; agent messages sent within it are charged once, as CONVERSATION.',
        querystring: ConversationQuery,
        response: {
          200: Type.Object({ items: Type.Array(ConversationView), page: Type.Integer(), pageSize: Type.Integer() }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'RCS');
      const q = req.query as Static<typeof ConversationQuery>;
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 10;
      const now = Date.now();
      const end = dateParam(q.endDate, 'query.endDate')?.getTime() ?? now + 1;
      const start = dateParam(q.startDate, 'query.startDate')?.getTime() ?? Math.min(end, now) - DEFAULT_LIST_WINDOW_MS;
      if (start > end) fail('INVALID_DATE', 'query.startDate: must not be after endDate');
      const msisdn = q['searchBy[recipient.to]'];
      const list = await rcs.conversations(
        {
          channelIds: await readableChannelIds(services, principal),
          from: start,
          to: end,
          msisdn: msisdn ? normaliseRecipient(msisdn, 'query.searchBy[recipient.to]') : undefined,
          state: q['searchBy[status]'] as 'OPEN' | 'CLOSED' | undefined,
          page,
          pageSize,
        },
        now,
      );
      return { items: await Promise.all(list.map((c) => conversationView(req, c, now))), page, pageSize };
    },
  );

  app.get(
    '/rcs/v1/conversations/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read a conversation with its messages (Tern’s extension)',
        params: IdParams,
        response: { 200: ConversationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'RCS');
      const c = await rcs.conversation((req.params as { id: string }).id, await readableChannelIds(services, principal));
      return conversationView(req, c, Date.now());
    },
  );

  campaignRoutes(app, services, {
    type: 'RCS',
    prefix: '/rcs/v1',
    tags,
    messageFields: RcsMessageFields,
    message: (fields) => rcsMessage(fields as unknown as SendRcsBodyT),
    body: RcsBodySchema,
    sendBody: SendRcsBody,
    send: (req, principal, campaign, afterInsert) => sendRcsRequest(services, req, principal, afterInsert, campaign),
  });
}
