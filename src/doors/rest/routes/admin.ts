import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { parseEuros, toEuros } from '../../../domain/money.ts';
import { CHANNEL_FLOWS, CHANNEL_TYPES, ROLES } from '../../../domain/tenancy.ts';
import { callbackUrlProblem } from '../../../domain/urls.ts';
import type { Services } from '../../../core/services.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { ChannelPatch } from '../../../core/tenancy/service.ts';
import { baseUrl, requireAdmin } from '../access.ts';
import { errorResponses, IdParams, Nullable, PageQuery, pageItems } from '../schemas.ts';
import { ChannelView, CredentialView, channelView, credentialView, LedgerEntryView, ledgerEntryView, OrganisationView, organisationView } from '../views.ts';

const AmountInput = Type.Union([Type.Number(), Type.String()], { description: 'Decimal euros' });

const LocaleFields = {
  defaultCountry: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 8,
        description: 'ISO 3166 alpha-2 country (e.g. FR): national numbers (0612345678) are read in it; null: international numbers only',
      }),
    ),
  ),
  timeZone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone (default Europe/Paris) in which a sentDate without an offset is read' })),
};

const OrganisationCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  parentOrganisationId: Type.Optional(Nullable(Type.String())),
  parentBilling: Type.Optional(Type.Boolean()),
  monthlyConsumptionLimit: Type.Optional(Nullable(AmountInput)),
  ...LocaleFields,
});

const OrganisationPatch = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  state: Type.Optional(Type.String({ enum: ['ACTIVE', 'SUSPENDED'] })),
  monthlyConsumptionLimit: Type.Optional(Nullable(AmountInput)),
  ...LocaleFields,
  optOutShortCode: Type.Optional(Nullable(Type.String({ maxLength: 16, description: "Where recipients send STOP (3 to 8 digits); null: the platform's" }))),
  optOutText: Type.Optional(
    Nullable(Type.String({ maxLength: 64, description: 'The mention appended to marketing (must contain STOP); null: "STOP au" + the short code' })),
  ),
  contentRetentionDays: Type.Optional(
    Nullable(Type.Integer({ description: "Days its message texts are kept before they are erased (1 to 36500); null: the platform's" })),
  ),
});

const SenderId = Type.String({ minLength: 1, maxLength: 20 });

const ChannelFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  flow: Type.String({ enum: [...CHANNEL_FLOWS] }),
  defaultFromField: Type.Optional(Nullable(SenderId)),
  fromFieldList: Type.Optional(Type.Array(SenderId, { maxItems: 100 })),
  defaultCallbackUrlStatus: Type.Optional(Nullable(Type.String())),
  defaultCallbackUrlMo: Type.Optional(Nullable(Type.String())),
  dailyConsumptionLimit: Type.Optional(Nullable(AmountInput)),
  monthlyConsumptionLimit: Type.Optional(Nullable(AmountInput)),
  fallbackSmsChannelId: Type.Optional(Nullable(Type.String())),
  shortLinks: Type.Optional(Type.Boolean({ description: 'replace long URLs in its SMS by tracked short links (needs TERN_SHORT_LINK_BASE)' })),
};

const ChannelCreate = Type.Object({ ...ChannelFields, type: Type.String({ enum: [...CHANNEL_TYPES] }) });
const ChannelPatchBody = Type.Partial(Type.Object(ChannelFields));

const CredentialCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  roles: Type.Array(Type.String({ enum: [...ROLES] }), { minItems: 1, maxItems: ROLES.length }),
});

const CreditBody = Type.Object({
  amount: AmountInput,
  reference: Type.Optional(Type.String({ maxLength: 140 })),
});

function limitMicros(value: number | string | null | undefined, field: string): number | null | undefined {
  if (value === undefined || value === null) return value;
  const parsed = parseEuros(value, { allowZero: true });
  if (!parsed.ok) fail('INVALID_AMOUNT', `${field}: ${parsed.reason}`);
  return parsed.micros;
}

/** Converts the channel fields of a request into a service patch, validating URLs and limits. */
export function channelPatchFrom(body: Partial<Static<typeof ChannelPatchBody>>): ChannelPatch {
  for (const field of ['defaultCallbackUrlStatus', 'defaultCallbackUrlMo'] as const) {
    const v = body[field];
    if (typeof v === 'string') {
      const problem = callbackUrlProblem(v);
      if (problem) fail('INVALID_REQUEST', `body.${field}: ${problem}`);
    }
  }
  const patch: ChannelPatch = {
    name: body.name,
    flow: body.flow as ChannelPatch['flow'],
    defaultFromField: body.defaultFromField,
    fromFieldList: body.fromFieldList,
    defaultCallbackUrlStatus: body.defaultCallbackUrlStatus,
    defaultCallbackUrlMo: body.defaultCallbackUrlMo,
    dailyLimit: limitMicros(body.dailyConsumptionLimit, 'body.dailyConsumptionLimit'),
    monthlyLimit: limitMicros(body.monthlyConsumptionLimit, 'body.monthlyConsumptionLimit'),
    fallbackSmsChannelId: body.fallbackSmsChannelId,
    shortLinks: body.shortLinks,
  };
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ChannelPatch;
}

