import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { omitNulls } from '../../../domain/absent.ts';
import { toCsv } from '../../../domain/csv.ts';
import { iso, parseApiDate } from '../../../domain/dates.ts';
import type { AuditEntry, AuditFilter } from '../../../core/audit/service.ts';
import { fail } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { authorize } from '../access.ts';
import { errorResponses, PageQuery } from '../schemas.ts';

const Filters = {
  ...PageQuery,
  'searchBy[actor]': Type.Optional(Type.String({ maxLength: 100, description: 'Key id (or `operator`)' })),
  'searchBy[action]': Type.Optional(Type.String({ maxLength: 100, description: 'e.g. organisation.update' })),
  'searchBy[objectType]': Type.Optional(Type.String({ maxLength: 100 })),
  'searchBy[objectId]': Type.Optional(Type.String({ maxLength: 200 })),
  'searchBy[from]': Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601: entries at or after' })),
  'searchBy[until]': Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601: entries before' })),
  format: Type.Optional(Type.String({ enum: ['json', 'csv'], description: 'csv: the same page as CSV' })),
};
const OrganisationQuery = Type.Object(Filters);
const OperatorQuery = Type.Object({
  ...Filters,
  'searchBy[organisationId]': Type.Optional(Type.String({ maxLength: 64, description: 'An organisation, or `platform` for the operator’s own changes' })),
});

const AuditEntryView = Type.Object({
  auditId: Type.String(),
  at: Type.String(),
  organisationId: Type.Optional(Type.String({ description: 'Absent: a change of the platform' })),
  actor: Type.Object({ type: Type.String({ enum: ['KEY', 'OPERATOR', 'USER'] }), id: Type.String() }),
  action: Type.String(),
  object: Type.Object({ type: Type.String(), id: Type.Optional(Type.String()) }),
  before: Type.Optional(Type.Unknown({ description: 'The object before the change (secrets removed); absent for a creation' })),
  after: Type.Optional(Type.Unknown({ description: 'The object after the change, or the action’s answer (secrets removed); absent for a deletion' })),
  remoteAddress: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
  interface: Type.String({ enum: ['REST', 'CONSOLE', 'CLI'] }),
});
const AuditList = Type.Object({ items: Type.Array(AuditEntryView), page: Type.Integer(), pageSize: Type.Integer() });

function view(e: AuditEntry): Static<typeof AuditEntryView> {
  return omitNulls({
    auditId: e.id,
    at: iso(e.at),
    organisationId: e.organisationId,
    actor: e.actor,
    action: e.action,
    object: omitNulls({ type: e.object.type, id: e.object.id }),
    before: e.before,
    after: e.after,
    remoteAddress: e.remoteAddress,
    requestId: e.requestId,
    interface: e.interface,
  }) as Static<typeof AuditEntryView>;
}

const CSV_COLUMNS = [
  'auditId',
  'at',
  'organisationId',
  'actorType',
  'actorId',
  'action',
  'objectType',
  'objectId',
  'before',
  'after',
  'remoteAddress',
  'requestId',
  'interface',
];

function csv(entries: AuditEntry[]): string {
  return toCsv([
    CSV_COLUMNS,
    ...entries.map((e) => [
      e.id,
      iso(e.at),
      e.organisationId ?? '',
      e.actor.type,
      e.actor.id,
      e.action,
      e.object.type,
      e.object.id ?? '',
      e.before === null ? '' : JSON.stringify(e.before),
      e.after === null ? '' : JSON.stringify(e.after),
      e.remoteAddress ?? '',
      e.requestId ?? '',
      e.interface,
    ]),
  ]);
}

function instant(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const d = parseApiDate(value);
  if (!d) fail('INVALID_REQUEST', `not an ISO 8601 date: ${value}`, field);
  return d.getTime();
}

type Query = Static<typeof OperatorQuery>;

function filterOf(q: Query): AuditFilter {
  const f: AuditFilter = {};
  if (q['searchBy[actor]'] !== undefined) f.actorId = q['searchBy[actor]'];
  if (q['searchBy[action]'] !== undefined) f.action = q['searchBy[action]'];
  if (q['searchBy[objectType]'] !== undefined) f.objectType = q['searchBy[objectType]'];
  if (q['searchBy[objectId]'] !== undefined) f.objectId = q['searchBy[objectId]'];
  const from = instant(q['searchBy[from]'], 'query.searchBy[from]');
  const until = instant(q['searchBy[until]'], 'query.searchBy[until]');
  if (from !== undefined) f.from = from;
  if (until !== undefined) f.until = until;
  return f;
}

async function answer(services: Services, q: Query, filter: AuditFilter, reply: FastifyReply): Promise<unknown> {
  const page = q.page ?? 1;
  const pageSize = q.pageSize ?? 10;
  const entries = await services.audit.list(filter, page, pageSize);
  if (q.format === 'csv') return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit.csv"').send(csv(entries));
  return { items: entries.map(view), page, pageSize };
}

/** The audit log: the operator reads every entry, an organisation's ADMIN key its organisation's. */
export function auditRoutes(app: FastifyInstance, services: Services): void {
  const security = [{ apiKey: [] }];
  app.get(
    '/admin/v1/audit',
    {
      schema: {
        tags: ['Admin'],
        security,
        summary: 'The audit log: every change, newest first, with filters; format=csv for CSV',
        querystring: OperatorQuery,
        response: { 200: AuditList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req: FastifyRequest, reply) => {
      const q = req.query as Query;
      const filter = filterOf(q);
      const org = q['searchBy[organisationId]'];
      if (org !== undefined) filter.organisationId = org === 'platform' ? null : org;
      return answer(services, q, filter, reply);
    },
  );
  app.get(
    '/commons/v1/audit',
    {
      schema: {
        tags: ['Commons'],
        security,
        summary: "The organisation's audit log: its changes, newest first, with filters; format=csv for CSV",
        querystring: OrganisationQuery,
        response: { 200: AuditList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req: FastifyRequest, reply) => {
      const principal = await authorize(services, req, 'organisation:admin');
      const q = req.query as Query;
      return answer(services, q, { ...filterOf(q), organisationId: principal.credential.organisationId }, reply);
    },
  );
}
