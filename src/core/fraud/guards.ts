import {
  checkCountryList,
  type CountryPolicy,
  countryAllowed,
  countryPolicy,
  describeRange,
  formatVelocityLimit,
  VELOCITY_BOUNDS,
  type VelocityLimit,
  velocityLimitProblem,
  velocityRange,
} from '../../domain/fraud-guards.ts';
import type { Store } from '../../store/db.ts';
import { findFraudGuards, saveFraudGuards } from '../../store/fraud-guards.ts';
import type { MessageRow } from '../../store/messages.ts';
import { Cache } from '../cache.ts';
import { fail } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import type { ClusterRateLimiter } from '../rate-limit.ts';
import type { TenancyService } from '../tenancy/service.ts';
import { writeEventWebhook } from '../webhooks/events.ts';

export type Guard = 'country' | 'velocity';

export interface FraudGuardOptions {
  /** Countries an organisation with a default country (and no list of its own) may send to besides it. */
  allowedCountries: readonly string[];
  /** Velocity limits of organisations that have none of their own. */
  velocityLimits: readonly VelocityLimit[];
  /** Told of each message a guard stopped, and of each alert sent (metrics). */
  onBlocked?: (guard: Guard) => void;
  onAlert?: (guard: Guard) => void;
}

/** An organisation's guards: its own settings (null: the defaults) and what applies. */
export interface OrganisationGuards {
  organisationId: string;
  ownCountries: string[] | null;
  ownVelocityLimits: VelocityLimit[] | null;
  /** Null: no country guard (every destination goes). */
  countries: CountryPolicy | null;
  velocityLimits: readonly VelocityLimit[];
}

export interface GuardsPatch {
  /** Null goes back to the default; absent leaves it. */
  allowedCountries?: string[] | null;
  velocityLimits?: VelocityLimit[] | null;
}

/**
 * How long a node applies an organisation's guards without reading them again. A change clears every node's copy at
 * once (the `organisations` signal, `NOTIFY` between PostgreSQL nodes); this bounds a lost signal.
 */
const GUARDS_CACHE_TTL_MS = 5_000;

/** Whether a message counts as one-time password traffic: a code of the verify API, or a message of an OTP channel. */
export function isOtpTraffic(p: PreparedMessage): boolean {
  return p.channel.flow === 'OTP' || otpIdOf(p.row) !== null;
}

/** The one-time password a message carries the code of, or null. */
export function otpIdOf(m: Pick<MessageRow, 'extra'>): string | null {
  if (m.extra === null || !m.extra.includes('"otpId"')) return null;
  const id = (JSON.parse(m.extra) as { otpId?: unknown }).otpId;
  return typeof id === 'string' ? id : null;
}

/**
 * Guards against traffic pumping, applied to every message before it is stored — REST, SMPP, legacy and campaigns
 * share the accept path, so they share the guards. A message to a country the organisation does not send to, or a
 * one-time password past a velocity limit of its number range, is accepted as UNDELIVERABLE (`COUNTRY_NOT_ALLOWED`,
 * `VELOCITY_LIMIT_EXCEEDED`) at no charge. Velocity windows are counted for the whole cluster; the first message a
 * window stops sends an alert webhook (`velocity.exceeded`) to the message's status URL.
 */
