import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { CONSUMPTION_TYPES, type ConsumptionType, defaultConsumptionWindow, PERIOD_TYPES, type PeriodType } from '../../../domain/consumption-periods.ts';
import { parseDay } from '../../../domain/dates.ts';
import { toEuros } from '../../../domain/money.ts';
import { seesOrganisation } from '../../../domain/tenancy.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { ConsumptionRecord } from '../../../core/billing/consumption.ts';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import { authorize, baseUrl } from '../access.ts';
import { omitNulls } from '../../../domain/absent.ts';
import { errorResponses, IdParams, Money, PageQuery, pageItems, Uuid } from '../schemas.ts';
import { ChannelRef, channelRef } from '../views.ts';
import { reachableChannel } from './commons.ts';

const Day = Type.String({ description: 'YYYY-MM-DD (UTC)', examples: ['2024-05-01'] });

const ConsumptionFilters = {
  startDate: Type.Optional(Day),
  endDate: Type.Optional(Day),
  'searchBy[periodType]': Type.Optional(Type.String({ enum: [...PERIOD_TYPES], default: 'MONTH' })),
  'searchBy[channel.type]': Type.Optional(Type.String({ enum: [...CONSUMPTION_TYPES], default: 'SMS' })),
  ...PageQuery,
};
const ConsumptionQuery = Type.Object({ ...ConsumptionFilters, 'searchBy[channel.channelId]': Type.Optional(Uuid) });
const ChannelConsumptionQuery = Type.Object(ConsumptionFilters);

const NetworkLookupView = Type.Object(
  {
    mccMnc: Type.Optional(Type.String()),
    country: Type.Optional(Type.String()),
    network: Type.Optional(Type.String()),
  },
  { description: 'The destination network; a field is absent when it is not known' },
);

export const ConsumptionView = Type.Object(
  {
    consumptionId: Type.String({ description: 'Stable for the same organisation, channel, type and period' }),
    type: Type.String({ enum: [...CONSUMPTION_TYPES] }),
    periodType: Type.String({ enum: [...PERIOD_TYPES] }),
    startDate: Type.String({ description: 'First day of the period (UTC)' }),
    endDate: Type.String({ description: 'Last day of the period (UTC)' }),
    quantity: Type.Integer({ description: 'Billed units (SMS parts) of charged, not refunded messages' }),
    price: Money,
    channel: ChannelRef,
    items: Type.Array(
      Type.Object({
        quantity: Type.Integer(),
        price: Money,
        lookup: NetworkLookupView,
        statuses: Type.Array(Type.Object({ value: Type.String(), quantity: Type.Integer({ description: 'Messages' }) })),
      }),
      { description: 'Breakdown by destination network' },
    ),
    priceKinds: Type.Array(
      Type.Object({
        kind: Type.String({ description: 'SMS, LOOKUP, VOICE; RCS: BASIC, SINGLE or CONVERSATION' }),
        quantity: Type.Integer({ description: 'Billed units' }),
        messages: Type.Integer(),
        price: Money,
      }),
      { description: 'Breakdown by price kind' },
    ),
    clicks: Type.Integer({ description: "Clicks in the period on the short links of the channel's messages (SMS channels with shortLinks)" }),
    href: Type.String(),
  },
  { description: 'What a channel consumed over one day or one calendar month (UTC)' },
);

export function consumptionView(r: ConsumptionRecord, base: string): Static<typeof ConsumptionView> {
  return {
    consumptionId: r.consumptionId,
    type: r.type,
    periodType: r.periodType,
    startDate: r.startDate,
    endDate: r.endDate,
    quantity: r.quantity,
    price: { amount: toEuros(r.amount), currency: 'EUR' },
    channel: channelRef(r.channel),
    items: r.items.map((i) => ({
      quantity: i.quantity,
      price: { amount: toEuros(i.amount), currency: 'EUR' },
      lookup: omitNulls(i.lookup),
      statuses: i.statuses,
    })),
    priceKinds: r.priceKinds.map((k) => ({
      kind: k.kind,
      quantity: k.quantity,
      messages: k.messages,
      price: { amount: toEuros(k.amount), currency: 'EUR' },
    })),
    clicks: r.clicks,
    href: `${base}/commons/v1/channels/${r.channel.id}/consumptions/${r.consumptionId}`,
  };
}

