import * as oidc from 'openid-client';
import { uuidv7 } from '../../domain/ids.ts';
import type { UserRole } from '../../domain/tenancy.ts';
import { Cache } from '../cache.ts';
import { CoreError, fail } from '../errors.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import {
  deleteSsoConfig,
  findSsoConfig,
  findUserByEmail,
  findUserBySsoSubject,
  insertSsoLogin,
  insertUser,
  type SsoConfigRow,
  saveSsoConfig,
  takeSsoLogin,
  updateUser,
} from '../../store/users.ts';
import type { SecretSealer } from './channel-secrets.ts';
import { checkRole, toUser, type User, type UserService } from './users.ts';

/** How long a sign-in may take between the redirect to the provider and its callback. */
const LOGIN_TTL_MS = 10 * 60_000;
/** How long a node keeps a provider's discovery document (a change of the configuration drops it on every node). */
const DISCOVERY_TTL_MS = 10 * 60_000;

export interface SsoConfig {
  organisationId: string;
  issuer: string;
  clientId: string;
  /** Never shown: whether one is set. */
  allowedDomains: string[];
  defaultRole: UserRole;
  /** The ID token claim that lists the user's groups. */
  groupsClaim: string;
  /** Group-to-role mapping, in order: the first group of the list the user is in gives the role. */
  groupRoles: Array<{ group: string; role: UserRole }>;
  updatedAt: number;
}

export interface SsoConfigInput {
  issuer: unknown;
  clientId: unknown;
  clientSecret?: unknown;
  allowedDomains: unknown;
  defaultRole: unknown;
  groupsClaim?: unknown;
  groupRoles?: unknown;
}

function toConfig(r: SsoConfigRow): SsoConfig {
  return {
    organisationId: r.organisation_id,
    issuer: r.issuer,
    clientId: r.client_id,
    allowedDomains: JSON.parse(r.allowed_domains) as string[],
    defaultRole: r.default_role as UserRole,
    groupsClaim: r.groups_claim,
    groupRoles: JSON.parse(r.group_roles) as SsoConfig['groupRoles'],
    updatedAt: Number(r.updated_at),
  };
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** A provider on this machine may be spoken to over plain HTTP; anywhere else, only over HTTPS. */
function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
}

function text(value: unknown, field: string, max = 500): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    fail('INVALID_REQUEST', `must be a non-empty text of at most ${max} characters`, field);
  return value.trim();
}

/** Whether an ID token's claim says the user is in `group` (a list of names, or one name). */
function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const v = claims[claim];
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === 'string');
  return typeof v === 'string' ? [v] : [];
}

/** The role an ID token's groups give under a mapping: the first entry whose group the user is in, else null. */
export function roleFromGroups(groups: readonly string[], mapping: SsoConfig['groupRoles']): UserRole | null {
  return mapping.find((m) => groups.includes(m.group))?.role ?? null;
}

/**
 * Single sign-on with OpenID Connect, per organisation: the authorization code flow with PKCE (S256), state and nonce
 * kept in the database between the redirect and the callback (any node takes the callback, and a state answers one
 * callback only); the ID token's signature, issuer, audience, expiry and nonce are checked by `openid-client`.
 */
export class SsoService {
  private readonly discovered = new Cache<string, oidc.Configuration>({ capacity: 1_000, ttlMs: DISCOVERY_TTL_MS });

  constructor(
    private readonly store: Store,
    private readonly users: UserService,
    private readonly box: SecretSealer,
  ) {
    store.signals.on('settings', () => this.discovered.clear());
  }

  async get(organisationId: string): Promise<SsoConfig | null> {
    const row = await findSsoConfig(this.store.db, organisationId);
    return row ? toConfig(row) : null;
  }

