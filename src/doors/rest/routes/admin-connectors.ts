import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { omitNulls } from '../../../domain/absent.ts';
import { iso, parseDateBound, parseDay, utcDay } from '../../../domain/dates.ts';
import { parseEuros, toEuros } from '../../../domain/money.ts';
import { toCsv } from '../../../domain/csv.ts';
import type { Rate } from '../../../domain/rates.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { ConnectorView, RouteView } from '../../../core/routing/admin.ts';
import { explainRoute } from '../../../core/routing/explain.ts';
import type { Services } from '../../../core/services.ts';
import { errorResponses, IdParams, Uuid } from '../schemas.ts';

const Open = { additionalProperties: true } as const;

const ConnectorBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: 'Unique, never changed: messages and receipts name their connector by it' }),
    type: Type.String({ description: 'SIMULATOR, SMPP, SMSMODE_HTTP, SIP or RBM; the other fields are the type’s settings' }),
    enabled: Type.Optional(Type.Boolean()),
  },
  { ...Open, description: 'The type’s settings sit beside name and type, e.g. host, port, systemId, password (SMPP)' },
);

const ConnectorPatch = Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { ...Open, description: 'Fields to change; null removes a setting' });

const LiveState = Type.Object(
  {
    state: Type.String({ enum: ['CONNECTING', 'UP', 'THROTTLED', 'DOWN', 'STANDBY', 'NOT_RUNNING'] }),
    since: Type.Optional(Type.String()),
    lastError: Type.Optional(Type.String()),
    binds: Type.Optional(Type.Integer()),
    inFlight: Type.Optional(Type.Integer()),
    submitsPerSecond: Type.Number(),
    receiptsPerSecond: Type.Number(),
    submitted: Type.Integer(),
    accepted: Type.Integer(),
    receipts: Type.Integer(),
    inbound: Type.Integer(),
    errors: Type.Record(Type.String(), Type.Integer(), { description: 'Refusals by code since the connector started on this node' }),
    unknownOutcomes: Type.Integer({ description: 'Submits whose outcome was lost with a connection (may arrive twice)' }),
    repeatsRecognised: Type.Integer({
      description: 'Submits repeated after a crash or a lost answer that the upstream recognised (Idempotent-Replayed) and did not send again',
    }),
    oldestQueuedSeconds: Type.Optional(Type.Number({ description: 'Age of the oldest message waiting for this connector' })),
  },
  { description: 'As seen by the node that answers' },
);

const ConnectorOut = Type.Object(
  {
    connectorId: Type.String(),
    name: Type.String(),
    type: Type.String(),
    enabled: Type.Boolean(),
    source: Type.String({ enum: ['DEFAULT', 'API', 'CONFIG'], description: 'CONFIG: from the configuration file, which wins at start' }),
    secretsSet: Type.Array(Type.String(), { description: 'Secret fields that are set (their values are never returned)' }),
    creationDate: Type.String(),
    updateDate: Type.String(),
    live: LiveState,
  },
  { ...Open, description: 'The type’s settings sit beside these fields' },
);

const RouteRef = Type.Union([
  Type.Object({ connectorId: Type.String(), weight: Type.Optional(Type.Integer({ minimum: 0 })) }),
  Type.Object({ connector: Type.String({ description: 'The connector’s name' }), weight: Type.Optional(Type.Integer({ minimum: 0 })) }),
]);