type Filters = Static<typeof ChannelConsumptionQuery>;

function day(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  return parseDay(value) ?? fail('INVALID_DATE', `query.${field}: must be a date written YYYY-MM-DD`);
}

/** The query's window, period type, type and page; 400.007 for a bad or reversed window. */
function filtersOf(q: Filters, now = Date.now()) {
  const defaults = defaultConsumptionWindow(now);
  const startDate = day(q.startDate, 'startDate') ?? defaults.startDate;
  const endDate = day(q.endDate, 'endDate') ?? (q.startDate !== undefined && startDate > defaults.endDate ? startDate : defaults.endDate);
  if (startDate > endDate) fail('INVALID_DATE', `query.startDate: ${startDate} is after endDate ${endDate}`);
  const page = q.page ?? 1;
  const pageSize = q.pageSize ?? 10;
  return {
    startDate,
    endDate,
    periodType: (q['searchBy[periodType]'] ?? 'MONTH') as PeriodType,
    type: (q['searchBy[channel.type]'] ?? 'SMS') as ConsumptionType,
    page,
    pageSize,
    offset: (page - 1) * pageSize,
    limit: pageSize,
  };
}

/** The channels a principal's consumption covers: all of its organisation's (MANAGER, ADMIN) or its own (USER). */
async function channelScope(services: Services, principal: Principal, channelId: string | undefined): Promise<string[] | null> {
  if (channelId !== undefined) return [(await reachableChannel(services, principal, channelId)).id];
  return seesOrganisation(principal.credential.roles) ? null : [principal.channel.id];
}

export function consumptionRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Commons'];
  const security = [{ apiKey: [] }];

  const answer = async (req: FastifyRequest, principal: Principal, q: Filters, channelId: string | undefined) => {
    const f = filtersOf(q);
    const records = await services.consumption.list({
      organisationId: principal.credential.organisationId,
      channelIds: await channelScope(services, principal, channelId),
      type: f.type,
      periodType: f.periodType,
      startDate: f.startDate,
      endDate: f.endDate,
      offset: f.offset,
      limit: f.limit,
    });
    const base = baseUrl(services, req);
    return { items: records.map((r) => consumptionView(r, base)), page: f.page, pageSize: f.pageSize };
  };

  app.get(
    '/commons/v1/consumptions',
    {
      schema: {
        tags,
        security,
        summary: 'Consumption per channel and period (default: monthly SMS totals of the last 3 months)',
        description:
          'A MANAGER or ADMIN key sees every channel of its organisation, a USER key its own channel. Periods are UTC ' +
          'days or calendar months; every period overlapping [startDate, endDate] is returned whole, newest first.',
        querystring: ConsumptionQuery,
        response: { 200: pageItems(ConsumptionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'consumption:read');
      const q = req.query as Static<typeof ConsumptionQuery>;
      return answer(req, principal, q, q['searchBy[channel.channelId]']);
    },
  );

  app.get(
    '/commons/v1/channels/:id/consumptions',
    {
      schema: {
        tags,
        security,
        summary: "A channel's consumption per period",
        params: IdParams,
        querystring: ChannelConsumptionQuery,
        response: { 200: pageItems(ConsumptionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'consumption:read');
      return answer(req, principal, req.query as Filters, (req.params as { id: string }).id);
    },
  );

  app.get(
    '/commons/v1/channels/:id/consumptions/:consumptionId',
    {
      schema: {
        tags,
        security,
        summary: 'One consumption record',
        params: Type.Object({ id: Uuid, consumptionId: Uuid }),
        response: { 200: ConsumptionView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'consumption:read');
      const { id, consumptionId } = req.params as { id: string; consumptionId: string };
      const channel = await reachableChannel(services, principal, id);
      const record = await services.consumption.find(principal.credential.organisationId, channel.id, consumptionId);
      if (!record) fail('NOT_FOUND', `consumption ${consumptionId} not found`);
      return consumptionView(record, baseUrl(services, req));
    },
  );
}