export class FraudGuards {
  private readonly cache = new Cache<string, OrganisationGuards>({ capacity: 100_000, ttlMs: GUARDS_CACHE_TTL_MS });
  /** Reads under way: concurrent sends of one organisation wait for the same one, and go on in the order they came. */
  private readonly loading = new Map<string, Promise<OrganisationGuards>>();

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly limiter: ClusterRateLimiter,
    private readonly opts: FraudGuardOptions,
  ) {
    // Raised when guards change, and when an organisation's default country does (it is part of the default policy).
    store.signals.on('organisations', () => {
      this.cache.clear();
      this.loading.clear();
    });
  }

  /** An organisation's guards (cached); an unknown organisation is NOT_FOUND. */
  async of(organisationId: string, now = Date.now()): Promise<OrganisationGuards> {
    return this.cache.get(organisationId, now) ?? this.load(organisationId, now);
  }

  private load(organisationId: string, now: number): Promise<OrganisationGuards> {
    let loading = this.loading.get(organisationId);
    if (!loading) {
      const read: Promise<OrganisationGuards> = this.read(organisationId, now).finally(() => {
        // A change may have dropped this read and started another meanwhile.
        if (this.loading.get(organisationId) === read) this.loading.delete(organisationId);
      });
      loading = read;
      this.loading.set(organisationId, loading);
    }
    return loading;
  }

  private async read(organisationId: string, now: number): Promise<OrganisationGuards> {
    const generation = this.cache.generation;
    const [locale, row] = await Promise.all([this.tenancy.locale(organisationId, now), findFraudGuards(this.store.db, organisationId)]);
    const ownCountries = row?.allowed_countries ? (JSON.parse(row.allowed_countries) as string[]) : null;
    const ownVelocityLimits = row?.velocity_limits ? (JSON.parse(row.velocity_limits) as VelocityLimit[]) : null;
    const guards: OrganisationGuards = Object.freeze({
      organisationId,
      ownCountries,
      ownVelocityLimits,
      countries: countryPolicy(ownCountries, locale.defaultCountry, this.opts.allowedCountries),
      velocityLimits: ownVelocityLimits ?? this.opts.velocityLimits,
    });
    this.cache.setUnlessCleared(generation, organisationId, guards, now);
    return guards;
  }

  /** Sets an organisation's own guards (fields left out are kept); every node applies them at once. */
  async set(organisationId: string, patch: GuardsPatch, now = Date.now()): Promise<OrganisationGuards> {
    await this.tenancy.getOrganisation(organisationId);
    const current = await findFraudGuards(this.store.db, organisationId);
    let countries = current?.allowed_countries ?? null;
    if (patch.allowedCountries !== undefined) {
      if (patch.allowedCountries === null) countries = null;
      else {
        const checked = checkCountryList(patch.allowedCountries);
        if (!checked.ok) fail('INVALID_REQUEST', checked.reason, 'allowedCountries');
        countries = JSON.stringify(checked.value);
      }
    }
    let limits = current?.velocity_limits ?? null;
    if (patch.velocityLimits !== undefined) {
      if (patch.velocityLimits === null) limits = null;
      else {
        if (patch.velocityLimits.length > VELOCITY_BOUNDS.count) fail('INVALID_REQUEST', `at most ${VELOCITY_BOUNDS.count} limits`, 'velocityLimits');
        patch.velocityLimits.forEach((l, i) => {
          const problem = velocityLimitProblem(l);
          if (problem) fail('INVALID_REQUEST', problem.reason, `velocityLimits[${i}].${problem.field}`);
        });
        limits = JSON.stringify(
          patch.velocityLimits.map((l) => ({ prefix: l.prefix, rangeDigits: l.rangeDigits, limit: l.limit, windowSeconds: l.windowSeconds })),
        );
      }
    }
    await saveFraudGuards(this.store.db, { organisation_id: organisationId, allowed_countries: countries, velocity_limits: limits, updated_at: now });
    this.cache.delete(organisationId);
    await this.store.signals.raise(this.store.db, 'organisations');
    return this.read(organisationId, now);
  }

  /**
   * Decides, before they are stored, which messages a guard stops: their `rejection` is set, so the accept writes
   * them UNDELIVERABLE and charges nothing. Messages already refused or settled are left alone.
   */
  readonly screen = (batch: readonly PreparedMessage[]): Promise<void> | null => {
    // Decided at once while the organisations' guards are cached and no velocity window is involved (the usual case):
    // the messages then reach the accept with no wait at all.
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      if (p.rejection !== null || p.settled) continue;
      const guards = this.cache.get(p.row.organisation_id);
      if (!guards) return this.screenFrom(batch, i);
      if (!this.country(p, guards) && guards.velocityLimits.length > 0 && isOtpTraffic(p)) return this.screenFrom(batch, i);
    }
    return null;
  };

  private async screenFrom(batch: readonly PreparedMessage[], from: number): Promise<void> {
    for (const p of batch.slice(from)) {
      if (p.rejection !== null || p.settled) continue;
      const guards = this.cache.get(p.row.organisation_id) ?? (await this.load(p.row.organisation_id, Date.now()));
      if (this.country(p, guards)) continue;
      if (guards.velocityLimits.length > 0 && isOtpTraffic(p)) await this.velocity(p, guards.velocityLimits);
    }
  }

  /** Stops a message to a country its organisation does not send to; answers whether it did. */
  private country(p: PreparedMessage, guards: OrganisationGuards): boolean {
    if (countryAllowed(guards.countries, p.row.country)) return false;
    p.rejection = 'COUNTRY_NOT_ALLOWED';
    this.opts.onBlocked?.('country');
    return true;
  }

  private async velocity(p: PreparedMessage, limits: readonly VelocityLimit[]): Promise<void> {
    const orgId = p.row.organisation_id;
    for (const l of limits) {
      const range = velocityRange(p.row.recipient, l);
      if (range === null) continue;
      const key = `velocity:${orgId}:${formatVelocityLimit(l)}:${range}`;
      const window = { limit: l.limit, windowMs: l.windowSeconds * 1000 };
      const taken = await this.limiter.take(key, 1, window);
      if (taken.ok) continue;
      p.rejection = 'VELOCITY_LIMIT_EXCEEDED';
      this.opts.onBlocked?.('velocity');
      // One alert per limit, range and window, for the whole cluster.
      const first = await this.limiter.take(`${key}:alert`, 1, { limit: 1, windowMs: window.windowMs }, 1);
      if (first.ok) this.alertWith(p, l, describeRange(range, l));
      return;
    }
  }

  /** Writes the alert in the message's accept transaction: it goes out if and only if the message was stored. */
  private alertWith(p: PreparedMessage, limit: VelocityLimit, range: string): void {
    const url = p.row.callback_url_status ?? p.channel.defaultCallbackUrlStatus;
    this.opts.onAlert?.('velocity');
    if (!url) return;
    const before = p.afterInsert;
    p.afterInsert = async (db, row) => {
      if (before) await before(db, row);
      await writeEventWebhook(this.store, db, {
        kind: 'ALERT',
        event: 'velocity.exceeded',
        messageId: row.id,
        organisationId: row.organisation_id,
        channelId: row.channel_id,
        url,
        at: row.accepted_at,
        body: {
          organisationId: row.organisation_id,
          channelId: row.channel_id,
          messageId: row.id,
          recipient: { to: row.recipient },
          range,
          velocityLimit: {
            prefix: limit.prefix,
            ...(limit.rangeDigits === null ? {} : { rangeDigits: limit.rangeDigits }),
            limit: limit.limit,
            windowSeconds: limit.windowSeconds,
          },
        },
      });
    };
  }
}
