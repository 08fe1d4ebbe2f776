import { Cache } from '../cache.ts';
import { CoreError, type Quota, RateLimitedError, fail } from '../errors.ts';
import type { ClusterRateLimiter } from '../rate-limit.ts';
import type { SlidingSecondLimiter } from '../sliding-rate.ts';
import type { Permission } from '../../domain/tenancy.ts';
import {
  type GroupLimits,
  groupOf,
  isPerSecondLimit,
  lockoutMs,
  MAX_PER_SECOND,
  ROUTE_GROUPS,
  type RouteGroup,
  STRIKES_KEPT_MS,
  type TrafficLimits,
} from '../../domain/traffic.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { deleteLockoutsBefore, findLockout, listTrafficLimits, replaceTrafficLimits, saveLockout } from '../../store/traffic.ts';
import type { AuthService, Principal } from './auth.ts';
import { hashApiKey } from './keys.ts';

export type Door = 'rest' | 'legacy' | 'smpp';

/** The lockout subject of an SMPP system_id tried from one address. */
function smppPair(address: string, systemId: string): string {
  return `smpp:${address}|${systemId}`;
}

export interface AccessOptions {
  /** SMPP credentials' tps, held in every sliding second across the cluster (see sliding-rate.ts). */
  pace: SlidingSecondLimiter;
  /** Limits of organisations that have none of their own. */
  defaults: TrafficLimits;
  /** Failed authentications a client address (or an SMPP system_id from one address) may make in a minute before it is locked out. */
  failuresPerMinute: number;
  /** Told of each failed authentication, lockout and refusal (metrics). */
  onFailure?: (door: Door) => void;
  onLockout?: (door: Door) => void;
  onLimited?: (group: RouteGroup) => void;
}

/**
 * How long a node trusts what it read of a lockout or of an organisation's limits (another node may change them). A
 * change of limits drops every node's copy at once (the `settings` signal); lockouts are only ever this old.
 */
const LOCKOUT_CACHE_MS = 1_000;
const LIMITS_CACHE_MS = 5_000;

/**
 * Who may come in, and how fast. Each request's key is authenticated and counted against its route group's limits,
 * per key and per organisation, for the whole cluster (requests a second, in windows shared through the database).
 * Client addresses — and SMPP system_ids tried from one address — that fail to authenticate too often in a minute are locked out, for a
 * minute at first and twice as long at each new burst (at most an hour); while an address is locked out, only keys
 * that this node has already seen succeed from it get in, so guessing learns nothing and a neighbour behind the same
 * address keeps working.
 */
