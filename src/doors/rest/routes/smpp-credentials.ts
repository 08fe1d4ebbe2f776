import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { MAX_ALLOWED_IPS, MAX_PASSWORD_LENGTH, MAX_SMPP_WINDOW, MAX_SYSTEM_ID_LENGTH } from '../../../core/tenancy/smpp-credentials.ts';
import type { SmppCredential } from '../../../core/types.ts';
import { errorResponses, IdParams } from '../schemas.ts';

export const SmppCredentialCreate = Type.Object(
  {
    systemId: Type.String({ minLength: 1, maxLength: MAX_SYSTEM_ID_LENGTH, description: 'SMPP system_id, unique across Tern' }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'SMPP password (stored hashed, never returned)' }),
    allowedIps: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: MAX_ALLOWED_IPS,
        description: 'Addresses or CIDR ranges binds may come from; empty or absent: any',
      }),
    ),
    maxBinds: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Sessions bound at once; default 10' })),
    tps: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'submit_sm a second (ESME_RTHROTTLED above); 0: no limit' })),
    window: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SMPP_WINDOW,
        description:
          'deliver_sm (receipts, MO) one session sends before waiting for their deliver_sm_resp; 0: the server setting TERN_SMPP_WINDOW. Sessions bound later use a change.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SmppCredentialPatch = Type.Object(
  {
    password: Type.Optional(SmppCredentialCreate.properties.password),
    allowedIps: Type.Optional(SmppCredentialCreate.properties.allowedIps),
    maxBinds: Type.Optional(SmppCredentialCreate.properties.maxBinds),
    tps: Type.Optional(SmppCredentialCreate.properties.tps),
    window: Type.Optional(SmppCredentialCreate.properties.window),
  },
  { additionalProperties: false },
);

export const SmppCredentialView = Type.Object({
  smppCredentialId: Type.String(),
  systemId: Type.String(),
  channelId: Type.String(),
  organisationId: Type.String(),
  allowedIps: Type.Array(Type.String()),
  maxBinds: Type.Integer(),
  tps: Type.Integer(),
  window: Type.Integer(),
  state: Type.String(),
  creationDate: Type.String(),
});

export function smppCredentialView(c: SmppCredential): Static<typeof SmppCredentialView> {
  return {
    smppCredentialId: c.id,
    systemId: c.systemId,
    channelId: c.channelId,
    organisationId: c.organisationId,
    allowedIps: c.allowedIps,
    maxBinds: c.maxBinds,
    tps: c.tps,
    window: c.window,
    state: c.state,
    creationDate: new Date(c.createdAt).toISOString(),
  };
}

/** SMPP credentials of SMS channels (operator API; the /admin/ prefix is guarded by the operator key). */
export function smppAdminRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];
  const credentials = services.smppCredentials;

  app.post(
    '/admin/v1/channels/:id/smpp-credentials',
    {
      schema: {
        tags,
        security,
        summary: 'Create an SMPP credential (system_id and password) for an SMS channel',
        params: IdParams,
        body: SmppCredentialCreate,
        response: { 201: SmppCredentialView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof SmppCredentialCreate>;
      const created = await underField('body.', () => credentials.create(id, body));
      return reply.code(201).send(smppCredentialView(created));
    },
  );

  app.get(
    '/admin/v1/channels/:id/smpp-credentials',
    {
      schema: {
        tags,
        security,
        summary: "List a channel's SMPP credentials (without their passwords)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(SmppCredentialView) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      return { items: (await credentials.list(id)).map(smppCredentialView) };
    },
  );

  app.patch(
    '/admin/v1/smpp-credentials/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Change an SMPP credential (password, allowed addresses, maxBinds, tps): every node checks new binds against it at once',
        description: 'Sessions already bound stay bound; their submits are held to the new tps.',
        params: IdParams,
        body: SmppCredentialPatch,
        response: { 200: SmppCredentialView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as Static<typeof SmppCredentialPatch>;
      return smppCredentialView(await underField('body.', () => credentials.update(id, body)));
    },
  );

  app.delete(
    '/admin/v1/smpp-credentials/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Delete an SMPP credential: new binds are refused, bound sessions can no longer submit',
        params: IdParams,
        response: { 200: SmppCredentialView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => smppCredentialView(await credentials.delete((req.params as { id: string }).id)),
  );
}