const Match = Type.Object(
  {
    prefix: Type.Optional(Type.String({ pattern: '^\\d{1,15}$' })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    mccMnc: Type.Optional(Type.String({ pattern: '^\\d{5,6}$' })),
    type: Type.Optional(Type.String({ enum: ['SMS', 'RCS', 'VOICE', 'LOOKUP'] })),
    flow: Type.Optional(Type.String({ enum: ['TRANSACTIONAL', 'MARKETING', 'OTP'] })),
    organisationId: Type.Optional(Type.String()),
    channelId: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const RouteBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Lower first; default 100' })),
    match: Type.Optional(Match),
    connectors: Type.Array(RouteRef, { minItems: 1, maxItems: 32, description: 'Weighted: one is drawn by weight per message' }),
    failover: Type.Optional(
      Type.Array(Type.Union([Type.String(), RouteRef]), { maxItems: 32, description: 'Tried in order when none of the connectors can take a message' }),
    ),
    costPerPart: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Euros the operator charges per part' })),
    lookupBeforeSend: Type.Optional(
      Type.Boolean({
        description: 'A live lookup (charged as a lookup) before each send through this route: an unreachable or invalid number ends UNDELIVERABLE, unsent',
      }),
    ),
    strategy: Type.Optional(
      Type.String({
        enum: ['weight', 'cost', 'quality'],
        description: 'weight: drawn by weight (default); cost: the cheapest connector up first, equal costs by weight; quality: the best delivery rate first',
      }),
    ),
    allowLoss: Type.Optional(
      Type.Boolean({
        description: 'Place a message through a connector whose cost is above what was charged for it (default false: such connectors are skipped)',
      }),
    ),
    maxAttempts: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10,
        description: 'Connectors a message is placed with at most, counting re-routes after a failed delivery (default 1)',
      }),
    ),
    minDeliveryRate: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
        description:
          'Connectors whose delivery rate to the destination network (last 24 hours) is below this (0 to 1) are left out, unless all are; null: none',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const RoutePatch = Type.Partial(RouteBody, { additionalProperties: false });

const NamedRef = Type.Object({ connectorId: Type.String(), name: Type.Optional(Type.String()) });

const RouteOut = Type.Object({
  routeId: Type.String(),
  name: Type.String(),
  priority: Type.Integer(),
  match: Match,
  connectors: Type.Array(Type.Object({ connectorId: Type.String(), name: Type.Optional(Type.String()), weight: Type.Integer() })),
  failover: Type.Array(NamedRef),
  costPerPart: Type.Optional(Type.Number()),
  lookupBeforeSend: Type.Boolean(),
  strategy: Type.String(),
  allowLoss: Type.Boolean(),
  maxAttempts: Type.Integer(),
  minDeliveryRate: Type.Optional(Type.Number()),
  enabled: Type.Boolean(),
  source: Type.String({ enum: ['DEFAULT', 'API', 'CONFIG'] }),
  creationDate: Type.String(),
  updateDate: Type.String(),
});

const RouteTestBody = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 32 }),
    type: Type.Optional(Type.String({ enum: ['SMS', 'RCS', 'VOICE', 'LOOKUP'] })),
    channelId: Type.Optional(Type.String()),
    organisationId: Type.Optional(Type.String()),
    flow: Type.Optional(Type.String({ enum: ['TRANSACTIONAL', 'MARKETING', 'OTP'] })),
    parts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Parts of the message (1 by default)' })),
    pricePerPart: Type.Optional(
      Type.Number({ minimum: 0, maximum: 100, description: 'Euros the message is charged per part; by default the price list’s for its type and country' }),
    ),
  },
  { additionalProperties: false },
);

const CostedName = Type.Object({ name: Type.String(), costPerPart: Type.Optional(Type.Number({ description: 'Euros; absent: not known' })) });

const RouteTestOut = Type.Object({
  recipient: Type.String(),
  country: Type.Optional(Type.String()),
  mccMnc: Type.Optional(Type.String()),
  route: Type.Optional(Type.String({ description: 'Absent: no route takes it' })),
  strategy: Type.Optional(Type.String()),
  costPerPart: Type.Optional(Type.Number({ description: 'Euros a part costs through the first candidate' })),
  charged: Type.Optional(Type.Number({ description: 'Euros the message is charged, for its parts' })),
  parts: Type.Integer(),
  candidates: Type.Array(
    Type.Object({
      name: Type.String(),
      state: Type.String(),
      costPerPart: Type.Optional(Type.Number()),
      deliveryRate: Type.Optional(Type.Number({ description: 'To the destination network, last hour; absent: not known or not looked at' })),
    }),
  ),
  belowMinimum: Type.Array(Type.Object({ name: Type.String(), deliveryRate: Type.Optional(Type.Number()) }), {
    description: 'Connectors left out: they deliver below the route’s minDeliveryRate',
  }),
  atLoss: Type.Array(CostedName, { description: 'Connectors left out: the message would be placed at a loss through them' }),
  refused: Type.Optional(Type.String({ description: 'Why the route refuses the message (every connector at a loss)' })),
  named: Type.Array(Type.String()),
  reason: Type.String(),
});

