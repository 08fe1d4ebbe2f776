import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { omitNulls } from '../../../core/domain/absent.ts';
import { iso, parseDay, utcDay } from '../../../core/domain/dates.ts';
import { toEuros } from '../../../core/domain/money.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { ConnectorView, RouteView } from '../../../core/routing/admin.ts';
import { explainRoute } from '../../../core/routing/explain.ts';
import type { Services } from '../../../core/services.ts';
import { errorResponses, IdParams } from '../schemas.ts';

const Open = { additionalProperties: true } as const;

const ConnectorBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: 'Unique, never changed: messages and receipts name their connector by it' }),
    type: Type.String({ description: 'SIMULATOR, SMPP, SMSMODE_HTTP or SIP; the other fields are the type’s settings' }),
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
    repeatsRecognised: Type.Integer({ description: 'Submits repeated after a crash or a lost answer that the upstream recognised (Idempotent-Replayed) and did not send again' }),
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
    failover: Type.Optional(Type.Array(Type.Union([Type.String(), RouteRef]), { maxItems: 32, description: 'Tried in order when none of the connectors can take a message' })),
    costPerPart: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Euros the operator charges per part' })),
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
  },
  { additionalProperties: false },
);

const RouteTestOut = Type.Object({
  recipient: Type.String(),
  country: Type.Optional(Type.String()),
  mccMnc: Type.Optional(Type.String()),
  route: Type.Optional(Type.String({ description: 'Absent: no route takes it' })),
  costPerPart: Type.Optional(Type.Number()),
  candidates: Type.Array(Type.Object({ name: Type.String(), state: Type.String() })),
  named: Type.Array(Type.String()),
  reason: Type.String(),
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
      enabled: r.enabled,
      source: r.source,
      creationDate: iso(r.createdAt),
      updateDate: iso(r.updatedAt),
    };
  };

  app.get(
    '/admin/v1/connectors',
    { schema: { tags, security, summary: 'Operator connections, with their live state', response: { 200: Type.Object({ items: Type.Array(ConnectorOut) }), ...errorResponses(401, 403) } } },
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
    { schema: { tags, security, summary: 'One operator connection with its live state', params: IdParams, response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => connectorOut(await admin.connector((req.params as { id: string }).id)),
  );

  app.patch(
    '/admin/v1/connectors/:id',
    {
      schema: { tags, security, summary: 'Change an operator connection (it restarts with its new settings)', params: IdParams, body: ConnectorPatch, response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404, 503) } },
    },
    async (req) => connectorOut(await underField('body.', () => admin.updateConnector((req.params as { id: string }).id, req.body as Record<string, unknown>))),
  );

  app.delete(
    '/admin/v1/connectors/:id',
    { schema: { tags, security, summary: 'Remove an operator connection no route uses', params: IdParams, response: { 200: ConnectorOut, ...errorResponses(400, 401, 403, 404, 409) } } },
    async (req) => connectorOut(await admin.deleteConnector((req.params as { id: string }).id)),
  );

  app.get(
    '/admin/v1/routes',
    { schema: { tags, security, summary: 'Routes, in the order they are tried', response: { 200: Type.Object({ items: Type.Array(RouteOut) }), ...errorResponses(401, 403) } } },
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
        description: 'The dispatcher’s own routing, on this node: the route that takes the message, the connectors it would try now in order, and those that are down.',
        body: RouteTestBody,
        response: { 200: RouteTestOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const a = await underField('body.', () => explainRoute(services.router, services.tenancy, req.body as Static<typeof RouteTestBody>));
      return {
        recipient: a.recipient,
        ...(a.country && { country: a.country }),
        ...(a.mccMnc && { mccMnc: a.mccMnc }),
        ...(a.route !== null && { route: a.route }),
        ...(a.costPerPart !== null && { costPerPart: toEuros(a.costPerPart) }),
        candidates: a.candidates,
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
    { schema: { tags, security, summary: 'Change a route', params: IdParams, body: RoutePatch, response: { 200: RouteOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => routeOut(await underField('body.', () => admin.updateRoute((req.params as { id: string }).id, req.body as Static<typeof RoutePatch>))),
  );

  app.delete(
    '/admin/v1/routes/:id',
    { schema: { tags, security, summary: 'Remove a route', params: IdParams, response: { 200: RouteOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => routeOut(await admin.deleteRoute((req.params as { id: string }).id)),
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
        items: items.map((i) => ({ route: i.route, connector: i.connector, messages: i.messages, parts: i.parts, cost: eur(i.cost), charged: eur(i.charged), margin: eur(i.margin) })),
      };
    },
  );
}
