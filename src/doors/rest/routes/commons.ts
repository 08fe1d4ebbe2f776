import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { rolesAllow, seesOrganisation } from '../../../domain/tenancy.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import { authorize, baseUrl } from '../access.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';
import { ChannelView, channelView } from '../views.ts';
import { channelPatchFrom } from './admin.ts';

// Nullable, not a union with null: ajv's coercion would read a null as "" in the string branch, and null removes a value.
const ChannelCustomerPatch = Type.Object({
  defaultFromField: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 20 }))),
  defaultCallbackUrlStatus: Type.Optional(Nullable(Type.String())),
  defaultCallbackUrlMo: Type.Optional(Nullable(Type.String())),
  shortLinks: Type.Optional(Type.Boolean({ description: 'replace long URLs in its SMS by tracked short links (the server must set TERN_SHORT_LINK_BASE)' })),
});

const WebhookSecretView = Type.Object({
  channelId: Type.String(),
  secret: Type.String({ description: 'Standard Webhooks signing secret (whsec_…)' }),
  previousSecret: Type.Optional(Type.String({ description: 'While the previous secret still signs (24 h after a rotation)' })),
  previousSecretValidUntil: Type.Optional(Type.String()),
});

/**
 * Whether the principal may see a channel: its own always; any channel of its organisation for MANAGER/ADMIN.
 * A channel outside its reach answers 404, so ids of other customers are not revealed.
 */
export async function reachableChannel(services: Services, principal: Principal, channelId: string) {
  if (channelId === principal.channel.id) return principal.channel;
  const channel = await services.tenancy.getChannel(channelId).catch(() => null);
  if (!channel || channel.organisationId !== principal.credential.organisationId || !seesOrganisation(principal.credential.roles)) {
    fail('NOT_FOUND', `channel ${channelId} not found`);
  }
  return channel;
}

/** The organisations a principal may read: its own, and for ADMIN keys its sub-organisations too. */
export async function reachableOrganisationIds(services: Services, principal: Principal): Promise<string[]> {
  const own = principal.credential.organisationId;
  return rolesAllow(principal.credential.roles, 'organisation:admin') || rolesAllow(principal.credential.roles, 'funds:transfer')
    ? services.tenancy.treeIds(own)
    : [own];
}

export function commonsRoutes(app: FastifyInstance, services: Services): void {
  const { tenancy } = services;
  const tags = ['Commons'];
  const security = [{ apiKey: [] }];

  app.get(
    '/commons/v1/channels',
    {
      schema: {
        tags,
        security,
        summary: "The key's channel",
        response: { 200: Type.Object({ items: Type.Array(ChannelView) }), ...errorResponses(401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:read');
      const channel = await tenancy.getChannel(principal.channel.id);
      return { items: [channelView(channel, await tenancy.channelConsumption(channel.id), baseUrl(services, req))] };
    },
  );

  app.get(
    '/commons/v1/channels/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read a channel',
        params: IdParams,
        response: { 200: ChannelView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:read');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      const fresh = await tenancy.getChannel(channel.id);
      return channelView(fresh, await tenancy.channelConsumption(channel.id), baseUrl(services, req));
    },
  );

  app.patch(
    '/commons/v1/channels/:id',
    {
      schema: {
        tags,
        security,
        summary: "Change a channel's default sender, callback URLs and short links",
        params: IdParams,
        body: ChannelCustomerPatch,
        response: { 200: ChannelView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      const updated = await tenancy.updateChannel(channel.id, channelPatchFrom(req.body as Static<typeof ChannelCustomerPatch>));
      return channelView(updated, await tenancy.channelConsumption(channel.id), baseUrl(services, req));
    },
  );

  const secretView = (c: Awaited<ReturnType<typeof tenancy.getChannel>>, now = Date.now()) => {
    const previousValid = c.webhookSecretPrevious !== null && (c.webhookSecretPreviousUntil ?? 0) > now;
    return {
      channelId: c.id,
      secret: c.webhookSecret,
      ...(previousValid && {
        previousSecret: c.webhookSecretPrevious!,
        previousSecretValidUntil: new Date(c.webhookSecretPreviousUntil!).toISOString(),
      }),
    };
  };

  app.get(
    '/commons/v1/channels/:id/webhook-secret',
    {
      schema: {
        tags,
        security,
        summary: "Read the channel's webhook signing secret (ADMIN key)",
        params: IdParams,
        response: { 200: WebhookSecretView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      return secretView(await tenancy.getChannel(channel.id));
    },
  );

  app.post(
    '/commons/v1/channels/:id/webhook-secret/rotate',
    {
      schema: {
        tags,
        security,
        summary: 'Rotate the webhook signing secret; the previous one keeps signing for 24 h',
        params: IdParams,
        response: { 200: WebhookSecretView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'channel:write');
      const channel = await reachableChannel(services, principal, (req.params as { id: string }).id);
      return secretView(await tenancy.rotateWebhookSecret(channel.id));
    },
  );
}
