import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { uuidv7 } from '../../domain/ids.ts';
import { isUserRole, type UserRole } from '../../domain/tenancy.ts';
import { fail } from '../errors.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import {
  countUsersWithRole,
  deleteExpiredUserRows,
  deleteInvitation,
  deleteSession,
  deleteSessionsOf,
  deleteUser,
  findLink,
  findSession,
  findUser,
  findUserByEmail,
  insertLink,
  insertSession,
  insertUser,
  listInvitations,
  listUsers,
  type UserLinkRow,
  type UserRow,
  updateUser,
  useLink,
} from '../../store/users.ts';
import { checkPassword, decoyHash, hashPassword, verifyPassword } from './passwords.ts';
import type { TenancyService } from './service.ts';

/** The organisation of the operator's own people (they reach the operator API, and no customer's data). */
export const OPERATOR_ORGANISATION = 'operator';

export const SESSION_TTL_MS = 12 * 3_600_000;
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
export const RESET_TTL_MS = 3_600_000;

export interface User {
  id: string;
  organisationId: string;
  email: string;
  name: string | null;
  role: UserRole;
  /** Whether the user has a password (else they sign in through single sign-on only). */
  hasPassword: boolean;
  sso: boolean;
  createdAt: number;
  signedInAt: number | null;
}

export interface Invitation {
  id: string;
  organisationId: string;
  email: string;
  role: UserRole;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
}

/** A signed-in person, as a request's cookie finds them. */
export interface UserSession {
  user: User;
  /** The session's token hash (sign-out deletes it). */
  tokenHash: string;
  expiresAt: number;
}

export function toUser(r: UserRow): User {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    email: r.email,
    name: r.name,
    role: r.role as UserRole,
    hasPassword: r.password_hash !== null,
    sso: r.sso_subject !== null,
    createdAt: Number(r.created_at),
    signedInAt: r.signed_in_at === null ? null : Number(r.signed_in_at),
  };
}

function toInvitation(r: UserLinkRow): Invitation {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    email: r.email,
    role: r.role as UserRole,
    createdBy: r.created_by,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
}

function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The CSRF token of a session: derived from the session's token, so it needs no storage, changes with every session
 * and cannot be computed by a page that cannot read the cookie (HttpOnly).
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`tern csrf ${sessionToken}`, 'utf8').digest('base64url');
}

export function csrfTokenMatches(sessionToken: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(csrfTokenOf(sessionToken));
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}\.[^\s@]{1,63}$/;

export function normaliseEmail(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value.length > 320 || !EMAIL.test(value.trim())) fail('INVALID_REQUEST', 'must be an email address', field);
  return value.trim().toLowerCase();
}

export function checkRole(value: unknown, field = 'role'): UserRole {
  if (!isUserRole(value)) fail('INVALID_REQUEST', 'must be one of OWNER, ADMIN, DEVELOPER, SENDER, BILLING, VIEWER', field);
  return value;
}

/** Who acts on users: an OWNER or ADMIN of the organisation (`role`), or the operator (`role` null). */
export interface Actor {
  userId: string | null;
  role: UserRole | null;
}

function mayGrant(actor: Actor, role: UserRole): void {
  // An ADMIN manages everyone but the owners; only an owner (or the operator) makes or unmakes one.
  if (role === 'OWNER' && actor.role !== null && actor.role !== 'OWNER') fail('FORBIDDEN_ROLE', 'only an OWNER may give or take the OWNER role', 'role');
}

/**
 * Console users: invitations by link, sign-in with email and password (scrypt), sessions, roles, password resets by
 * link. Sessions are read from the database at each request (no node keeps one in memory), so a sign-out, a role
 * change or a removal holds on every node at once.
 */
