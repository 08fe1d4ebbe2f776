import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ChannelType, type Permission, type Role, rolesAllow } from '../../domain/tenancy.ts';
import type { AuditActor } from '../../core/audit/service.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import { csrfTokenMatches, OPERATOR_ORGANISATION, SESSION_TTL_MS, type UserSession } from '../../core/tenancy/users.ts';
import type { Services } from '../../core/services.ts';
import { fail, type Quota } from '../../core/errors.ts';
import { takeTurn } from '../http-turns.ts';

function apiKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers['x-api-key'];
  return Array.isArray(v) ? v[0] : v;
}

/** The console session's cookie: HttpOnly, SameSite=Lax, Secure when Tern is reached over HTTPS. */
export const SESSION_COOKIE = 'tern_session';
/** The header a signed-in page sends its CSRF token in, on every request that changes something. */
export const CSRF_HEADER = 'x-csrf-token';
/** The header a signed-in person names the channel they act on with (else the organisation's first of the API's type). */
export const CHANNEL_HEADER = 'x-tern-channel';

export function sessionTokenOf(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

function secureCookies(services: Services, req: FastifyRequest): boolean {
  return req.protocol === 'https' || (services.http.publicUrl ?? '').startsWith('https:');
}

export function setSessionCookie(services: Services, req: FastifyRequest, reply: FastifyReply, token: string): void {
  const secure = secureCookies(services, req) ? '; Secure' : '';
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_MS / 1000}${secure}`);
}

export function clearSessionCookie(services: Services, req: FastifyRequest, reply: FastifyReply): void {
  const secure = secureCookies(services, req) ? '; Secure' : '';
  reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure}`);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser request that changes something must come from Tern's own pages: when it names its origin, that is this
 * server's (TERN_PUBLIC_URL's, else the Host the client used). Requests without an Origin (curl, the CLI) pass this
 * check; with a session cookie they still need the CSRF token.
 */
export function checkOrigin(services: Services, req: FastifyRequest): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.origin;
  if (!origin) return;
  const own = services.http.publicUrl ? new URL(services.http.publicUrl).origin : `${req.protocol}://${req.headers.host ?? ''}`;
  if (origin !== own) fail('FORBIDDEN_CSRF', `a request from ${origin} may not act on this server's session`);
}

/** The one check of roles: whether `roles` may do `permission` (the table is GRANTS in src/domain/tenancy.ts). */
function requirePermission(roles: readonly Role[], permission: Permission): void {
  if (!rolesAllow(roles, permission)) fail('FORBIDDEN_ROLE', `roles ${roles.join(', ')} may not perform ${permission}`);
}

/**
 * Who made a request (an audit entry records them): a signed-in person (USER), an API key (KEY) or the operator key
 * (OPERATOR), and the organisation acted for (null: the operator's own API).
 */
export interface Actor {
  actor: AuditActor;
  organisationId: string | null;
}

const ACTORS = new WeakMap<FastifyRequest, Actor>();

export function actorOf(req: FastifyRequest): Actor | undefined {
  return ACTORS.get(req);
}

const SESSIONS = new WeakMap<FastifyRequest, UserSession | null>();

/**
 * The request's console session when it carries no API key (a key wins over a cookie), or null. An ended session is
 * refused rather than ignored, so the console knows to sign in again. A request that changes something needs the
 * session's CSRF token and, when it says where it comes from, this server's origin.
 */
export async function sessionOf(services: Services, req: FastifyRequest): Promise<UserSession | null> {
  if (SESSIONS.has(req)) return SESSIONS.get(req)!;
  const token = apiKeyOf(req) === undefined ? sessionTokenOf(req) : undefined;
  let session: UserSession | null = null;
  if (token) {
    session = await services.users.session(token);
    if (!session) fail('INVALID_LOGIN', 'this console session has ended: sign in again');
    checkOrigin(services, req);
    if (!SAFE_METHODS.has(req.method)) {
      const presented = req.headers[CSRF_HEADER];
      if (!csrfTokenMatches(token, Array.isArray(presented) ? presented[0] : presented)) {
        fail('FORBIDDEN_CSRF', `send the session's CSRF token (from /commons/v1/me) in the ${CSRF_HEADER} header`);
      }
    }
  }
  SESSIONS.set(req, session);
  return session;
}

/** The channel a signed-in person acts on: the path's, the header's, else the organisation's first (of the API's type). */
async function channelForSession(services: Services, req: FastifyRequest, organisationId: string, channelType?: ChannelType): Promise<Principal['channel']> {
  const channels = (await services.tenancy.listChannels([organisationId])).filter((c) => c.state === 'ACTIVE');
  const params = (req.params ?? {}) as Record<string, unknown>;
  const header = req.headers[CHANNEL_HEADER];
  const named = typeof params.channelId === 'string' ? params.channelId : Array.isArray(header) ? header[0] : header;
  if (named) {
    const c = channels.find((ch) => ch.id === named);
    if (!c) fail('FORBIDDEN_CHANNEL', `is not a channel of this organisation`, typeof params.channelId === 'string' ? 'path.channelId' : CHANNEL_HEADER);
    return c;
  }
  const c = channelType ? channels.find((ch) => ch.type === channelType) : channels[0];
  if (!c) fail('NOT_FOUND', channelType ? `this organisation has no active ${channelType} channel` : 'this organisation has no active channel');
  return c;
}

/**
 * Authenticates the request — its X-Api-Key, else its console session cookie — and checks it may do `permission`; on
 * a channel API (`channelType`), the key's channel must be of that type (403.005 otherwise). Then waits for its
 * organisation's turn (TenantAdmission). Every customer route comes through here, and roles are checked here only.
 */
