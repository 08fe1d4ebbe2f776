import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { parseDateBound } from '../../../domain/dates.ts';
import { omitNulls, present } from '../../../domain/absent.ts';
import { parseEuros, toEuros } from '../../../domain/money.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import { type Transfer, transferAmount } from '../../../core/billing/funds.ts';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf } from '../idempotency.ts';
import { authorize, baseUrl } from '../access.ts';
import { errorResponses, IdParams, Nullable, PageQuery, pageItems, Uuid } from '../schemas.ts';
import { LedgerEntryView, ledgerEntryView, OrganisationView, organisationView } from '../views.ts';
import { reachableOrganisationIds } from './commons.ts';

// String first: ajv's coercion would otherwise read a string such as "1e3" as the number 1000.
const AmountInput = Type.Union([Type.String(), Type.Number()], { description: 'Decimal euros, at most 6 decimals' });

const OrganisationCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  parentOrganisationId: Type.Optional(Uuid),
  parentBilling: Type.Optional(Type.Boolean()),
  monthlyConsumptionLimit: Type.Optional(Nullable(AmountInput)),
});

const DateFilters = {
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC day) or ISO 8601 date-time, inclusive' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC day) or ISO 8601 date-time, inclusive' })),
};

const TransferCreate = Type.Object({
  organisationDestination: Type.Object({ organisationId: Uuid }),
  organisationSource: Type.Optional(
    Type.Object(
      { organisationId: Uuid },
      { description: 'Not needed: the path names the source. When given (as a transfer record has it), it must be the organisation of the path' },
    ),
  ),
  amount: AmountInput,
  reference: Type.Optional(Nullable(Type.String({ maxLength: 140 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
});

const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(Type.String({ description: 'Makes retries safe: the same key and body get the first answer, and nothing moves twice' })),
});

const OrganisationRef = Type.Object({ organisationId: Type.String(), name: Type.String() });

const TransferView = Type.Object({
  transferId: Type.String(),
  type: Type.String({ enum: ['DEBIT', 'CREDIT'], description: 'Seen from the organisation of the path' }),
  amount: Type.Number(),
  currency: Type.String(),
  creationDate: Type.String(),
  reference: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  organisationSource: OrganisationRef,
  organisationDestination: OrganisationRef,
  href: Type.String(),
});

const TransferParams = Type.Object({ id: Uuid, transferId: Uuid });

function transferView(t: Transfer, side: string, base: string): Static<typeof TransferView> {
  return {
    transferId: t.id,
    type: t.sourceId === side ? 'DEBIT' : 'CREDIT',
    amount: toEuros(t.amount),
    currency: t.currency,
    creationDate: new Date(t.createdAt).toISOString(),
    ...present('reference', t.reference),
    ...present('description', t.description),
    organisationSource: t.source,
    organisationDestination: t.destination,
    href: `${base}/commons/v1/organisations/${side}/transfers/${t.id}`,
  };
}

/** `startDate`/`endDate` as an inclusive ms range; 400.007 when unreadable or reversed. */
function dateRange(q: { startDate?: string; endDate?: string }): { from?: number; to?: number } {
  const bound = (text: string | undefined, which: 'start' | 'end') => {
    if (text === undefined) return undefined;
    return parseDateBound(text, which) ?? fail('INVALID_DATE', `query.${which}Date: must be YYYY-MM-DD or an ISO 8601 date-time`);
  };
  const from = bound(q.startDate, 'start');
  const to = bound(q.endDate, 'end');
  if (from !== undefined && to !== undefined && from > to) fail('INVALID_DATE', 'query.startDate: is after endDate');
  return { from, to };
}

function paging(q: { page?: number; pageSize?: number }) {
  const page = q.page ?? 1;
  const pageSize = q.pageSize ?? 10;
  return { page, pageSize, offset: (page - 1) * pageSize, limit: pageSize };
}

/** 404 unless the principal may read the organisation (its own, and its sub-organisations for ADMIN keys). */
async function reachableOrganisation(services: Services, principal: Principal, id: string): Promise<void> {
  if (!(await reachableOrganisationIds(services, principal)).includes(id)) fail('NOT_FOUND', `organisation ${id} not found`);
}

export function organisationRoutes(app: FastifyInstance, services: Services): void {
  const { tenancy, funds } = services;
  const tags = ['Commons'];
  const security = [{ apiKey: [] }];

  const orgView = async (req: FastifyRequest, id: string) =>
    organisationView(await tenancy.getOrganisation(id), await tenancy.organisationMonthlyConsumption(id), baseUrl(services, req));

  app.get(
    '/commons/v1/organisations',
    {
      schema: {
        tags,
        security,
        summary: "The key's organisation, and its sub-organisations for an ADMIN key",
        querystring: Type.Object(PageQuery),
        response: { 200: pageItems(OrganisationView), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'organisation:read');
      const p = paging(req.query as { page?: number; pageSize?: number });
      const ids = await reachableOrganisationIds(services, principal);
      const orgs = await tenancy.listOrganisations({ ids, offset: p.offset, limit: p.limit });
      const base = baseUrl(services, req);
      const items = await Promise.all(orgs.map(async (o) => organisationView(o, await tenancy.organisationMonthlyConsumption(o.id), base)));
      return { items, page: p.page, pageSize: p.pageSize };
    },
  );

  app.post(
    '/commons/v1/organisations',
    {
      schema: {
        tags,
        security,
        summary: 'Create a sub-organisation (ADMIN key; the parent defaults to the key’s organisation)',
        body: OrganisationCreate,
        response: { 201: OrganisationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'organisation:admin');
      const body = req.body as Static<typeof OrganisationCreate>;
      const parentId = body.parentOrganisationId ?? principal.credential.organisationId;
      await reachableOrganisation(services, principal, parentId);
      let monthlyLimit: number | null = null;
      if (body.monthlyConsumptionLimit !== undefined && body.monthlyConsumptionLimit !== null) {
        const parsed = parseEuros(body.monthlyConsumptionLimit, { allowZero: true });
        if (!parsed.ok) fail('INVALID_AMOUNT', `body.monthlyConsumptionLimit: ${parsed.reason}`);
        monthlyLimit = parsed.micros;
      }
      const org = await tenancy.createOrganisation({
        name: body.name,
        parentOrganisationId: parentId,
        parentBilling: body.parentBilling ?? false,
        monthlyLimit,
      });
      return reply.code(201).send(organisationView(org, 0, baseUrl(services, req)));
    },
  );

  app.get(
    '/commons/v1/organisations/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read an organisation and its balance',
        params: IdParams,
        response: { 200: OrganisationView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'organisation:read');
      const { id } = req.params as { id: string };
      await reachableOrganisation(services, principal, id);
      return orgView(req, id);
    },
  );

  app.get(
    '/commons/v1/organisations/:id/ledger',
    {
      schema: {
        tags,
        security,
        summary: "An organisation's ledger: every change of its balance with the balance after it, newest first",
        params: IdParams,
        querystring: Type.Object({ ...DateFilters, ...PageQuery }),
        response: { 200: pageItems(LedgerEntryView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'organisation:read');
      const { id } = req.params as { id: string };
      await reachableOrganisation(services, principal, id);
      const q = req.query as { startDate?: string; endDate?: string; page?: number; pageSize?: number };
      const { from, to } = dateRange(q);
      const p = paging(q);
      const entries = await funds.listLedger(id, {
        offset: p.offset,
        limit: p.limit,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to: to + 1 } : {}),
      });
      return { items: entries.map(ledgerEntryView), page: p.page, pageSize: p.pageSize };
    },
  );

  app.post(
    '/commons/v1/organisations/:id/transfers',
    {
      schema: {
        tags,
        security,
        summary: 'Transfer funds from this organisation to its parent or one of its sub-organisations (ADMIN key)',
        description:
          'Allowed between an organisation and its own sub-organisations, in both directions, for an ADMIN key of ' +
          'the parent, or of the sub-organisation when it gives funds back. The source balance never goes below ' +
          'zero (409.002). Send an Idempotency-Key to make retries safe.',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: TransferCreate,
        response: { 201: TransferView, ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'funds:transfer');
      const idempotencyKey = idempotencyKeyOf(req.headers[IDEMPOTENCY_HEADER]);
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof TransferCreate>;
      // smsmode's contract takes the source from the path alone; a body naming another one is a request that means
      // something else, never a transfer from the path's organisation.
      if (body.organisationSource !== undefined && body.organisationSource.organisationId.toLowerCase() !== id.toLowerCase()) {
        fail('INVALID_REQUEST', `must be the organisation of the path (${id}), which is the source of the transfer`, 'body.organisationSource.organisationId');
      }
      const amount = transferAmount(body.amount, 'body.amount');
      const base = baseUrl(services, req);
      const result = await funds.transfer(
        {
          callerOrganisationId: principal.credential.organisationId,
          credentialId: principal.credential.id,
          sourceId: id,
          destinationId: body.organisationDestination.organisationId,
          amount,
          reference: body.reference ?? null,
          description: body.description ?? null,
          idempotencyKey,
        },
        (t) => ({ statusCode: 201, body: transferView(t, id, base) }),
      );
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // An answer recorded by an older version may hold nulls.
      return reply.code(result.statusCode as 201).send(omitNulls(result.body));
    },
  );

  app.get(
    '/commons/v1/organisations/:id/transfers',
    {
      schema: {
        tags,
        security,
        summary: 'Transfers from or to an organisation, newest first',
        params: IdParams,
        querystring: Type.Object({
          ...DateFilters,
          'searchBy[type]': Type.Optional(Type.String({ enum: ['DEBIT', 'CREDIT'] })),
          ...PageQuery,
        }),
        response: { 200: pageItems(TransferView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'organisation:read');
      const { id } = req.params as { id: string };
      await reachableOrganisation(services, principal, id);
      const q = req.query as { startDate?: string; endDate?: string; 'searchBy[type]'?: 'DEBIT' | 'CREDIT'; page?: number; pageSize?: number };
      const p = paging(q);
      const transfers = await funds.listTransfers({
        organisationId: id,
        ...dateRange(q),
        ...(q['searchBy[type]'] ? { side: q['searchBy[type]'] } : {}),
        offset: p.offset,
        limit: p.limit,
      });
      const base = baseUrl(services, req);
      return { items: transfers.map((t) => transferView(t, id, base)), page: p.page, pageSize: p.pageSize };
    },
  );

  app.get(
    '/commons/v1/organisations/:id/transfers/:transferId',
    {
      schema: {
        tags,
        security,
        summary: 'One transfer from or to an organisation',
        params: TransferParams,
        response: { 200: TransferView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'organisation:read');
      const { id, transferId } = req.params as { id: string; transferId: string };
      await reachableOrganisation(services, principal, id);
      return transferView(await funds.getTransfer(id, transferId), id, baseUrl(services, req));
    },
  );
}
