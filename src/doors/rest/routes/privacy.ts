import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { omitNulls } from '../../../domain/absent.ts';
import { iso } from '../../../domain/dates.ts';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { baseUrl } from '../access.ts';
import { errorResponses, IdParams } from '../schemas.ts';

const ErasureBody = Type.Object({
  msisdn: Type.String({ minLength: 1, maxLength: 32, description: 'The number, international (33612345678, +33…) or national in the default country' }),
  keepOptOut: Type.Optional(
    Type.Boolean({ description: 'true (default): an opt-out of the number stays, so it is still honoured, its details reset; false: it is deleted' }),
  ),
});

const Count = Type.Integer({ minimum: 0 });
export const ErasureView = Type.Object({
  organisationId: Type.String(),
  msisdn: Type.String(),
  replacedBy: Type.String({ description: 'What stands for the number in the rows kept for accounting' }),
  optOut: Type.String({ enum: ['KEPT', 'ERASED'] }),
  rows: Type.Object(
    {
      messages: Count,
      inboundMessages: Count,
      messagesWaiting: Type.Integer({ minimum: 0, description: 'Messages to the number still waiting to be sent: left as they are' }),
      webhookDeliveries: Count,
      contacts: Count,
      contactGroupMemberships: Count,
      optOuts: Count,
      oneTimePasswords: Count,
      oneTimePasswordSends: Count,
      rcsConversations: Count,
    },
    { description: 'Rows changed or deleted, table by table' },
  ),
  erasedAt: Type.String(),
});

const NumberParams = Type.Object({ id: Type.String(), msisdn: Type.String({ minLength: 1, maxLength: 32 }) });

const ExportView = Type.Object({
  organisationId: Type.String(),
  msisdn: Type.String(),
  exportedAt: Type.String(),
  messages: Type.Array(Type.Object({}, { additionalProperties: true })),
  truncated: Type.Boolean({ description: 'true: the number has more messages than an export lists (10,000)' }),
  contacts: Type.Array(Type.Object({}, { additionalProperties: true })),
  optOut: Type.Optional(Type.Object({ source: Type.String(), createdAt: Type.String() }, { description: 'Absent: the number has not opted out' })),
});

/** The operator's privacy requests for an organisation: erasing a number's data, exporting it. */
export function privacyRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];

  app.post(
    '/admin/v1/organisations/:id/erasures',
    {
      schema: {
        tags,
        security,
        summary: "Erase a phone number's data in an organisation (texts, contacts, opt-out details); answers what was done",
        params: IdParams,
        body: ErasureBody,
        response: { 200: ErasureView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof ErasureBody>;
      const report = await underField('body.', () =>
        services.privacy.erase(id, body.msisdn, body.keepOptOut === undefined ? {} : { keepOptOut: body.keepOptOut }),
      );
      return { ...report, erasedAt: iso(report.erasedAt) };
    },
  );

  app.get(
    '/admin/v1/organisations/:id/numbers/:msisdn/export',
    {
      schema: {
        tags,
        security,
        summary: 'Export what an organisation keeps about a phone number (messages, contacts, opt-out), as JSON',
        params: NumberParams,
        response: { 200: ExportView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id, msisdn } = req.params as Static<typeof NumberParams>;
      const { optOut, ...data } = await underField('params.', () => services.privacy.export(id, msisdn, baseUrl(services, req)));
      return {
        ...data,
        exportedAt: iso(data.exportedAt),
        contacts: data.contacts.map((c) => omitNulls({ ...c, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) })),
        ...(optOut ? { optOut: { source: optOut.source, createdAt: iso(optOut.createdAt) } } : {}),
      };
    },
  );
}
