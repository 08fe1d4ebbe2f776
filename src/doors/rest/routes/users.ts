import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { USER_ROLES, type UserRole } from '../../../domain/tenancy.ts';
import { fail } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import type { SsoConfig } from '../../../core/tenancy/sso.ts';
import { type Actor, csrfTokenOf, type Invitation, normaliseEmail, OPERATOR_ORGANISATION, type User } from '../../../core/tenancy/users.ts';
import {
  authorizeOrganisation,
  baseUrl,
  checkOrigin,
  clearSessionCookie,
  type OrganisationActor,
  requireAdmin,
  sessionOf,
  sessionTokenOf,
  setSessionCookie,
} from '../access.ts';
import { errorResponses, Uuid } from '../schemas.ts';

const Role = Type.String({ enum: [...USER_ROLES] });

export const UserView = Type.Object({
  userId: Type.String(),
  organisationId: Type.String(),
  email: Type.String(),
  name: Type.Optional(Type.String()),
  role: Role,
  password: Type.Boolean({ description: 'whether the user has a password (else single sign-on only)' }),
  singleSignOn: Type.Boolean(),
  creationDate: Type.String(),
  lastSignInDate: Type.Optional(Type.String()),
});

export function userView(u: User): Static<typeof UserView> {
  return {
    userId: u.id,
    organisationId: u.organisationId,
    email: u.email,
    ...(u.name !== null && { name: u.name }),
    role: u.role,
    password: u.hasPassword,
    singleSignOn: u.sso,
    creationDate: new Date(u.createdAt).toISOString(),
    ...(u.signedInAt !== null && { lastSignInDate: new Date(u.signedInAt).toISOString() }),
  };
}

const InvitationView = Type.Object({
  invitationId: Type.String(),
  organisationId: Type.String(),
  email: Type.String(),
  role: Role,
  creationDate: Type.String(),
  expirationDate: Type.String(),
  url: Type.Optional(Type.String({ description: 'the one-time link to send to the person (shown once, when the invitation is made)' })),
});

function invitationView(i: Invitation, url?: string): Static<typeof InvitationView> {
  return {
    invitationId: i.id,
    organisationId: i.organisationId,
    email: i.email,
    role: i.role,
    creationDate: new Date(i.createdAt).toISOString(),
    expirationDate: new Date(i.expiresAt).toISOString(),
    ...(url && { url }),
  };
}

const SignedIn = Type.Object({
  user: UserView,
  csrfToken: Type.String({ description: `send it in the X-CSRF-Token header of every request that changes something` }),
});
const SignIn = Type.Object({ email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) });
const InvitationCreate = Type.Object({ email: Type.String({ maxLength: 320 }), role: Role });
const Accept = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 100 }),
  password: Type.String({ maxLength: 1024 }),
  name: Type.Optional(Type.String({ maxLength: 200 })),
});
const Reset = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }), password: Type.String({ maxLength: 1024 }) });
const RoleChange = Type.Object({ role: Role });
const ResetLink = Type.Object({ url: Type.String(), expirationDate: Type.String() });
const UserParams = Type.Object({ userId: Uuid });
const InvitationParams = Type.Object({ invitationId: Uuid });
const OrgParams = Type.Object({ organisationId: Type.String({ minLength: 1, maxLength: 100 }) });
const OrgUserParams = Type.Object({ organisationId: Type.String({ minLength: 1, maxLength: 100 }), userId: Uuid });

const SsoView = Type.Object({
  organisationId: Type.String(),
  issuer: Type.String(),
  clientId: Type.String(),
  allowedDomains: Type.Array(Type.String()),
  defaultRole: Role,
  groupsClaim: Type.String(),
  groupRoles: Type.Array(Type.Object({ group: Type.String(), role: Role })),
  redirectUri: Type.String({ description: 'the redirect URI to register with the provider' }),
  signInUrl: Type.String({ description: "where the console's single sign-on button sends people" }),
  updateDate: Type.String(),
});
const SsoUpdate = Type.Object({
  issuer: Type.String({ maxLength: 2000 }),
  clientId: Type.String({ maxLength: 500 }),
  clientSecret: Type.Optional(Type.String({ maxLength: 2000, description: 'left out: the stored one is kept' })),
  allowedDomains: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 100 }),
  defaultRole: Role,
  groupsClaim: Type.Optional(Type.String({ maxLength: 100 })),
  groupRoles: Type.Optional(Type.Array(Type.Object({ group: Type.String({ maxLength: 200 }), role: Role }), { maxItems: 100 })),
});
/** Routes that take no input: an empty JSON object, or no body at all. */
const NoBody = Type.Object({}, { additionalProperties: false, description: 'nothing: an empty object or no body' });
/** A request without a body reads as the empty object NoBody documents. */
const emptyBody = (req: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
  req.body ??= {};
  done();
};
const SsoStart = Type.Object({
  organisationId: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.Optional(Type.String({ maxLength: 320 })),
});