export class AccessControl {
  /** `address|key hash` pairs that authenticated. */
  private readonly known = new Cache<string, true>({ capacity: 100_000, ttlMs: 3_600_000 });
  private readonly lockouts = new Cache<string, number>({ capacity: 100_000, ttlMs: LOCKOUT_CACHE_MS });
  private readonly limits = new Cache<string, TrafficLimits>({ capacity: 100_000, ttlMs: LIMITS_CACHE_MS });

  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly limiter: ClusterRateLimiter,
    private readonly opts: AccessOptions,
  ) {
    store.signals.on('settings', () => this.limits.clear());
  }

  /** A customer request with `key` from `address` to do `permission`: its principal, and the quota left. */
  async enter(door: Door, key: string | undefined, address: string, permission: Permission, now = Date.now()): Promise<{ principal: Principal; quota: Quota }> {
    const knownPair = key ? `${address}|${hashApiKey(key)}` : null;
    await this.guard(address, knownPair, now);
    let principal: Principal;
    try {
      principal = await this.auth.authenticate(key, now);
    } catch (err) {
      if (err instanceof CoreError && (err.kind === 'INVALID_API_KEY' || err.kind === 'MISSING_API_KEY')) await this.failed(door, address, now);
      throw err;
    }
    if (knownPair) this.known.set(knownPair, true, now);
    const quota = await this.take(groupOf(permission), principal.credential.id, principal.channel.organisationId);
    return { principal, quota };
  }

  /**
   * A customer request that authenticates otherwise than with an API key (a sub-account's login and password):
   * `resolve` finds the principal or fails with INVALID_API_KEY / MISSING_API_KEY, which counts as a failed
   * authentication of the address exactly as a bad key does. `secret` identifies what was presented, for the
   * lockout's known pairs; it is hashed before it is kept.
   */
  async enterWith(
    door: Door,
    secret: string,
    address: string,
    permission: Permission,
    resolve: () => Promise<Principal>,
    now = Date.now(),
  ): Promise<{ principal: Principal; quota: Quota }> {
    const knownPair = `${address}|${hashApiKey(secret)}`;
    await this.guard(address, knownPair, now);
    let principal: Principal;
    try {
      principal = await resolve();
    } catch (err) {
      if (err instanceof CoreError && (err.kind === 'INVALID_API_KEY' || err.kind === 'MISSING_API_KEY')) await this.failed(door, address, now);
      throw err;
    }
    this.known.set(knownPair, true, now);
    const quota = await this.take(groupOf(permission), principal.credential.id, principal.channel.organisationId);
    return { principal, quota };
  }

  /**
   * A person's sign-in from `address` (email and password, or a one-time link): refused while the address is locked
   * out, unless this node saw `secret` succeed from it; an INVALID_LOGIN from `attempt` counts as a failed
   * authentication of the address exactly as a bad key does.
   */
  async signIn<T>(address: string, secret: string, attempt: () => Promise<T>, now = Date.now()): Promise<T> {
    const knownPair = `${address}|${hashApiKey(secret)}`;
    await this.guard(address, knownPair, now);
    let result: T;
    try {
      result = await attempt();
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'INVALID_LOGIN') await this.failed('rest', address, now);
      throw err;
    }
    this.known.set(knownPair, true, now);
    return result;
  }

  /** A request of a signed-in person, counted against its route group's limits as a key's request is (per user and per organisation). */
  takeForUser(permission: Permission, userId: string, organisationId: string): Promise<Quota> {
    return this.take(groupOf(permission), `user:${userId}`, organisationId);
  }

  /**
   * An operator request (the operator API): limited per client address. `signedIn`: one of the operator's people,
   * whose session the door has checked, rather than a key. A customer's key is refused, not counted as a failure. */
  async enterOperator(key: string | undefined, address: string, now = Date.now(), signedIn = false): Promise<Quota> {
    const knownPair = key ? `${address}|${hashApiKey(key)}` : null;
    if (!signedIn) await this.guard(address, knownPair, now);
    if (!signedIn && !this.auth.isAdminKey(key)) {
      const customer = key
        ? await this.auth.authenticate(key, now).then(
            () => true,
            () => false,
          )
        : false;
      if (customer) fail('FORBIDDEN_ADMIN', 'a customer API key cannot use the operator API');
      await this.failed('rest', address, now);
      return fail(key ? 'INVALID_API_KEY' : 'MISSING_API_KEY', key ? 'unknown operator key' : 'send the operator key in the X-Api-Key header');
    }
    if (knownPair) this.known.set(knownPair, true, now);
    const limit = this.opts.defaults.admin.perKey;
    const r = await this.limiter.take(`admin:address:${address}`, 1, { limit, windowMs: 1_000 });
    if (!r.ok)
      throw this.limited('admin', `more than ${limit} operator requests a second from ${address}`, r.retryAt, { limit, remaining: 0, resetAt: r.resetAt });
    return { limit, remaining: r.remaining, resetAt: r.resetAt };
  }

  /**
   * An SMPP bind from `address` as `systemId`: null when it may be tried, else until when it is refused — the address
   * is locked out (it failed too often, whatever it tried), or this address with this system_id is. A system_id is
   * never locked out as such: wrong passwords from elsewhere must not shut the account's owner out.
   */
  async smppBindRefusedUntil(address: string, systemId: string, now = Date.now()): Promise<number | null> {
    const until = Math.max(await this.lockedUntil(address, now), await this.lockedUntil(smppPair(address, systemId), now));
    return until > now ? until : null;
  }

  /** An SMPP bind failed for its credentials: counted against the address, and against the address with the system_id. */
  async smppBindFailed(address: string, systemId: string, now = Date.now()): Promise<void> {
    await this.failed('smpp', address, now);
    if (systemId !== '') await this.failed('smpp', smppPair(address, systemId), now);
  }

  private async guard(address: string, knownPair: string | null, now: number): Promise<void> {
    const until = await this.lockedUntil(address, now);
    if (until > now && !(knownPair && this.known.get(knownPair, now))) {
      throw new RateLimitedError(`too many failed authentications from ${address}: refused until ${new Date(until).toISOString()}`, until);
    }
  }

  private lockedUntil(subject: string, now: number): Promise<number> {
    return this.lockouts.load(
      subject,
      async () => {
        const row = await findLockout(this.store.db, subject);
        return row ? Number(row.locked_until) : 0;
      },
      now,
    );
  }

  /** One failed authentication of `subject` (an address, or an address with an SMPP system_id); a burst too many locks it out. */
  private async failed(door: Door, subject: string, now: number): Promise<void> {
    this.opts.onFailure?.(door);
    const r = await this.limiter.take(`authfail:${subject}`, 1, { limit: this.opts.failuresPerMinute, windowMs: 60_000 });
    if (r.ok) return;
    const previous = await findLockout(this.store.db, subject);
    if (previous && Number(previous.locked_until) > now) return;
    const strikes = previous && now - Number(previous.updated_at) < STRIKES_KEPT_MS ? previous.strikes + 1 : 1;
    const until = now + lockoutMs(strikes);
    await saveLockout(this.store.db, { address: subject, strikes, locked_until: until, updated_at: now });
    this.lockouts.set(subject, until, now);
    this.opts.onLockout?.(door);
  }

  private limited(group: RouteGroup, reason: string, retryAt: number, quota: Quota): RateLimitedError {
    this.opts.onLimited?.(group);
    return new RateLimitedError(reason, retryAt, quota);
  }

  /**
   * An SMPP credential's submits a second, for the whole cluster (shared through the database on PostgreSQL), in
   * every sliding second rather than each clock second (which let twice the rate through across a second's turn):
   * true when `units` more would go past `tps`, after waiting a moment for units about to free up.
   */
  async smppOverRate(credentialId: string, tps: number, units: number): Promise<boolean> {
    if (!(tps > 0)) return false;
    return !(await this.opts.pace.take(`smpp-tps:${credentialId}`, units, tps)).ok;
  }

  private async take(group: RouteGroup, credentialId: string, organisationId: string): Promise<Quota> {
    const limits = (await this.limitsOf(organisationId))[group];
    const perKey = await this.limiter.take(`${group}:key:${credentialId}`, 1, { limit: limits.perKey, windowMs: 1_000 });
    if (!perKey.ok) {
      throw this.limited(group, `more than ${limits.perKey} ${group} requests a second with this key`, perKey.retryAt, {
        limit: limits.perKey,
        remaining: 0,
        resetAt: perKey.resetAt,
      });
    }
    const perOrganisation = await this.limiter.take(`${group}:organisation:${organisationId}`, 1, { limit: limits.perOrganisation, windowMs: 1_000 });
    if (!perOrganisation.ok) {
      throw this.limited(group, `more than ${limits.perOrganisation} ${group} requests a second for this organisation`, perOrganisation.retryAt, {
        limit: limits.perOrganisation,
        remaining: 0,
        resetAt: perOrganisation.resetAt,
      });
    }
    // The tighter of the two is what the client can still count on.
    return perKey.remaining <= perOrganisation.remaining
      ? { limit: limits.perKey, remaining: perKey.remaining, resetAt: perKey.resetAt }
      : { limit: limits.perOrganisation, remaining: perOrganisation.remaining, resetAt: perOrganisation.resetAt };
  }

  /**
   * An organisation's limits: its own where it has some, the defaults elsewhere — and where a stored value is not a
   * limit at all (an older version let `Infinity` be stored), the default of its group, so that one bad row does not
   * make every request of the organisation fail.
   */
  limitsOf(organisationId: string, now = Date.now()): Promise<TrafficLimits> {
    return this.limits.load(
      organisationId,
      async () => {
        const own = await listTrafficLimits(this.store.db, organisationId);
        const merged: Record<RouteGroup, GroupLimits> = { ...this.opts.defaults };
        for (const r of own) {
          const group = r.route_group as RouteGroup;
          if (!ROUTE_GROUPS.includes(group)) continue;
          const perKey = Number(r.per_key);
          const perOrganisation = Number(r.per_organisation);
          merged[group] = {
            perKey: isPerSecondLimit(perKey) ? perKey : this.opts.defaults[group].perKey,
            perOrganisation: isPerSecondLimit(perOrganisation) ? perOrganisation : this.opts.defaults[group].perOrganisation,
          };
        }
        return merged;
      },
      now,
    );
  }

  /** Sets an organisation's own limits (groups left out take the defaults again); every node applies them at once. */
  async setLimits(organisationId: string, own: Partial<Record<RouteGroup, GroupLimits>>): Promise<TrafficLimits> {
    for (const [group, l] of Object.entries(own)) {
      for (const [name, n] of Object.entries(l ?? {})) {
        if (!isPerSecondLimit(n)) fail('INVALID_REQUEST', `must be a whole number of requests a second from 1 to ${MAX_PER_SECOND}`, `${group}.${name}`);
      }
    }
    await inTransaction(this.store, async (trx) => {
      await replaceTrafficLimits(
        trx,
        organisationId,
        Object.entries(own).map(([group, l]) => ({
          organisation_id: organisationId,
          route_group: group,
          per_key: l!.perKey,
          per_organisation: l!.perOrganisation,
        })),
      );
      await this.store.signals.raise(trx, 'settings');
    });
    this.limits.delete(organisationId);
    return this.limitsOf(organisationId);
  }

  /** Lockouts without a strike for a day are forgotten (a pruning task). */
  prune(now: number): Promise<number> {
    return deleteLockoutsBefore(this.store.db, now - STRIKES_KEPT_MS);
  }
}