  /** Sets an organisation's provider; the client secret may be left out to keep the one stored. */
  async configure(organisationId: string, input: SsoConfigInput, now = Date.now()): Promise<SsoConfig> {
    const issuerText = text(input.issuer, 'issuer', 2_000);
    let issuer: URL;
    try {
      issuer = new URL(issuerText);
    } catch {
      return fail('INVALID_REQUEST', 'must be the URL of the OpenID provider', 'issuer');
    }
    if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && isLoopback(issuer))) {
      fail('INVALID_REQUEST', 'must be an https URL (plain http only for a provider on this machine)', 'issuer');
    }
    const clientId = text(input.clientId, 'clientId');
    if (!Array.isArray(input.allowedDomains) || input.allowedDomains.length === 0 || input.allowedDomains.length > 100) {
      fail('INVALID_REQUEST', 'must be a list of 1 to 100 email domains', 'allowedDomains');
    }
    const allowedDomains = input.allowedDomains.map((d, i) => {
      const v = typeof d === 'string' ? d.trim().toLowerCase() : '';
      if (!DOMAIN.test(v)) fail('INVALID_REQUEST', 'must be an email domain (example.com)', `allowedDomains[${i}]`);
      return v;
    });
    const defaultRole = checkRole(input.defaultRole, 'defaultRole');
    if (defaultRole === 'OWNER') fail('INVALID_REQUEST', 'may not be OWNER: owners are named by hand', 'defaultRole');
    const groupsClaim = input.groupsClaim === undefined || input.groupsClaim === null ? 'groups' : text(input.groupsClaim, 'groupsClaim', 100);
    const groupRolesInput = input.groupRoles ?? [];
    if (!Array.isArray(groupRolesInput) || groupRolesInput.length > 100) fail('INVALID_REQUEST', 'must be a list of at most 100 {group, role}', 'groupRoles');
    const groupRoles = groupRolesInput.map((m: unknown, i) => {
      const o = (typeof m === 'object' && m !== null ? m : {}) as { group?: unknown; role?: unknown };
      return { group: text(o.group, `groupRoles[${i}].group`, 200), role: checkRole(o.role, `groupRoles[${i}].role`) };
    });
    const existing = await findSsoConfig(this.store.db, organisationId);
    let clientSecret: string;
    if (input.clientSecret === undefined || input.clientSecret === null) {
      if (!existing) fail('INVALID_REQUEST', 'is required', 'clientSecret');
      clientSecret = existing.client_secret;
    } else {
      clientSecret = this.box.seal(text(input.clientSecret, 'clientSecret', 2_000), 'clientSecret');
    }
    const row: SsoConfigRow = {
      organisation_id: organisationId,
      issuer: issuer.href.replace(/\/$/, ''),
      client_id: clientId,
      client_secret: clientSecret,
      allowed_domains: JSON.stringify(allowedDomains),
      default_role: defaultRole,
      groups_claim: groupsClaim,
      group_roles: JSON.stringify(groupRoles),
      updated_at: now,
    };
    await inTransaction(this.store, async (trx) => {
      await saveSsoConfig(trx, row);
      await this.store.signals.raise(trx, 'settings');
    });
    this.discovered.delete(organisationId);
    return toConfig(row);
  }

  async remove(organisationId: string): Promise<void> {
    const removed = await inTransaction(this.store, async (trx) => {
      const r = await deleteSsoConfig(trx, organisationId);
      if (r) await this.store.signals.raise(trx, 'settings');
      return r;
    });
    if (!removed) fail('NOT_FOUND', 'this organisation has no single sign-on');
    this.discovered.delete(organisationId);
  }

  private async configuration(row: SsoConfigRow): Promise<oidc.Configuration> {
    return this.discovered.load(row.organisation_id, async () => {
      const issuer = new URL(row.issuer);
      try {
        return await oidc.discovery(issuer, row.client_id, undefined, oidc.ClientSecretBasic(this.box.open(row.client_secret)), {
          ...(isLoopback(issuer) && issuer.protocol === 'http:' && { execute: [oidc.allowInsecureRequests] }),
          timeout: 10,
        });
      } catch (err) {
        return fail('UNAVAILABLE', `the OpenID provider ${row.issuer} cannot be discovered: ${(err as Error).message}`);
      }
    });
  }

  /** Starts a sign-in: the provider's authorization URL to send the browser to. */
  async start(organisationId: string, redirectUri: string, now = Date.now()): Promise<URL> {
    const row = await findSsoConfig(this.store.db, organisationId);
    if (!row) fail('NOT_FOUND', 'this organisation has no single sign-on');
    const config = await this.configuration(row);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    await insertSsoLogin(this.store.db, {
      state,
      organisation_id: organisationId,
      nonce,
      code_verifier: codeVerifier,
      created_at: now,
      expires_at: now + LOGIN_TTL_MS,
    });
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
  }

  /** The organisation whose single sign-on serves an email's domain, or null. */
  async organisationForEmail(email: string): Promise<string | null> {
    const domain = email.split('@')[1]?.toLowerCase() ?? '';
    const rows = await this.store.db.selectFrom('sso_configs').select(['organisation_id', 'allowed_domains']).execute();
    return rows.find((r) => (JSON.parse(r.allowed_domains) as string[]).includes(domain))?.organisation_id ?? null;
  }

  /**
   * The provider's callback (`callbackUrl` is the full URL the browser came back to): the code is exchanged with the
   * PKCE verifier, the ID token checked (signature, issuer, audience, expiry, nonce); the user is found by the
   * provider's subject, else by email in the same organisation, else created with the role the groups map to (or the
   * default role). An existing user's role follows the groups when the mapping names one of them.
   */
  async callback(callbackUrl: URL, now = Date.now()): Promise<{ user: User; session: string }> {
    const state = callbackUrl.searchParams.get('state') ?? '';
    const login = state ? await takeSsoLogin(this.store.db, state) : null;
    if (!login || Number(login.expires_at) <= now) fail('INVALID_LOGIN', 'this sign-in is unknown, used or expired; start again', 'state');
    const row = await findSsoConfig(this.store.db, login.organisation_id);
    if (!row) fail('INVALID_LOGIN', 'this organisation no longer has single sign-on');
    const config = await this.configuration(row);
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: login.code_verifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof CoreError) throw err;
      return fail('INVALID_LOGIN', `the OpenID provider's answer was refused: ${(err as Error).message}`);
    }
    const cfg = toConfig(row);
    const subject = `${row.issuer}|${String(claims.sub)}`;
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) fail('INVALID_LOGIN', 'the ID token has no email claim (ask for the email scope)');
    if (claims.email_verified === false) fail('INVALID_LOGIN', `the provider has not verified ${email}`);
    const domain = email.split('@')[1] ?? '';
    if (!cfg.allowedDomains.includes(domain)) fail('INVALID_LOGIN', `${domain} is not an email domain of this organisation's single sign-on`);
    const mapped = roleFromGroups(groupsOf(claims, cfg.groupsClaim), cfg.groupRoles);
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : null;
    const user = await inTransaction(this.store, async (trx) => {
      const existing = (await findUserBySsoSubject(trx, subject)) ?? (await findUserByEmail(trx, email));
      if (existing) {
        if (existing.organisation_id !== login.organisation_id) fail('INVALID_LOGIN', `${email} is a user of another organisation`);
        if (existing.state !== 'ACTIVE') fail('INVALID_LOGIN', `${email} may not sign in`);
        const role = mapped && existing.role !== 'OWNER' ? mapped : existing.role;
        await updateUser(trx, existing.id, { sso_subject: subject, role, signed_in_at: now, updated_at: now });
        return toUser({ ...existing, sso_subject: subject, role, signed_in_at: now });
      }
      const created = {
        id: uuidv7(now),
        organisation_id: login.organisation_id,
        email,
        name,
        role: mapped ?? cfg.defaultRole,
        password_hash: null,
        sso_subject: subject,
        state: 'ACTIVE',
        created_at: now,
        updated_at: now,
        signed_in_at: now,
      };
      await insertUser(trx, created);
      return toUser(created);
    });
    return { user, session: await this.users.openSession(user.id, now) };
  }
}