function callbackUri(services: Services, req: FastifyRequest): string {
  return `${baseUrl(services, req)}/commons/v1/sso/callback`;
}

function ssoView(services: Services, req: FastifyRequest, c: SsoConfig): Static<typeof SsoView> {
  const base = baseUrl(services, req);
  return {
    organisationId: c.organisationId,
    issuer: c.issuer,
    clientId: c.clientId,
    allowedDomains: c.allowedDomains,
    defaultRole: c.defaultRole,
    groupsClaim: c.groupsClaim,
    groupRoles: c.groupRoles,
    redirectUri: callbackUri(services, req),
    signInUrl: `${base}/commons/v1/sso/start?organisationId=${encodeURIComponent(c.organisationId)}`,
    updateDate: new Date(c.updatedAt).toISOString(),
  };
}

/** The console's pages for one-time links (the console reads the token from the hash, never sent to a server log). */
function linkUrl(services: Services, req: FastifyRequest, page: 'invitation' | 'reset', token: string): string {
  return `${baseUrl(services, req)}/console/#/${page}?token=${token}`;
}

function actorOf(a: OrganisationActor): Actor {
  const role: UserRole = a.roles.includes('OWNER') ? 'OWNER' : 'ADMIN';
  return { userId: a.userId, role };
}

const OPERATOR: Actor = { userId: null, role: null };

function signedIn(reply: FastifyReply, services: Services, req: FastifyRequest, user: User, session: string) {
  setSessionCookie(services, req, reply, session);
  return { user: userView(user), csrfToken: csrfTokenOf(session) };
}

/**
 * People: sign-in with email and password (a session cookie and its CSRF token), who is signed in, sign-out; users and
 * invitations of an organisation (OWNER and ADMIN); one-time links (accepting an invitation, resetting a password);
 * single sign-on with OpenID Connect. The operator manages any organisation's people, and its own, under /admin/v1.
 */
