import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { ROLES, type Role } from '../../../domain/tenancy.ts';
import { fail, underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import type { SmppSessionView } from '../../../core/smpp/sessions.ts';
import { authorize } from '../access.ts';
import { errorResponses, IdParams, Uuid } from '../schemas.ts';
import { CredentialView, credentialView } from '../views.ts';
import { reachableChannel } from './commons.ts';
import { SmppCredentialCreate, SmppCredentialView, smppCredentialView } from './smpp-credentials.ts';

const CredentialCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  roles: Type.Array(Type.String({ enum: [...ROLES] }), { minItems: 1, maxItems: ROLES.length }),
});

const ChannelItemParams = Type.Object({ id: Uuid, credentialId: Uuid });

export const SmppSessionSchema = Type.Object({
  smppCredentialId: Type.String(),
  systemId: Type.String(),
  bindMode: Type.String({ enum: ['transmitter', 'receiver', 'transceiver'] }),
  remoteAddress: Type.String(),
  tls: Type.Boolean(),
  bindDate: Type.String(),
});

export function smppSessionView(s: SmppSessionView): Static<typeof SmppSessionSchema> {
  return {
    smppCredentialId: s.credentialId,
    systemId: s.systemId,
    bindMode: s.mode,
    remoteAddress: s.remoteAddress,
    tls: s.secure,
    bindDate: new Date(s.boundAt).toISOString(),
  };
}

/**
 * A channel's API keys and SMPP credentials, managed by an ADMIN key of its organisation (the smsmode
 * `/commons/v1/channels/{ch}/credentials` tree), and the SMPP sessions bound with them.
 */
export function keyRoutes(app: FastifyInstance, services: Services): void {
  const { tenancy, smppCredentials } = services;
  const tags = ['Commons'];
  const security = [{ apiKey: [] }];

  app.get(
    '/commons/v1/channels/:id/credentials',
    {
      schema: {
        tags,
        security,
        summary: "A channel's API keys, without their values (ADMIN key)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(CredentialView) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      return { items: (await tenancy.listCredentials(channel.id)).map((c) => credentialView(c, channel)) };
    },
  );

  app.post(
    '/commons/v1/channels/:id/credentials',
    {
      schema: {
        tags,
        security,
        summary: 'Create an API key on a channel (ADMIN key); its value is in this answer only',
        params: IdParams,
        body: CredentialCreate,
        response: { 201: CredentialView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      const body = req.body as Static<typeof CredentialCreate>;
      const { credential, value } = await underField('body.', () => tenancy.createCredential(channel.id, { name: body.name, roles: body.roles as Role[] }));
      return reply.code(201).send(credentialView(credential, channel, value));
    },
  );

  app.delete(
    '/commons/v1/channels/:id/credentials/:credentialId',
    {
      schema: {
        tags,
        security,
        summary: 'Revoke an API key of a channel (ADMIN key; not the key making the request)',
        params: ChannelItemParams,
        response: { 200: CredentialView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const { id, credentialId } = req.params as Static<typeof ChannelItemParams>;
      const channel = await reachableChannel(services, principal, id);
      const existing = (await tenancy.listCredentials(channel.id)).find((c) => c.id === credentialId);
      if (!existing) fail('NOT_FOUND', `credential ${credentialId} not found on channel ${channel.id}`);
      if (credentialId === principal.credential.id) fail('CONFLICT', 'path.credentialId: is the key making this request; revoke it with another key');
      return credentialView(await tenancy.revokeCredential(credentialId), channel);
    },
  );

  const smsChannel = async (principal: Awaited<ReturnType<typeof authorize>>, id: string) => {
    const channel = await reachableChannel(services, principal, id);
    if (channel.type !== 'SMS') fail('CHANNEL_TYPE_MISMATCH', `SMPP serves SMS channels; channel ${channel.id} is ${channel.type}`);
    return channel;
  };

  app.get(
    '/commons/v1/channels/:id/smpp-credentials',
    {
      schema: {
        tags,
        security,
        summary: "An SMS channel's SMPP credentials, without their passwords (ADMIN key)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(SmppCredentialView) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await smsChannel(principal, (req.params as { id: string }).id);
      return { items: (await smppCredentials.list(channel.id)).map(smppCredentialView) };
    },
  );

  app.post(
    '/commons/v1/channels/:id/smpp-credentials',
    {
      schema: {
        tags,
        security,
        summary: 'Create an SMPP credential (system_id and password) on an SMS channel (ADMIN key)',
        params: IdParams,
        body: SmppCredentialCreate,
        response: { 201: SmppCredentialView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await smsChannel(principal, (req.params as { id: string }).id);
      const body = req.body as Static<typeof SmppCredentialCreate>;
      return reply.code(201).send(smppCredentialView(await underField('body.', () => smppCredentials.create(channel.id, body))));
    },
  );

  app.delete(
    '/commons/v1/channels/:id/smpp-credentials/:credentialId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete an SMPP credential of a channel (ADMIN key): new binds are refused, bound sessions can no longer submit',
        params: ChannelItemParams,
        response: { 200: SmppCredentialView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const { id, credentialId } = req.params as Static<typeof ChannelItemParams>;
      const channel = await smsChannel(principal, id);
      const existing = await smppCredentials.get(credentialId);
      if (!existing || existing.channelId !== channel.id) fail('NOT_FOUND', `SMPP credential ${credentialId} not found on channel ${channel.id}`);
      return smppCredentialView(await smppCredentials.delete(credentialId));
    },
  );

  app.get(
    '/commons/v1/channels/:id/smpp-sessions',
    {
      schema: {
        tags,
        security,
        summary: "The SMPP sessions bound with a channel's credentials, on the node that answers (ADMIN key)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(SmppSessionSchema) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await smsChannel(principal, (req.params as { id: string }).id);
      const ids = (await smppCredentials.list(channel.id)).map((c) => c.id);
      return { items: services.smppSessions.list(ids).map(smppSessionView) };
    },
  );

  app.get(
    '/admin/v1/smpp-sessions',
    {
      schema: {
        tags: ['Admin'],
        security,
        summary: 'Every SMPP session bound to the node that answers',
        response: { 200: Type.Object({ items: Type.Array(SmppSessionSchema) }), ...errorResponses(401, 403) },
      },
    },
    async () => ({ items: services.smppSessions.list().map(smppSessionView) }),
  );
}