const RateBody = Type.Object(
  {
    price: Type.Union([Type.Number(), Type.String()], { description: 'Euros per part' }),
    currency: Type.Optional(Type.String({ description: 'EUR (the only currency accounted in)' })),
    type: Type.Optional(Type.String({ description: 'SMS, RCS or VOICE; absent: every type' })),
    prefix: Type.Optional(Type.String({ description: 'Destination prefix, digits' })),
    country: Type.Optional(Type.String({ description: 'ISO 3166 alpha-2' })),
    mcc: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    mnc: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    mccMnc: Type.Optional(Type.String()),
    validFrom: Type.Optional(Type.String({ description: 'YYYY-MM-DD or ISO 8601; default now' })),
    validTo: Type.Optional(Type.String({ description: 'YYYY-MM-DD or ISO 8601, the first instant it is no longer in force' })),
  },
  { additionalProperties: false },
);

const RateOut = Type.Object({
  rateId: Type.String(),
  type: Type.Optional(Type.String()),
  prefix: Type.Optional(Type.String()),
  country: Type.Optional(Type.String()),
  mccMnc: Type.Optional(Type.String()),
  price: Type.Number(),
  currency: Type.String(),
  validFrom: Type.String(),
  validTo: Type.Optional(Type.String()),
});

const RatesQuery = Type.Object({ at: Type.Optional(Type.String({ description: 'Only the rates in force at this instant (ISO 8601 or YYYY-MM-DD)' })) });
const RateParams = Type.Object({ id: Uuid, rateId: Uuid });

const rateOut = (r: Rate) => ({
  rateId: r.id,
  ...(r.type && { type: r.type }),
  ...(r.prefix && { prefix: r.prefix }),
  ...(r.country && { country: r.country }),
  ...(r.mccMnc && { mccMnc: r.mccMnc }),
  price: toEuros(r.amount),
  currency: 'EUR',
  validFrom: iso(r.validFrom),
  ...(r.validTo !== null && { validTo: iso(r.validTo) }),
});

const MarginQuery = Type.Object({
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: the first day of this month' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD, inclusive; default: today' })),
  period: Type.Optional(Type.String({ enum: ['day', 'month', 'none'], description: 'Totals per day, per month, or over the whole range (default)' })),
  format: Type.Optional(Type.String({ enum: ['json', 'csv'] })),
  'searchBy[organisationId]': Type.Optional(Type.String()),
  'searchBy[connector]': Type.Optional(Type.String()),
  'searchBy[country]': Type.Optional(Type.String()),
});

const Eur = Type.Object({ amount: Type.Number(), currency: Type.String() });

/** The margin over the messages whose cost is known, micro-euros. */
const marginOf = (t: { charged: number; cost: number; unknownCostCharged: number }): number => t.charged - t.unknownCostCharged - t.cost;

const AttemptOut = Type.Object({
  attempt: Type.Integer(),
  connector: Type.String(),
  route: Type.String(),
  network: Type.Optional(Type.String({ description: 'MCC+MNC, else the country' })),
  cost: Type.Optional(Eur),
  placedAt: Type.String(),
  outcome: Type.Optional(Type.String({ description: 'DELIVERED, UNDELIVERED or UNDELIVERABLE; absent: no final receipt yet' })),
  detail: Type.Optional(Type.String()),
  endedAt: Type.Optional(Type.String()),
});

const QualityQuery = Type.Object({
  hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168, description: 'The window, in hours (24 by default)' })),
  'searchBy[connector]': Type.Optional(Type.String()),
  'searchBy[network]': Type.Optional(Type.String()),
});

const QualityOut = Type.Object({
  connector: Type.String(),
  network: Type.String({ description: 'MCC+MNC when known, else the country' }),
  delivered: Type.Integer(),
  failed: Type.Integer({ description: 'UNDELIVERED receipts' }),
  deliveryRate: Type.Optional(Type.Number()),
  meanSecondsToDelivered: Type.Optional(Type.Number()),
});