export function userRoutes(app: FastifyInstance, services: Services): void {
  const { users, sso, access } = services;
  const tags = ['Users'];
  const security = [{ apiKey: [] }];

  app.post(
    '/commons/v1/sign-in',
    {
      schema: {
        tags,
        summary: 'Sign in with email and password: sets the session cookie',
        body: SignIn,
        response: { 200: SignedIn, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      checkOrigin(services, req);
      const body = req.body as Static<typeof SignIn>;
      const { user, session } = await access.signIn(req.ip, `${body.email.toLowerCase()}|${body.password}`, () => users.signIn(body.email, body.password));
      return signedIn(reply, services, req, user, session);
    },
  );

  app.post(
    '/commons/v1/sign-out',
    {
      preValidation: emptyBody,
      schema: { tags, summary: 'Sign out: ends the session', body: NoBody, response: { 204: Type.Null(), ...errorResponses(401, 403) } },
    },
    async (req, reply) => {
      const token = sessionTokenOf(req);
      // An ended session signs out without complaint; a live one needs its CSRF token (no page elsewhere signs people out).
      if (token && (await users.session(token))) await sessionOf(services, req);
      if (token) await users.signOut(token);
      clearSessionCookie(services, req, reply);
      return reply.code(204).send();
    },
  );

  app.get(
    '/commons/v1/me',
    { schema: { tags, summary: 'Who is signed in, and the CSRF token of the session', response: { 200: SignedIn, ...errorResponses(401) } } },
    async (req) => {
      const session = await sessionOf(services, req);
      if (!session) fail('MISSING_API_KEY', 'not signed in');
      return { user: userView(session.user), csrfToken: csrfTokenOf(sessionTokenOf(req)!) };
    },
  );

  app.post(
    '/commons/v1/invitations/accept',
    {
      schema: {
        tags,
        summary: 'Accept an invitation with a password: creates the user and signs them in',
        body: Accept,
        response: { 200: SignedIn, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (req, reply) => {
      checkOrigin(services, req);
      const body = req.body as Static<typeof Accept>;
      const { user, session } = await access.signIn(req.ip, body.token, () => users.acceptInvitation(body.token, body));
      return signedIn(reply, services, req, user, session);
    },
  );

  app.post(
    '/commons/v1/password-reset',
    {
      schema: {
        tags,
        summary: 'Set a new password with a reset link: ends every session of the user and signs in',
        body: Reset,
        response: { 200: SignedIn, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      checkOrigin(services, req);
      const body = req.body as Static<typeof Reset>;
      const { user, session } = await access.signIn(req.ip, body.token, () => users.resetPassword(body.token, body.password));
      return signedIn(reply, services, req, user, session);
    },
  );

  app.get(
    '/commons/v1/users',
    {
      schema: {
        tags,
        security,
        summary: "The organisation's users (OWNER, ADMIN)",
        response: { 200: Type.Object({ items: Type.Array(UserView) }), ...errorResponses(401, 403) },
      },
    },
    async (req) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      return { items: (await users.list(a.organisationId)).map(userView) };
    },
  );

  app.patch(
    '/commons/v1/users/:userId',
    {
      schema: {
        tags,
        security,
        summary: "Change a user's role (OWNER, ADMIN; only an OWNER gives or takes OWNER)",
        params: UserParams,
        body: RoleChange,
        response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      const { userId } = req.params as { userId: string };
      return userView(await users.changeRole(a.organisationId, userId, (req.body as Static<typeof RoleChange>).role, actorOf(a)));
    },
  );

  app.delete(
    '/commons/v1/users/:userId',
    {
      schema: {
        tags,
        security,
        summary: 'Remove a user (OWNER, ADMIN): their sessions end',
        params: UserParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      await users.remove(a.organisationId, (req.params as { userId: string }).userId, actorOf(a));
      return reply.code(204).send();
    },
  );

  app.post(
    '/commons/v1/users/:userId/password-reset',
    {
      preValidation: emptyBody,
      schema: {
        tags,
        security,
        summary: 'A one-time password reset link for a user (OWNER, ADMIN), valid one hour',
        params: UserParams,
        body: NoBody,
        response: { 201: ResetLink, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      const r = await users.passwordReset(a.organisationId, (req.params as { userId: string }).userId, actorOf(a));
      return reply.code(201).send({ url: linkUrl(services, req, 'reset', r.token), expirationDate: new Date(r.expiresAt).toISOString() });
    },
  );

  app.get(
    '/commons/v1/invitations',
    {
      schema: {
        tags,
        security,
        summary: 'Invitations not yet accepted (OWNER, ADMIN)',
        response: { 200: Type.Object({ items: Type.Array(InvitationView) }), ...errorResponses(401, 403) },
      },
    },
    async (req) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      return { items: (await users.invitations(a.organisationId)).map((i) => invitationView(i)) };
    },
  );

  app.post(
    '/commons/v1/invitations',
    {
      schema: {
        tags,
        security,
        summary: 'Invite someone by link with a role (OWNER, ADMIN), valid seven days',
        body: InvitationCreate,
        response: { 201: InvitationView, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      const { invitation, token } = await users.invite(a.organisationId, req.body as Static<typeof InvitationCreate>, actorOf(a));
      return reply.code(201).send(invitationView(invitation, linkUrl(services, req, 'invitation', token)));
    },
  );

  app.delete(
    '/commons/v1/invitations/:invitationId',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel an invitation (OWNER, ADMIN)',
        params: InvitationParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      await users.cancelInvitation(a.organisationId, (req.params as { invitationId: string }).invitationId);
      return reply.code(204).send();
    },
  );

  app.get(
    '/commons/v1/sso',
    { schema: { tags, security, summary: "The organisation's single sign-on (OWNER, ADMIN)", response: { 200: SsoView, ...errorResponses(401, 403, 404) } } },
    async (req) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      const c = await sso.get(a.organisationId);
      if (!c) fail('NOT_FOUND', 'this organisation has no single sign-on');
      return ssoView(services, req, c);
    },
  );

  app.put(
    '/commons/v1/sso',
    {
      schema: {
        tags,
        security,
        summary: "Set the organisation's OpenID Connect provider (OWNER, ADMIN)",
        body: SsoUpdate,
        response: { 200: SsoView, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (req) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      return ssoView(services, req, await sso.configure(a.organisationId, req.body as Static<typeof SsoUpdate>));
    },
  );

  app.delete(
    '/commons/v1/sso',
    {
      schema: {
        tags,
        security,
        summary: "Remove the organisation's single sign-on (OWNER, ADMIN)",
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (req, reply) => {
      const a = await authorizeOrganisation(services, req, 'users:admin');
      await sso.remove(a.organisationId);
      return reply.code(204).send();
    },
  );

  // The two single sign-on routes are browser navigations (answered by redirects), left out of the OpenAPI document
  // as short links are; docs/users.md describes them.
  app.get(
    '/commons/v1/sso/start',
    {
      schema: {
        tags,
        summary: "Sign in through an organisation's OpenID provider (by organisation id, or by an email of its domains): redirects there",
        querystring: SsoStart,
        hide: true,
        response: { 302: Type.Null(), ...errorResponses(400, 404, 503) },
      },
    },
    async (req, reply) => {
      const q = req.query as Static<typeof SsoStart>;
      let organisationId = q.organisationId;
      if (!organisationId && q.email) organisationId = (await sso.organisationForEmail(normaliseEmail(q.email, 'query.email'))) ?? undefined;
      if (!organisationId)
        fail(
          q.email ? 'NOT_FOUND' : 'INVALID_REQUEST',
          q.email ? 'no organisation signs this email domain in through single sign-on' : 'name an organisationId or an email',
        );
      const url = await sso.start(organisationId, callbackUri(services, req));
      return reply.redirect(url.href, 302);
    },
  );

  app.get(
    '/commons/v1/sso/callback',
    {
      schema: {
        tags,
        summary: "The OpenID provider's redirect back: signs in and redirects to the console",
        hide: true,
        response: { 302: Type.Null(), ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (req, reply) => {
      const url = new URL(req.url, `${baseUrl(services, req)}/`);
      const callback = new URL(`${callbackUri(services, req)}${url.search}`);
      const { session } = await access.signIn(req.ip, callback.searchParams.get('state') ?? '', () => sso.callback(callback));
      setSessionCookie(services, req, reply, session);
      return reply.redirect('/console/', 302);
    },
  );

  // The operator: any organisation's people, and its own (organisation `operator`).
  const adminTags = ['Admin'];
  const adminSecurity = [{ apiKey: [] }];
  const orgOf = async (organisationId: string): Promise<string> => {
    if (organisationId !== OPERATOR_ORGANISATION) await services.tenancy.getOrganisation(organisationId);
    return organisationId;
  };

  app.get(
    '/admin/v1/organisations/:organisationId/users',
    {
      schema: {
        tags: adminTags,
        security: adminSecurity,
        summary: "An organisation's users (`operator`: the operator's own)",
        params: OrgParams,
        response: { 200: Type.Object({ items: Type.Array(UserView) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      await requireAdmin(services, req);
      return { items: (await users.list(await orgOf((req.params as { organisationId: string }).organisationId))).map(userView) };
    },
  );

  app.post(
    '/admin/v1/organisations/:organisationId/invitations',
    {
      schema: {
        tags: adminTags,
        security: adminSecurity,
        summary: 'Invite someone to an organisation (`operator`: to the operator’s own people)',
        params: OrgParams,
        body: InvitationCreate,
        response: { 201: InvitationView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      await requireAdmin(services, req);
      const organisationId = await orgOf((req.params as { organisationId: string }).organisationId);
      const { invitation, token } = await users.invite(organisationId, req.body as Static<typeof InvitationCreate>, OPERATOR);
      return reply.code(201).send(invitationView(invitation, linkUrl(services, req, 'invitation', token)));
    },
  );

  app.patch(
    '/admin/v1/organisations/:organisationId/users/:userId',
    {
      schema: {
        tags: adminTags,
        security: adminSecurity,
        summary: "Change a user's role",
        params: OrgUserParams,
        body: RoleChange,
        response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      await requireAdmin(services, req);
      const p = req.params as { organisationId: string; userId: string };
      return userView(await users.changeRole(p.organisationId, p.userId, (req.body as Static<typeof RoleChange>).role, OPERATOR));
    },
  );

  app.delete(
    '/admin/v1/organisations/:organisationId/users/:userId',
    {
      schema: {
        tags: adminTags,
        security: adminSecurity,
        summary: 'Remove a user',
        params: OrgUserParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      await requireAdmin(services, req);
      const p = req.params as { organisationId: string; userId: string };
      await users.remove(p.organisationId, p.userId, OPERATOR);
      return reply.code(204).send();
    },
  );

  app.post(
    '/admin/v1/organisations/:organisationId/users/:userId/password-reset',
    {
      preValidation: emptyBody,
      schema: {
        tags: adminTags,
        security: adminSecurity,
        summary: 'A one-time password reset link for a user, valid one hour',
        params: OrgUserParams,
        body: NoBody,
        response: { 201: ResetLink, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await requireAdmin(services, req);
      const p = req.params as { organisationId: string; userId: string };
      const r = await users.passwordReset(p.organisationId, p.userId, OPERATOR);
      return reply.code(201).send({ url: linkUrl(services, req, 'reset', r.token), expirationDate: new Date(r.expiresAt).toISOString() });
    },
  );
}
