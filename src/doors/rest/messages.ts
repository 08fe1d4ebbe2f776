import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { parseApiDate } from '../../domain/dates.ts';
import { MESSAGE_STATUSES } from '../../domain/status.ts';
import { CHANNEL_FLOWS, CHANNEL_TYPES, seesOrganisation } from '../../domain/tenancy.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import type { Services } from '../../core/services.ts';
import { fail } from '../../core/errors.ts';
import { normaliseRecipient } from '../../core/messaging/prepare.ts';
import { messageObject } from '../../core/messaging/view.ts';
import type { MessageEventRow, MessageRow } from '../../core/types.ts';
import { present } from '../../domain/absent.ts';
import { baseUrl } from './access.ts';
import { PageQuery } from './schemas.ts';

/** The message object as REST answers it, and what every message route shares: listing, events, rendering. */
export const MessageSchema = Type.Object(
  {
    messageId: Type.String({ format: 'uuid' }),
    acceptedAt: Type.String(),
    sentDate: Type.String(),
    campaignId: Type.Optional(Type.String()),
    originMessageId: Type.Optional(Type.String()),
    channel: Type.Object({
      channelId: Type.String(),
      name: Type.String(),
      type: Type.String({ enum: [...CHANNEL_TYPES] }),
      flow: Type.String({ enum: [...CHANNEL_FLOWS] }),
    }),
    type: Type.String({ enum: [...CHANNEL_TYPES] }),
    direction: Type.String({ enum: ['MT', 'MO'] }),
    recipient: Type.Object({ to: Type.String() }),
    from: Type.Optional(Type.String()),
    body: Type.Object({}, { additionalProperties: true }),
    contentErasedAt: Type.Optional(
      Type.String({ description: "When its content was erased (the organisation's content retention or an erasure request): its body is empty" }),
    ),
    price: Type.Optional(Type.Object({ amount: Type.Number(), currency: Type.String(), kind: Type.Optional(Type.String()) })),
    status: Type.Optional(
      Type.Object({
        value: Type.String({ enum: [...MESSAGE_STATUSES] }),
        deliveryDate: Type.String(),
        detail: Type.Optional(Type.String({ description: 'Why, for a message that failed or was cancelled' })),
        lookup: Type.Optional(Type.Object({ mccMnc: Type.String(), country: Type.Optional(Type.String()), network: Type.Optional(Type.String()) })),
      }),
    ),
    refClient: Type.Optional(Type.String()),
    callbackUrlStatus: Type.Optional(Type.String()),
    callbackUrlMo: Type.Optional(Type.String()),
    href: Type.String(),
    deferredUntil: Type.Optional(
      Type.String({ description: "Sent outside the organisation's marketing window: when it goes (the window's opening plus its place on the ramp)" }),
    ),
    windowOverride: Type.Optional(Type.Boolean({ description: 'Sent outside the marketing window on purpose (`windowOverride` at send)' })),
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

export type ListQueryT = Static<typeof ListQuery>;

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