const PriceItem = Type.Object({
  channelType: Type.String({ enum: ['SMS', 'RCS', 'VOICE', 'LOOKUP'] }),
  country: Type.String({ pattern: '^([A-Z]{2}|\\*)$', description: 'ISO 3166 alpha-2 code, or * for any other' }),
  kind: Type.Optional(Type.String({ description: 'SMS, LOOKUP, VOICE; RCS: BASIC, SINGLE or CONVERSATION' })),
  amount: AmountInput,
});
const PriceList = Type.Object({ items: Type.Array(PriceItem) });
const PriceListView = Type.Object({
  items: Type.Array(Type.Object({ channelType: Type.String(), country: Type.String(), kind: Type.String(), amount: Type.Number(), currency: Type.String() })),
});
const DEFAULT_KIND: Record<string, string> = { SMS: 'SMS', VOICE: 'VOICE', LOOKUP: 'LOOKUP' };

export function adminRoutes(app: FastifyInstance, services: Services): void {
  const { tenancy } = services;
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];

  app.addHook('onRequest', async (req) => {
    if (req.url.startsWith('/admin/')) await requireAdmin(services, req);
  });

  const orgView = async (id: string, base: string) =>
    organisationView(await tenancy.getOrganisation(id), await tenancy.organisationMonthlyConsumption(id), base);
  const chanView = async (id: string, base: string) => {
    const channel = await tenancy.getChannel(id);
    return channelView(channel, await tenancy.channelConsumption(id), base);
  };

  app.post(
    '/admin/v1/organisations',
    {
      schema: {
        tags,
        security,
        summary: 'Create an organisation',
        body: OrganisationCreate,
        response: { 201: OrganisationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const body = req.body as Static<typeof OrganisationCreate>;
      const org = await underField('body.', () =>
        tenancy.createOrganisation({
          name: body.name,
          parentOrganisationId: body.parentOrganisationId ?? null,
          parentBilling: body.parentBilling,
          monthlyLimit: limitMicros(body.monthlyConsumptionLimit, 'body.monthlyConsumptionLimit') ?? null,
          defaultCountry: body.defaultCountry,
          timeZone: body.timeZone,
        }),
      );
      return reply.code(201).send(organisationView(org, 0, baseUrl(services, req)));
    },
  );

  app.get(
    '/admin/v1/organisations',
    {
      schema: {
        tags,
        security,
        summary: 'List organisations',
        querystring: Type.Object(PageQuery),
        response: { 200: pageItems(OrganisationView), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const { page = 1, pageSize = 10 } = req.query as { page?: number; pageSize?: number };
      const orgs = await tenancy.listOrganisations({ offset: (page - 1) * pageSize, limit: pageSize });
      const base = baseUrl(services, req);
      const items = await Promise.all(orgs.map(async (o) => organisationView(o, await tenancy.organisationMonthlyConsumption(o.id), base)));
      return { items, page, pageSize };
    },
  );

  app.get(
    '/admin/v1/organisations/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read an organisation',
        params: IdParams,
        response: { 200: OrganisationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => orgView((req.params as { id: string }).id, baseUrl(services, req)),
  );

  app.patch(
    '/admin/v1/organisations/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Change an organisation (name, state, monthly limit, default country, time zone, opt-out mention)',
        params: IdParams,
        body: OrganisationPatch,
        response: { 200: OrganisationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof OrganisationPatch>;
      const monthlyLimit = limitMicros(body.monthlyConsumptionLimit, 'body.monthlyConsumptionLimit');
      await underField('body.', () =>
        tenancy.updateOrganisation(id, {
          name: body.name,
          state: body.state as 'ACTIVE' | 'SUSPENDED' | undefined,
          monthlyLimit,
          defaultCountry: body.defaultCountry,
          timeZone: body.timeZone,
          optOutShortCode: body.optOutShortCode,
          optOutText: body.optOutText,
          contentRetentionDays: body.contentRetentionDays,
        }),
      );
      return orgView(id, baseUrl(services, req));
    },
  );

  app.post(
    '/admin/v1/organisations/:id/channels',
    {
      schema: {
        tags,
        security,
        summary: 'Create a channel',
        params: IdParams,
        body: ChannelCreate,
        response: { 201: ChannelView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof ChannelCreate>;
      const patch = channelPatchFrom(body);
      const channel = await tenancy.createChannel(id, {
        ...patch,
        name: body.name,
        type: body.type as 'SMS',
        flow: body.flow as 'TRANSACTIONAL',
      });
      return reply.code(201).send(channelView(channel, { daily: 0, monthly: 0 }, baseUrl(services, req)));
    },
  );

  app.get(
    '/admin/v1/organisations/:id/channels',
    {
      schema: {
        tags,
        security,
        summary: "List an organisation's channels",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(ChannelView) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await tenancy.getOrganisation(id);
      const base = baseUrl(services, req);
      const channels = await tenancy.listChannels([id]);
      return {
        items: await Promise.all(channels.map(async (c) => channelView(c, await tenancy.channelConsumption(c.id), base))),
      };
    },
  );

  app.get(
    '/admin/v1/channels/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read a channel',
        params: IdParams,
        response: { 200: ChannelView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => chanView((req.params as { id: string }).id, baseUrl(services, req)),
  );

  app.patch(
    '/admin/v1/channels/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Change a channel (senders, default callback URLs, limits, fallback)',
        params: IdParams,
        body: ChannelPatchBody,
        response: { 200: ChannelView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await tenancy.updateChannel(id, channelPatchFrom(req.body as Static<typeof ChannelPatchBody>));
      return chanView(id, baseUrl(services, req));
    },
  );

  app.post(
    '/admin/v1/channels/:id/credentials',
    {
      schema: {
        tags,
        security,
        summary: 'Create an API key for a channel (its value is shown only in this answer)',
        params: IdParams,
        body: CredentialCreate,
        response: { 201: CredentialView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof CredentialCreate>;
      const channel = await tenancy.getChannel(id);
      const { credential, value } = await tenancy.createCredential(id, {
        name: body.name,
        roles: body.roles as ('ADMIN' | 'MANAGER' | 'USER' | 'MESSAGE')[],
      });
      return reply.code(201).send(credentialView(credential, channel, value));
    },
  );

  app.get(
    '/admin/v1/channels/:id/credentials',
    {
      schema: {
        tags,
        security,
        summary: "List a channel's API keys (without their values)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(CredentialView) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const channel = await tenancy.getChannel(id);
      const creds = await tenancy.listCredentials(id);
      return { items: creds.map((c) => credentialView(c, channel)) };
    },
  );

  app.delete(
    '/admin/v1/credentials/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Revoke an API key',
        params: IdParams,
        response: { 200: CredentialView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const credential = await tenancy.revokeCredential((req.params as { id: string }).id);
      return credentialView(credential, await tenancy.getChannel(credential.channelId));
    },
  );

  const priceView = () => ({
    items: services.messaging
      .prices()
      .sort((a, b) => `${a.channelType}${a.country}${a.kind}`.localeCompare(`${b.channelType}${b.country}${b.kind}`))
      .map((p) => ({ ...p, amount: toEuros(p.amount), currency: 'EUR' })),
  });

  app.get(
    '/admin/v1/prices',
    { schema: { tags, security, summary: 'The price list (euros per unit)', response: { 200: PriceListView, ...errorResponses(401, 403) } } },
    async () => priceView(),
  );

  app.put(
    '/admin/v1/prices',
    {
      schema: {
        tags,
        security,
        summary: 'Set prices (entries not listed are kept)',
        body: PriceList,
        response: { 200: PriceListView, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const body = req.body as Static<typeof PriceList>;
      const entries = body.items.map((item, i) => {
        const kind = item.kind ?? DEFAULT_KIND[item.channelType];
        if (!kind) fail('INVALID_REQUEST', `body.items[${i}].kind: required for ${item.channelType} prices`);
        if (item.channelType === 'RCS' && !['BASIC', 'SINGLE', 'CONVERSATION'].includes(kind)) {
          fail('INVALID_REQUEST', `body.items[${i}].kind: must be BASIC, SINGLE or CONVERSATION for RCS`);
        }
        const amount = parseEuros(item.amount, { allowZero: true });
        if (!amount.ok) fail('INVALID_AMOUNT', `body.items[${i}].amount: ${amount.reason}`);
        return { channelType: item.channelType as 'SMS', country: item.country, kind, amount: amount.micros };
      });
      await services.messaging.setPrices(entries);
      return priceView();
    },
  );

  app.post(
    '/admin/v1/organisations/:id/credit',
    {
      schema: {
        tags,
        security,
        summary: "Top up an organisation's balance",
        params: IdParams,
        body: CreditBody,
        response: { 201: LedgerEntryView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof CreditBody>;
      const parsed = parseEuros(body.amount);
      if (!parsed.ok) fail('INVALID_AMOUNT', `body.amount: ${parsed.reason}`);
      const entry = await tenancy.credit(id, parsed.micros, body.reference ?? null);
      return reply.code(201).send(ledgerEntryView(entry));
    },
  );
}