export class UserService {
  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
  ) {}

  private async organisationExists(organisationId: string): Promise<void> {
    if (organisationId === OPERATOR_ORGANISATION) return;
    if (!(await this.tenancy.findOrganisation(organisationId))) fail('NOT_FOUND', `organisation ${organisationId} not found`);
  }

  async list(organisationId: string): Promise<User[]> {
    return (await listUsers(this.store.db, organisationId)).map(toUser);
  }

  async get(organisationId: string, userId: string): Promise<User> {
    const row = await findUser(this.store.db, userId);
    if (!row || row.organisation_id !== organisationId) fail('NOT_FOUND', `user ${userId} not found`);
    return toUser(row);
  }

  /** An invitation to `email` with `role`: its one-time token (shown once; only its hash is kept). */
  async invite(
    organisationId: string,
    input: { email: unknown; role: unknown },
    actor: Actor,
    now = Date.now(),
  ): Promise<{ invitation: Invitation; token: string }> {
    const email = normaliseEmail(input.email);
    const role = checkRole(input.role);
    mayGrant(actor, role);
    await this.organisationExists(organisationId);
    if (await findUserByEmail(this.store.db, email)) fail('CONFLICT', `a user with email ${email} exists already`, 'email');
    const token = newToken();
    const row: UserLinkRow = {
      token_hash: tokenHash(token),
      id: uuidv7(now),
      kind: 'INVITATION',
      organisation_id: organisationId,
      user_id: null,
      email,
      role,
      created_by: actor.userId,
      created_at: now,
      expires_at: now + INVITATION_TTL_MS,
      used_at: null,
    };
    await insertLink(this.store.db, row);
    return { invitation: toInvitation(row), token };
  }

  async invitations(organisationId: string, now = Date.now()): Promise<Invitation[]> {
    return (await listInvitations(this.store.db, organisationId, now)).map(toInvitation);
  }

  async cancelInvitation(organisationId: string, id: string): Promise<void> {
    if (!(await deleteInvitation(this.store.db, organisationId, id))) fail('NOT_FOUND', `invitation ${id} not found or already accepted`);
  }

  /** What a one-time link is for, to show before it is used; INVALID_LOGIN when it is unknown, used or expired. */
  async link(token: string, kind: 'INVITATION' | 'PASSWORD_RESET', now = Date.now()): Promise<UserLinkRow> {
    const row = token ? await findLink(this.store.db, tokenHash(token)) : null;
    if (!row || row.kind !== kind || row.used_at !== null || Number(row.expires_at) <= now) {
      fail('INVALID_LOGIN', kind === 'INVITATION' ? 'this invitation is unknown, used or expired' : 'this reset link is unknown, used or expired', 'token');
    }
    return row;
  }

  /** Accepts an invitation: the user is created with the invitation's role and the password, and signed in. */
  async acceptInvitation(token: string, input: { password: unknown; name?: unknown }, now = Date.now()): Promise<{ user: User; session: string }> {
    const password = checkPassword(input.password);
    const name = input.name === undefined || input.name === null ? null : String(input.name).trim().slice(0, 200) || null;
    const link = await this.link(token, 'INVITATION', now);
    const passwordHash = await hashPassword(password);
    const user = await inTransaction(this.store, async (trx) => {
      if (!(await useLink(trx, link.token_hash, now))) fail('INVALID_LOGIN', 'this invitation is unknown, used or expired', 'token');
      if (await findUserByEmail(trx, link.email)) fail('CONFLICT', `a user with email ${link.email} exists already`, 'email');
      const row: UserRow = {
        id: uuidv7(now),
        organisation_id: link.organisation_id,
        email: link.email,
        name,
        role: link.role,
        password_hash: passwordHash,
        sso_subject: null,
        state: 'ACTIVE',
        created_at: now,
        updated_at: now,
        signed_in_at: now,
      };
      await insertUser(trx, row);
      return toUser(row);
    });
    return { user, session: await this.openSession(user.id, now) };
  }

  /** Email and password: a session, or INVALID_LOGIN (the same answer, after the same work, for an unknown email). */
  async signIn(emailInput: unknown, passwordInput: unknown, now = Date.now()): Promise<{ user: User; session: string }> {
    if (typeof passwordInput !== 'string' || passwordInput.length === 0 || passwordInput.length > 1024)
      fail('INVALID_REQUEST', 'must be a password', 'password');
    const email = normaliseEmail(emailInput);
    const row = await findUserByEmail(this.store.db, email);
    const ok = await verifyPassword(passwordInput, row?.password_hash ?? (await decoyHash()));
    if (!row || !ok || row.password_hash === null || row.state !== 'ACTIVE') fail('INVALID_LOGIN', 'unknown email or wrong password');
    await updateUser(this.store.db, row.id, { signed_in_at: now });
    return { user: toUser({ ...row, signed_in_at: now }), session: await this.openSession(row.id, now) };
  }

  /** A new session for a user: its token, for the cookie (only its hash is kept). */
  async openSession(userId: string, now = Date.now()): Promise<string> {
    const token = newToken();
    await insertSession(this.store.db, { token_hash: tokenHash(token), user_id: userId, created_at: now, expires_at: now + SESSION_TTL_MS });
    return token;
  }

  /** The session a cookie's token opens, or null (unknown, expired, or its user removed). */
  async session(token: string, now = Date.now()): Promise<UserSession | null> {
    if (!token || token.length > 100) return null;
    const hash = tokenHash(token);
    const s = await findSession(this.store.db, hash);
    if (!s || Number(s.expires_at) <= now) return null;
    const row = await findUser(this.store.db, s.user_id);
    if (!row || row.state !== 'ACTIVE') return null;
    return { user: toUser(row), tokenHash: hash, expiresAt: Number(s.expires_at) };
  }

  async signOut(token: string): Promise<void> {
    await deleteSession(this.store.db, tokenHash(token));
  }

  /** Changes a user's role; the organisation's last OWNER keeps theirs. */
  async changeRole(organisationId: string, userId: string, roleInput: unknown, actor: Actor, now = Date.now()): Promise<User> {
    const role = checkRole(roleInput);
    return inTransaction(this.store, async (trx) => {
      const row = await findUser(trx, userId);
      if (!row || row.organisation_id !== organisationId) fail('NOT_FOUND', `user ${userId} not found`);
      mayGrant(actor, role);
      if (row.role === 'OWNER') mayGrant(actor, 'OWNER');
      if (row.role === 'OWNER' && role !== 'OWNER' && (await countUsersWithRole(trx, organisationId, 'OWNER')) <= 1) {
        fail('CONFLICT', 'is the last OWNER of the organisation; make another user OWNER first', 'role');
      }
      await updateUser(trx, userId, { role, updated_at: now });
      return toUser({ ...row, role, updated_at: now });
    });
  }

  /** Removes a user and ends their sessions; the organisation's last OWNER stays. */
  async remove(organisationId: string, userId: string, actor: Actor): Promise<void> {
    await inTransaction(this.store, async (trx) => {
      const row = await findUser(trx, userId);
      if (!row || row.organisation_id !== organisationId) fail('NOT_FOUND', `user ${userId} not found`);
      if (row.role === 'OWNER') mayGrant(actor, 'OWNER');
      if (row.role === 'OWNER' && (await countUsersWithRole(trx, organisationId, 'OWNER')) <= 1) {
        fail('CONFLICT', 'is the last OWNER of the organisation; make another user OWNER first', 'path.userId');
      }
      await deleteUser(trx, userId);
    });
  }

  /** A one-time password reset link's token for a user (the operator's or an OWNER/ADMIN's doing). */
  async passwordReset(organisationId: string, userId: string, actor: Actor, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
    const user = await this.get(organisationId, userId);
    if (user.role === 'OWNER') mayGrant(actor, 'OWNER');
    const token = newToken();
    await insertLink(this.store.db, {
      token_hash: tokenHash(token),
      id: uuidv7(now),
      kind: 'PASSWORD_RESET',
      organisation_id: organisationId,
      user_id: userId,
      email: user.email,
      role: user.role,
      created_by: actor.userId,
      created_at: now,
      expires_at: now + RESET_TTL_MS,
      used_at: null,
    });
    return { token, expiresAt: now + RESET_TTL_MS };
  }

  /** Sets a new password with a reset link: every session of the user ends, and a new one opens. */
  async resetPassword(token: string, passwordInput: unknown, now = Date.now()): Promise<{ user: User; session: string }> {
    const password = checkPassword(passwordInput);
    const link = await this.link(token, 'PASSWORD_RESET', now);
    const passwordHash = await hashPassword(password);
    const user = await inTransaction(this.store, async (trx) => {
      if (!(await useLink(trx, link.token_hash, now))) fail('INVALID_LOGIN', 'this reset link is unknown, used or expired', 'token');
      const row = link.user_id ? await findUser(trx, link.user_id) : null;
      if (!row) fail('INVALID_LOGIN', 'this reset link is for a user who no longer exists', 'token');
      await updateUser(trx, row.id, { password_hash: passwordHash, updated_at: now });
      await deleteSessionsOf(trx, row.id);
      return toUser({ ...row, password_hash: passwordHash });
    });
    return { user, session: await this.openSession(user.id, now) };
  }

  /** Expired sessions, links and single sign-ons under way (a pruning task). */
  prune(now: number): Promise<number> {
    return deleteExpiredUserRows(this.store.db, now);
  }
}