const MarginOut = Type.Object({
  startDate: Type.String(),
  endDate: Type.String(),
  items: Type.Array(
    Type.Object({
      organisationId: Type.String(),
      connector: Type.String(),
      country: Type.String({ description: 'ISO 3166 alpha-2; empty when not known' }),
      period: Type.Optional(Type.String({ description: 'YYYY-MM-DD or YYYY-MM' })),
      messages: Type.Integer(),
      parts: Type.Integer(),
      charged: Eur,
      cost: Type.Object(Eur.properties, { description: 'What the messages whose cost is known cost' }),
      margin: Type.Object(Eur.properties, { description: 'charged − chargedUnknownCost − cost: over the messages whose cost is known' }),
      messagesUnknownCost: Type.Integer({
        description: 'Messages whose cost is not known (no rate in force for a connector and destination, nor a route cost): not in cost nor margin',
      }),
      chargedUnknownCost: Type.Object(Eur.properties, { description: 'What was charged for the messages whose cost is not known (in charged)' }),
    }),
  ),
  totals: Type.Object({
    messages: Type.Integer(),
    parts: Type.Integer(),
    charged: Eur,
    cost: Eur,
    margin: Eur,
    messagesUnknownCost: Type.Integer(),
    chargedUnknownCost: Eur,
  }),
});

const ConsumptionQuery = Type.Object({
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: the first day of this month' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD, inclusive; default: today' })),
  'searchBy[route]': Type.Optional(Type.String()),
  'searchBy[connector]': Type.Optional(Type.String()),
});

const ConsumptionOut = Type.Object({
  startDate: Type.String(),
  endDate: Type.String(),
  items: Type.Array(
    Type.Object({
      route: Type.String(),
      connector: Type.String(),
      messages: Type.Integer(),
      parts: Type.Integer(),
      cost: Type.Object({ amount: Type.Number(), currency: Type.String() }),
      charged: Type.Object({ amount: Type.Number(), currency: Type.String() }),
      margin: Type.Object({ amount: Type.Number(), currency: Type.String() }),
    }),
  ),
});

const eur = (micros: number) => ({ amount: toEuros(micros), currency: 'EUR' });

/** Micro-euros as exact decimal euros (six decimals), for CSV. */
function euroText(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const a = Math.abs(micros);
  return `${sign}${Math.floor(a / 1_000_000)}.${String(a % 1_000_000).padStart(6, '0')}`;
}

/**
 * Operator connections and routes (operator API; the /admin/ prefix is guarded by the operator key). Every change
 * applies at once on every node, without a restart.
 */
