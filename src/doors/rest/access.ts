import type { FastifyRequest } from 'fastify';
import { type ChannelType, type Permission, rolesAllow } from '../../core/domain/tenancy.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import type { Services } from '../../core/services.ts';
import { fail, type Quota } from '../../core/errors.ts';
import { takeTurn } from '../http-turns.ts';

function apiKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers['x-api-key'];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Authenticates the request's X-Api-Key and checks it may do `permission`; on a channel API (`channelType`), the
 * key's channel must be of that type (403.005 otherwise). Then waits for its organisation's turn (TenantAdmission).
 */
export async function authorize(
  services: Services,
  req: FastifyRequest,
  permission: Permission,
  channelType?: ChannelType,
): Promise<Principal> {
  const { principal, quota } = await services.access.enter('rest', apiKeyOf(req), req.ip, permission);
  QUOTAS.set(req, quota);
  if (channelType && principal.channel.type !== channelType) {
    fail(
      'CHANNEL_TYPE_MISMATCH',
      `this API serves ${channelType} channels; the key belongs to a ${principal.channel.type} channel`,
    );
  }
  if (!rolesAllow(principal.credential.roles, permission)) {
    fail('FORBIDDEN_ROLE', `roles ${principal.credential.roles.join(', ')} may not perform ${permission}`);
  }
  await takeTurn(services, req, principal.channel.organisationId);
  return principal;
}

/**
 * On a `/channels/{channelId}/…` path the key reaches only its own channel: any other id is refused (403), whoever
 * owns it, so the answer tells nothing about other channels.
 */
export function assertOwnChannel(principal: Principal, channelId: string): void {
  if (channelId !== principal.channel.id) fail('FORBIDDEN_CHANNEL', 'is not the channel of this key; a key reaches only its own channel', 'path.channelId');
}

/** The operator key (TERN_ADMIN_KEY) guards /admin/v1. */
export async function requireAdmin(services: Services, req: FastifyRequest): Promise<void> {
  const key = apiKeyOf(req);
  QUOTAS.set(req, await services.access.enterOperator(key === '' ? undefined : key, req.ip));
}

/** The traffic quota a request was counted against, for its RateLimit-* headers. */
const QUOTAS = new WeakMap<FastifyRequest, Quota>();

export function quotaOf(req: FastifyRequest): Quota | undefined {
  return QUOTAS.get(req);
}

/** Base of `href` fields: TERN_PUBLIC_URL, else the address the client used. */
export function baseUrl(services: Services, req: FastifyRequest): string {
  return services.config.publicUrl ?? `${req.protocol}://${req.headers.host ?? `localhost:${services.config.httpPort}`}`;
}