export async function authorize(services: Services, req: FastifyRequest, permission: Permission, channelType?: ChannelType): Promise<Principal> {
  const session = await sessionOf(services, req);
  if (session) return authorizeSession(services, req, session, permission, channelType);
  const { principal, quota } = await services.access.enter('rest', apiKeyOf(req), req.ip, permission);
  QUOTAS.set(req, quota);
  ACTORS.set(req, { actor: { type: 'KEY', id: principal.credential.id }, organisationId: principal.channel.organisationId });
  if (channelType && principal.channel.type !== channelType) {
    fail('CHANNEL_TYPE_MISMATCH', `this API serves ${channelType} channels; the key belongs to a ${principal.channel.type} channel`);
  }
  requirePermission(principal.credential.roles, permission);
  await takeTurn(services, req, principal.channel.organisationId);
  return principal;
}

async function authorizeSession(
  services: Services,
  req: FastifyRequest,
  session: UserSession,
  permission: Permission,
  channelType?: ChannelType,
): Promise<Principal> {
  const { user } = session;
  ACTORS.set(req, { actor: { type: 'USER', id: user.id }, organisationId: user.organisationId === OPERATOR_ORGANISATION ? null : user.organisationId });
  if (user.organisationId === OPERATOR_ORGANISATION) fail('FORBIDDEN_ADMIN', "the operator's people use the operator API (/admin/v1)");
  requirePermission([user.role], permission);
  QUOTAS.set(req, await services.access.takeForUser(permission, user.id, user.organisationId));
  const channel = await channelForSession(services, req, user.organisationId, channelType);
  if (channelType && channel.type !== channelType) {
    fail('CHANNEL_TYPE_MISMATCH', `this API serves ${channelType} channels; channel ${channel.id} is a ${channel.type} channel`);
  }
  await takeTurn(services, req, user.organisationId);
  return {
    credential: {
      id: user.id,
      channelId: channel.id,
      organisationId: user.organisationId,
      name: user.email,
      keyHash: '',
      keyPrefix: '',
      roles: [user.role],
      state: 'ACTIVE',
      createdAt: user.createdAt,
      revokedAt: null,
    },
    channel,
    userId: user.id,
  };
}

/** Who acts on an organisation's people: its organisation, their roles, the user (for a session) or the key. */
export interface OrganisationActor {
  organisationId: string;
  roles: Role[];
  userId: string | null;
  keyId: string | null;
}

/**
 * Like `authorize`, for routes about the organisation itself rather than one channel (its users, invitations and
 * single sign-on): no channel is chosen, so a person of an organisation without channels may use them.
 */
export async function authorizeOrganisation(services: Services, req: FastifyRequest, permission: Permission): Promise<OrganisationActor> {
  const session = await sessionOf(services, req);
  if (session) {
    const { user } = session;
    ACTORS.set(req, { actor: { type: 'USER', id: user.id }, organisationId: user.organisationId === OPERATOR_ORGANISATION ? null : user.organisationId });
    if (user.organisationId === OPERATOR_ORGANISATION) fail('FORBIDDEN_ADMIN', "the operator's people use the operator API (/admin/v1)");
    requirePermission([user.role], permission);
    QUOTAS.set(req, await services.access.takeForUser(permission, user.id, user.organisationId));
    return { organisationId: user.organisationId, roles: [user.role], userId: user.id, keyId: null };
  }
  const principal = await authorize(services, req, permission);
  return { organisationId: principal.credential.organisationId, roles: principal.credential.roles, userId: null, keyId: principal.credential.id };
}

/**
 * On a `/channels/{channelId}/…` path the key reaches only its own channel: any other id is refused (403), whoever
 * owns it, so the answer tells nothing about other channels.
 */
export function assertOwnChannel(principal: Principal, channelId: string): void {
  if (channelId !== principal.channel.id) fail('FORBIDDEN_CHANNEL', 'is not the channel of this key; a key reaches only its own channel', 'path.channelId');
}

/**
 * The operator API (/admin/v1): the operator key (TERN_ADMIN_KEY), or the session of one of the operator's own
 * people with the OWNER or ADMIN role.
 */
export async function requireAdmin(services: Services, req: FastifyRequest): Promise<void> {
  const key = apiKeyOf(req);
  if (key === undefined) {
    const session = await sessionOf(services, req);
    if (session) {
      const { user } = session;
      ACTORS.set(req, { actor: { type: 'USER', id: user.id }, organisationId: null });
      if (user.organisationId !== OPERATOR_ORGANISATION) fail('FORBIDDEN_ADMIN', "only the operator's people may use the operator API");
      requirePermission([user.role], 'users:admin');
      QUOTAS.set(req, await services.access.enterOperator(undefined, req.ip, Date.now(), true));
      return;
    }
  }
  QUOTAS.set(req, await services.access.enterOperator(key === '' ? undefined : key, req.ip));
  ACTORS.set(req, { actor: { type: 'OPERATOR', id: 'operator' }, organisationId: null });
}

/** The traffic quota a request was counted against, for its RateLimit-* headers. */
const QUOTAS = new WeakMap<FastifyRequest, Quota>();

export function quotaOf(req: FastifyRequest): Quota | undefined {
  return QUOTAS.get(req);
}

/** Base of `href` fields: TERN_PUBLIC_URL, else the address the client used. */
export function baseUrl(services: Services, req: FastifyRequest): string {
  return services.http.publicUrl ?? `${req.protocol}://${req.headers.host ?? `localhost:${services.http.port}`}`;
}