export function adminConnectorRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin: connectors and routes'];
  const security = [{ apiKey: [] }];
  const admin = services.connectorAdmin;

  const connectorOut = async (c: ConnectorView) => {
    const live = services.router.state(c.name);
    const waiting = await services.connectors.oldestWaiting();
    const since = waiting.get(c.name);
    return {
      // A setting left to its automatic value (null, e.g. sourceTon from the sender) is left out.
      ...omitNulls(c.settings),
      connectorId: c.id,
      name: c.name,
      type: c.kind,
      enabled: c.enabled,
      source: c.source,
      secretsSet: c.secretsSet,
      creationDate: iso(c.createdAt),
      updateDate: iso(c.updatedAt),
      live: {
        state: live?.state ?? ('NOT_RUNNING' as const),
        ...(live && { since: iso(live.since) }),
        ...(live?.lastError && { lastError: live.lastError }),
        ...(live?.binds != null && { binds: live.binds }),
        ...(live?.inFlight != null && { inFlight: live.inFlight }),
        submitsPerSecond: live?.submitsPerSecond ?? 0,
        receiptsPerSecond: live?.receiptsPerSecond ?? 0,
        submitted: live?.counters.submitted ?? 0,
        accepted: live?.counters.accepted ?? 0,
        receipts: live?.counters.receipts ?? 0,
        inbound: live?.counters.inbound ?? 0,
        errors: live?.counters.errorsByCode ?? {},
        unknownOutcomes: live?.unknownOutcomes ?? 0,
        repeatsRecognised: live?.repeatsRecognised ?? 0,
        ...(since !== undefined && { oldestQueuedSeconds: Math.max(0, Math.round((Date.now() - since) / 100) / 10) }),
      },
    };
  };

  const routeOut = async (r: RouteView) => {
    const names = new Map((await admin.connectors()).map((c) => [c.id, c.name]));
    const named = (id: string) => ({ connectorId: id, ...(names.has(id) && { name: names.get(id) }) });
    return {
      routeId: r.id,
      name: r.name,
      priority: r.priority,
      match: r.match,
      connectors: r.connectors.map((c) => ({ ...named(c.connectorId), weight: c.weight })),
      failover: r.failover.map(named),
      ...(r.costPerPart !== null && { costPerPart: r.costPerPart }),
      lookupBeforeSend: r.lookupBeforeSend,
      strategy: r.strategy,
      allowLoss: r.allowLoss,
      maxAttempts: r.maxAttempts,
      ...(r.minDeliveryRate !== null && { minDeliveryRate: r.minDeliveryRate }),
      enabled: r.enabled,
      source: r.source,
      creationDate: iso(r.createdAt),
      updateDate: iso(r.updatedAt),
    };
  };

  app.get(
    '/admin/v1/connectors',
    {
      schema: {
        tags,
        security,
        summary: 'Operator connections, with their live state',
        response: { 200: Type.Object({ items: Type.Array(ConnectorOut) }), ...errorResponses(401, 403) },
      },
    },
    async () => ({ items: await Promise.all((await admin.connectors()).map(connectorOut)) }),
  );

  app.post(
    '/admin/v1/connectors',
    {
      schema: {
        tags,
        security,
        summary: 'Create an operator connection',
        description: 'Secrets (SMPP password, API key) are stored encrypted with TERN_SECRET_KEY and never returned; without the key they are refused (503).',
        body: ConnectorBody,
        response: { 201: ConnectorOut, ...errorResponses(400, 401, 403, 409, 503) },
      },
    },
    async (req, reply) => {
      const created = await underField('body.', () => admin.createConnector(req.body as Record<string, unknown>));
      return reply.code(201).send(await connectorOut(created));
    },
  );

  app.get(
    '/admin/v1/connectors/:id',
    {
      schema: {
        tags,
        security,
        summary: 'One operator connection with its live state',
        params: IdParams,
        response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => connectorOut(await admin.connector((req.params as { id: string }).id)),
  );

  app.patch(
    '/admin/v1/connectors/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Change an operator connection (it restarts with its new settings)',
        params: IdParams,
        body: ConnectorPatch,
        response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (req) => connectorOut(await underField('body.', () => admin.updateConnector((req.params as { id: string }).id, req.body as Record<string, unknown>))),
  );

  app.delete(
    '/admin/v1/connectors/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Remove an operator connection no route uses',
        params: IdParams,
        response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => connectorOut(await admin.deleteConnector((req.params as { id: string }).id)),
  );

  app.get(
    '/admin/v1/routes',
    {
      schema: {
        tags,
        security,
        summary: 'Routes, in the order they are tried',
        response: { 200: Type.Object({ items: Type.Array(RouteOut) }), ...errorResponses(401, 403) },
      },
    },
    async () => ({ items: await Promise.all((await admin.routes()).map(routeOut)) }),
  );

  app.post(
    '/admin/v1/routes',
    { schema: { tags, security, summary: 'Create a route', body: RouteBody, response: { 201: RouteOut, ...errorResponses(400, 401, 403) } } },
    async (req, reply) => reply.code(201).send(await routeOut(await underField('body.', () => admin.createRoute(req.body as Static<typeof RouteBody>)))),
  );

  app.post(
    '/admin/v1/routes/test',
    {
      schema: {
        tags,
        security,
        summary: 'Which connector a message would use, and why',
        description:
          'The dispatcher’s own routing, on this node: the route that takes the message, the connectors it would try now in order, and those that are down.',
        body: RouteTestBody,
        response: { 200: RouteTestOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const body = req.body as Static<typeof RouteTestBody>;
      let pricePerPart: number | undefined;
      if (body.pricePerPart !== undefined) {
        const parsed = parseEuros(body.pricePerPart, { allowZero: true });
        if (!parsed.ok) fail('INVALID_REQUEST', `euros per part: ${parsed.reason}`, 'body.pricePerPart');
        pricePerPart = parsed.micros;
      }
      const priceOf = (type: string, country: string | null) => (type === 'SMS' ? services.messaging.priceListNow.unitPrice('SMS', country, 'SMS') : null);
      const a = await underField('body.', () =>
        explainRoute(services.router, services.tenancy, { ...body, ...(pricePerPart !== undefined && { pricePerPart }) }, services.lookup, priceOf),
      );
      const costed = (micros: number | null) => (micros !== null ? { costPerPart: toEuros(micros) } : {});
      return {
        recipient: a.recipient,
        ...(a.country && { country: a.country }),
        ...(a.mccMnc && { mccMnc: a.mccMnc }),
        ...(a.route !== null && { route: a.route }),
        ...(a.strategy !== null && { strategy: a.strategy }),
        ...costed(a.costPerPart),
        ...(a.charged !== null && { charged: toEuros(a.charged) }),
        parts: a.parts,
        candidates: a.candidates.map((c) => ({
          name: c.name,
          state: c.state,
          ...costed(c.costPerPart),
          ...(c.deliveryRate !== null && { deliveryRate: c.deliveryRate }),
        })),
        belowMinimum: a.belowMinimum.map((b) => ({ name: b.name, ...(b.deliveryRate !== null && { deliveryRate: b.deliveryRate }) })),
        atLoss: a.atLoss.map((c) => ({ name: c.name, ...costed(c.costPerPart) })),
        ...(a.refused !== null && { refused: a.refused }),
        named: a.named,
        reason: a.reason,
      };
    },
  );

  app.get(
    '/admin/v1/routes/:id',
    { schema: { tags, security, summary: 'One route', params: IdParams, response: { 200: RouteOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => routeOut(await admin.route((req.params as { id: string }).id)),
  );

  app.patch(
    '/admin/v1/routes/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Change a route',
        params: IdParams,
        body: RoutePatch,
        response: { 200: RouteOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => routeOut(await underField('body.', () => admin.updateRoute((req.params as { id: string }).id, req.body as Static<typeof RoutePatch>))),
  );

  app.delete(
    '/admin/v1/routes/:id',
    { schema: { tags, security, summary: 'Remove a route', params: IdParams, response: { 200: RouteOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => routeOut(await admin.deleteRoute((req.params as { id: string }).id)),
  );

  app.get(
    '/admin/v1/connectors/:id/rates',
    {
      schema: {
        tags,
        security,
        summary: 'A connector’s rate table: what the operator charges per part',
        description: 'Every rate ever loaded (rates are never changed: a new price list is new rates from its date), or those in force at `at`.',
        params: IdParams,
        querystring: RatesQuery,
        response: { 200: Type.Object({ items: Type.Array(RateOut) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { at } = req.query as Static<typeof RatesQuery>;
      const instant = at === undefined ? undefined : (parseDateBound(at, 'start') ?? fail('INVALID_DATE', 'YYYY-MM-DD or ISO 8601', 'query.at'));
      return { items: (await admin.rates((req.params as { id: string }).id, instant)).map(rateOut) };
    },
  );

  app.post(
    '/admin/v1/connectors/:id/rates',
    {
      schema: {
        tags,
        security,
        summary: 'Add rates to a connector’s table (all or none)',
        description:
          'Each rate matches by type, prefix, country and MCC/MNC (absent: all); the most specific in force applies (MCC/MNC, then the longest prefix, then country, then type), and among equals the latest validFrom.',
        params: IdParams,
        body: Type.Object({ rates: Type.Array(RateBody, { minItems: 1, maxItems: 10_000 }) }, { additionalProperties: false }),
        response: { 201: Type.Object({ items: Type.Array(RateOut) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const rates = await underField('body.', () => admin.addRates((req.params as { id: string }).id, (req.body as { rates: unknown[] }).rates));
      return reply.code(201).send({ items: rates.map(rateOut) });
    },
  );

  void app.register(async (scope) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: 4 * 1024 * 1024 }, (_req, body, done) => done(null, body));
    scope.post(
      '/admin/v1/connectors/:id/rates/import',
      {
        schema: {
          tags,
          security,
          summary: 'Import an operator’s price list (CSV) into a connector’s table (all or none)',
          description:
            'A `text/csv` body, or JSON `{csv}`: a header row naming the columns — price (or amount, rate, cost), currency, country, mcc, mnc, prefix, type, valid_from, valid_to, in any order; others are ignored — then one rate a line. Separated by `,` or `;`.',
          params: IdParams,
          body: {
            content: {
              'text/csv': { schema: Type.String({ description: 'the price list itself' }) },
              'application/json': { schema: Type.Object({ csv: Type.String({ description: 'the price list itself' }) }) },
            },
          },
          response: { 201: Type.Object({ count: Type.Integer(), items: Type.Array(RateOut) }), ...errorResponses(400, 401, 403, 404, 413) },
        },
      },
      async (req, reply) => {
        const csv = typeof req.body === 'string' ? req.body : (req.body as { csv?: unknown } | null)?.csv;
        if (typeof csv !== 'string') fail('INVALID_REQUEST', 'a text/csv body, or JSON {"csv": "…"}', 'body.csv');
        const rates = await underField('body.', () => admin.importRates((req.params as { id: string }).id, csv));
        return reply.code(201).send({ count: rates.length, items: rates.map(rateOut) });
      },
    );
  });

  app.delete(
    '/admin/v1/connectors/:id/rates/:rateId',
    {
      schema: {
        tags,
        security,
        summary: 'Remove a rate not in force yet',
        description: 'A rate in force or past stays (costs were recorded with it): load a new rate from a date to replace it.',
        params: RateParams,
        response: { 200: RateOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const { id, rateId } = req.params as Static<typeof RateParams>;
      return rateOut(await admin.deleteRate(id, rateId));
    },
  );

  app.get(
    '/admin/v1/messages/:id/attempts',
    {
      schema: {
        tags,
        security,
        summary: 'A message’s placements with operators: connector, route, cost and outcome of each',
        description: 'A message re-routed after a failed delivery has one placement per connector it went through; it was charged once.',
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(AttemptOut) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => ({
      items: (await admin.attempts((req.params as { id: string }).id)).map((a) => ({
        attempt: a.attempt,
        connector: a.connector,
        route: a.route,
        ...(a.network !== '' && { network: a.network }),
        ...(a.cost !== null && { cost: eur(a.cost) }),
        placedAt: iso(a.placed_at),
        ...(a.outcome !== null && { outcome: a.outcome }),
        ...(a.detail !== null && { detail: a.detail }),
        ...(a.ended_at !== null && { endedAt: iso(a.ended_at) }),
      })),
    }),
  );

  app.get(
    '/admin/v1/quality',
    {
      schema: {
        tags,
        security,
        summary: 'Delivery rate and time to DELIVERED per connector and destination network',
        description:
          'From counters final receipts add to, per hour: over the last `hours` hours, the current one included (UNDELIVERABLE, the number’s doing, is not counted). Routes by quality judge on the last hour’s, once a connector has 10 receipts there.',
        querystring: QualityQuery,
        response: { 200: Type.Object({ hours: Type.Integer(), items: Type.Array(QualityOut) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const q = req.query as Static<typeof QualityQuery>;
      const hours = q.hours ?? 24;
      // This node's routing reads them again too: what the answer shows is what routing goes by.
      await services.deliveryQuality.refresh();
      const items = (await services.deliveryQuality.over(hours)).filter(
        (f) =>
          (q['searchBy[connector]'] === undefined || f.connector === q['searchBy[connector]']) &&
          (q['searchBy[network]'] === undefined || f.network === q['searchBy[network]']),
      );
      return {
        hours,
        items: items.map((f) => ({
          connector: f.connector,
          network: f.network,
          delivered: f.delivered,
          failed: f.failed,
          ...(f.deliveryRate !== null && { deliveryRate: Math.round(f.deliveryRate * 10_000) / 10_000 }),
          ...(f.meanTimeToDeliveredMs !== null && { meanSecondsToDelivered: f.meanTimeToDeliveredMs / 1000 }),
        })),
      };
    },
  );

  app.get(
    '/admin/v1/consumptions/margins',
    {
      schema: {
        tags,
        security,
        summary: 'Margins: per organisation, connector, country and period, what was charged and what it cost',
        description:
          'From the placements (a message placed again after a failed delivery counts once, its cost each time). A message whose cost is not known (no rate in force for one of its placements, nor a route cost) is counted in `messagesUnknownCost` and `chargedUnknownCost`, not in `cost` nor `margin`: margin = charged − chargedUnknownCost − cost. `format=csv` answers text/csv. Amounts are exact to the micro-euro.',
        querystring: MarginQuery,
        response: { 200: MarginOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const q = req.query as Static<typeof MarginQuery>;
      const today = utcDay(Date.now());
      const start = q.startDate ?? `${today.slice(0, 7)}-01`;
      const end = q.endDate ?? today;
      if (parseDay(start) === null) fail('INVALID_DATE', 'YYYY-MM-DD', 'query.startDate');
      if (parseDay(end) === null) fail('INVALID_DATE', 'YYYY-MM-DD', 'query.endDate');
      if (end < start) fail('INVALID_DATE', 'must not be before startDate', 'query.endDate');
      const per = (q.period ?? 'none') as 'day' | 'month' | 'none';
      const items = await admin.margins(
        start,
        end,
        {
          organisationId: q['searchBy[organisationId]'],
          connector: q['searchBy[connector]'],
          country: q['searchBy[country]'],
        },
        per,
      );
      if (q.format === 'csv') {
        const rows: unknown[][] = [
          [
            'period',
            'organisationId',
            'connector',
            'country',
            'messages',
            'parts',
            'charged',
            'cost',
            'margin',
            'messagesUnknownCost',
            'chargedUnknownCost',
            'currency',
          ],
        ];
        for (const i of items)
          rows.push([
            i.period,
            i.organisationId,
            i.connector,
            i.country,
            i.messages,
            i.parts,
            euroText(i.charged),
            euroText(i.cost),
            euroText(marginOf(i)),
            i.unknownCostMessages,
            euroText(i.unknownCostCharged),
            'EUR',
          ]);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="margins-${start}-${end}.csv"`).send(toCsv(rows));
      }
      const sum = (f: (i: (typeof items)[number]) => number) => items.reduce((s, i) => s + f(i), 0);
      return {
        startDate: start,
        endDate: end,
        items: items.map((i) => ({
          organisationId: i.organisationId,
          connector: i.connector,
          country: i.country,
          ...(i.period !== '' && { period: i.period }),
          messages: i.messages,
          parts: i.parts,
          charged: eur(i.charged),
          cost: eur(i.cost),
          margin: eur(marginOf(i)),
          messagesUnknownCost: i.unknownCostMessages,
          chargedUnknownCost: eur(i.unknownCostCharged),
        })),
        totals: {
          messages: sum((i) => i.messages),
          parts: sum((i) => i.parts),
          charged: eur(sum((i) => i.charged)),
          cost: eur(sum((i) => i.cost)),
          margin: eur(sum(marginOf)),
          messagesUnknownCost: sum((i) => i.unknownCostMessages),
          chargedUnknownCost: eur(sum((i) => i.unknownCostCharged)),
        },
      };
    },
  );

  app.get(
    '/admin/v1/consumptions',
    {
      schema: {
        tags,
        security,
        summary: 'What was placed per route and connector, what it cost and what was charged for it',
        description: 'Cost comes from the route’s costPerPart at the time of placement; margin = charged − cost.',
        querystring: ConsumptionQuery,
        response: { 200: ConsumptionOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const q = req.query as Static<typeof ConsumptionQuery>;
      const today = utcDay(Date.now());
      const start = q.startDate ?? `${today.slice(0, 7)}-01`;
      const end = q.endDate ?? today;
      if (parseDay(start) === null) fail('INVALID_DATE', 'YYYY-MM-DD', 'query.startDate');
      if (parseDay(end) === null) fail('INVALID_DATE', 'YYYY-MM-DD', 'query.endDate');
      const items = await admin.consumption(start, end, { route: q['searchBy[route]'], connector: q['searchBy[connector]'] });
      return {
        startDate: start,
        endDate: end,
        items: items.map((i) => ({
          route: i.route,
          connector: i.connector,
          messages: i.messages,
          parts: i.parts,
          cost: eur(i.cost),
          charged: eur(i.charged),
          margin: eur(i.margin),
        })),
      };
    },
  );
}
