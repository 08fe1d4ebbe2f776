import { utcDay, utcMonthStart } from '../../domain/dates.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { checkCountry, checkTimeZone, DEFAULT_TIME_ZONE, type Locale } from '../../domain/locale.ts';
import { checkOptOutShortCode, checkOptOutText, type OptOutSettings, optOutSettings } from '../../domain/opt-out.ts';
import { type ChannelFlow, type ChannelType, type Role, ROLES } from '../../domain/tenancy.ts';
import { type Channel, channelsWithSecretsInClear, findChannel, insertChannel, listChannels, saveChannel } from '../../store/channels.ts';
import { channelDailyAndMonthlyAmounts, organisationAmountSince } from '../../store/consumption.ts';
import { type Credential, findCredential, insertCredential, listCredentials, revokeCredential } from '../../store/credentials.ts';
import type { Db, Store } from '../../store/db.ts';
import { applyBalanceChange, type LedgerEntry } from '../../store/ledger.ts';
import {
  findOrganisation,
  findOrganisationLocale,
  findOrganisationOptOut,
  insertOrganisation,
  listOrganisations,
  listTreeIds,
  type Organisation,
  updateOrganisation,
} from '../../store/organisations.ts';
import { Cache } from '../cache.ts';
import { fail } from '../errors.ts';
import { openChannel, sealChannel, type SecretSealer } from './channel-secrets.ts';
import { generateApiKey, generateWebhookSecret, hashApiKey, keyPrefix } from './keys.ts';
import { SenderRegistry } from './senders.ts';

export interface ChannelInput {
  name: string;
  type: ChannelType;
  flow: ChannelFlow;
  defaultFromField?: string | null;
  fromFieldList?: string[];
  defaultCallbackUrlStatus?: string | null;
  defaultCallbackUrlMo?: string | null;
  dailyLimit?: number | null;
  monthlyLimit?: number | null;
  fallbackSmsChannelId?: string | null;
  /** Replace long URLs in its SMS by tracked short links (SMS channels, with a short link base configured). */
  shortLinks?: boolean;
}

export type ChannelPatch = Partial<Omit<ChannelInput, 'type'>>;

export interface OrganisationInput {
  name: string;
  parentOrganisationId?: string | null;
  parentBilling?: boolean;
  monthlyLimit?: number | null;
  /** ISO 3166 alpha-2; null or absent: national numbers are refused. */
  defaultCountry?: string | null;
  /** IANA time zone; absent: Europe/Paris. */
  timeZone?: string;
}

export interface OrganisationPatch {
  name?: string;
  state?: 'ACTIVE' | 'SUSPENDED';
  monthlyLimit?: number | null;
  defaultCountry?: string | null;
  timeZone?: string;
  /** null: back to the platform's. */
  optOutShortCode?: string | null;
  optOutText?: string | null;
  /** Days its message texts are kept (1 to 36500); null: the platform's content retention. */
  contentRetentionDays?: number | null;
}

/** The longest content retention an organisation may set: a hundred years. */
export const MAX_CONTENT_RETENTION_DAYS = 36_500;

export interface Consumption {
  daily: number;
  monthly: number;
}

/** How long the previous webhook secret keeps signing after a rotation, so receivers can switch over. */
const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000;

/**
 * How long a node serves an organisation's locale without reading it again. A change clears every node's copy at
 * once (the `organisations` signal: in process, and `NOTIFY` between PostgreSQL nodes); this bounds a lost signal.
 */
const LOCALE_CACHE_TTL_MS = 5_000;

function checkedCountry(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const c = checkCountry(value);
  return c.ok ? c.value : fail('INVALID_REQUEST', c.reason, 'defaultCountry');
}

function checkedOptOut(value: string | null | undefined, check: (v: string) => string | null, field: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  const problem = check(value);
  return problem ? fail('INVALID_REQUEST', problem, field) : value;
}

function checkedTimeZone(value: string | undefined): string | undefined {
  if (value === undefined) return value;
  const z = checkTimeZone(value);
  return z.ok ? z.value : fail('INVALID_REQUEST', z.reason, 'timeZone');
}

/** Organisations, channels, credentials and balances: the tenancy side of Tern, shared by every door. */
export class TenancyService {
  private readonly channelListeners: Array<(channelId: string) => void> = [];
  private readonly locales = new Cache<string, Locale>({ capacity: 100_000, ttlMs: LOCALE_CACHE_TTL_MS });
  private readonly optOuts = new Cache<string, OptOutSettings>({ capacity: 100_000, ttlMs: LOCALE_CACHE_TTL_MS });
  readonly senders: SenderRegistry;

  constructor(
    private readonly store: Store,
    /** Seals webhook signing secrets at rest. */
    private readonly box: SecretSealer,
    private readonly options: { shortLinksConfigured?: boolean } = {},
  ) {
    this.senders = new SenderRegistry(store);
    store.signals.on('organisations', () => {
      this.locales.clear();
      this.optOuts.clear();
    });
  }

  /**
   * Tells every node that channels or API keys changed (this one at once, the others through PostgreSQL): each drops
   * what it keeps of them.
   */
  private settingsChanged(): Promise<void> {
    return this.store.signals.raise(this.db, 'settings');
  }

  /** A channel as stored, read through `db` (inside a transaction, its executor). */
  async readChannel(db: Db, id: string): Promise<Channel | null> {
    const c = await findChannel(db, id);
    return c ? openChannel(c, this.box) : null;
  }

  /**
   * Seals the webhook signing secrets that older versions stored in clear; answers how many channels it sealed.
   * Without TERN_SECRET_KEY nothing can be sealed, and nothing is.
   */
  async sealSecretsInClear(): Promise<number> {
    if (!this.box.available) return 0;
    const plain = await channelsWithSecretsInClear(this.db);
    for (const c of plain) await saveChannel(this.db, sealChannel(c, this.box));
    return plain.length;
  }

  private get db(): Db {
    return this.store.db;
  }

  /**
   * Called whenever a channel or its credentials change through this node, so caches can drop what they hold at
   * once; changes made through other nodes come as the `settings` signal.
   */
  onChannelChange(listener: (channelId: string) => void): void {
    this.channelListeners.push(listener);
  }

  private channelChanged(channelId: string): void {
    for (const l of this.channelListeners) l(channelId);
  }

  async createOrganisation(input: OrganisationInput, now = Date.now()): Promise<Organisation> {
    const defaultCountry = checkedCountry(input.defaultCountry) ?? null;
    const timeZone = checkedTimeZone(input.timeZone) ?? DEFAULT_TIME_ZONE;
    const parentId = input.parentOrganisationId ?? null;
    if (parentId !== null && !(await findOrganisation(this.db, parentId))) {
      fail('NOT_FOUND', `parent organisation ${parentId} not found`);
    }
    const org: Organisation = {
      id: uuidv7(now),
      name: input.name,
      parentId,
      balance: 0,
      currency: 'EUR',
      state: 'ACTIVE',
      parentBilling: parentId !== null && input.parentBilling === true,
      monthlyLimit: input.monthlyLimit ?? null,
      createdAt: now,
      defaultCountry,
      timeZone,
      optOutShortCode: null,
      optOutText: null,
      contentRetentionDays: null,
    };
    await insertOrganisation(this.db, org);
    return org;
  }

  async getOrganisation(id: string): Promise<Organisation> {
    return (await findOrganisation(this.db, id)) ?? fail('NOT_FOUND', `organisation ${id} not found`);
  }

  async findOrganisation(id: string): Promise<Organisation | null> {
    return findOrganisation(this.db, id);
  }

  async listOrganisations(opts: { ids?: string[]; offset: number; limit: number }): Promise<Organisation[]> {
    return listOrganisations(this.db, opts);
  }

  async updateOrganisation(id: string, patch: OrganisationPatch): Promise<Organisation> {
    const defaultCountry = checkedCountry(patch.defaultCountry);
    const timeZone = checkedTimeZone(patch.timeZone);
    const optOutShortCode = checkedOptOut(patch.optOutShortCode, checkOptOutShortCode, 'optOutShortCode');
    const optOutText = checkedOptOut(patch.optOutText, checkOptOutText, 'optOutText');
    const days = patch.contentRetentionDays;
    if (days != null && (!Number.isInteger(days) || days < 1 || days > MAX_CONTENT_RETENTION_DAYS)) {
      fail('INVALID_REQUEST', `must be a whole number of days from 1 to ${MAX_CONTENT_RETENTION_DAYS}, or null for the platform's`, 'contentRetentionDays');
    }
    await this.getOrganisation(id);
    await updateOrganisation(this.db, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.state !== undefined ? { state: patch.state } : {}),
      ...(patch.monthlyLimit !== undefined ? { monthly_limit: patch.monthlyLimit } : {}),
      ...(defaultCountry !== undefined ? { default_country: defaultCountry } : {}),
      ...(timeZone !== undefined ? { time_zone: timeZone } : {}),
      ...(optOutShortCode !== undefined ? { opt_out_short_code: optOutShortCode } : {}),
      ...(optOutText !== undefined ? { opt_out_text: optOutText } : {}),
      ...(days !== undefined ? { content_retention_days: days } : {}),
    });
    this.locales.delete(id);
    this.optOuts.delete(id);
    await this.store.signals.raise(this.db, 'organisations');
    return this.getOrganisation(id);
  }

  /**
   * Where an organisation is (its default country and time zone), cached: every send reads it. Unknown
   * organisations are NOT_FOUND.
   */
  locale(organisationId: string, now = Date.now()): Promise<Locale> {
    return this.locales.load(
      organisationId,
      async () => {
        const row = (await findOrganisationLocale(this.db, organisationId)) ?? fail('NOT_FOUND', `organisation ${organisationId} not found`);
        const country = row.default_country === null ? null : checkCountry(row.default_country);
        return Object.freeze({ defaultCountry: country?.ok ? country.value : null, timeZone: row.time_zone });
      },
      now,
    );
  }

  /** The organisation's opt-out short code and mention (the platform's unless it set its own), cached. */
  optOut(organisationId: string, now = Date.now()): Promise<OptOutSettings> {
    return this.optOuts.load(
      organisationId,
      async () => {
        const row = (await findOrganisationOptOut(this.db, organisationId)) ?? fail('NOT_FOUND', `organisation ${organisationId} not found`);
        return Object.freeze(optOutSettings(row.opt_out_short_code, row.opt_out_text));
      },
      now,
    );
  }

  /** The organisation and all its descendants, root first. */
  treeIds(rootId: string): Promise<string[]> {
    return listTreeIds(this.db, rootId);
  }

  async createChannel(organisationId: string, input: ChannelInput, now = Date.now()): Promise<Channel> {
    await this.getOrganisation(organisationId);
    if (input.fallbackSmsChannelId) await this.checkFallbackChannel(organisationId, input.fallbackSmsChannelId);
    if (input.shortLinks) this.checkShortLinks(input.type);
    const channel: Channel = {
      id: uuidv7(now),
      organisationId,
      name: input.name,
      type: input.type,
      flow: input.flow,
      defaultFromField: input.defaultFromField ?? null,
      fromFieldList: input.fromFieldList ?? [],
      defaultCallbackUrlStatus: input.defaultCallbackUrlStatus ?? null,
      defaultCallbackUrlMo: input.defaultCallbackUrlMo ?? null,
      dailyLimit: input.dailyLimit ?? null,
      monthlyLimit: input.monthlyLimit ?? null,
      webhookSecret: generateWebhookSecret(),
      webhookSecretPrevious: null,
      webhookSecretPreviousUntil: null,
      fallbackSmsChannelId: input.fallbackSmsChannelId ?? null,
      shortLinks: input.shortLinks ?? false,
      state: 'ACTIVE',
      createdAt: now,
    };
    await this.senders.approveChannelSenders(organisationId, channel.fromFieldList, now);
    await insertChannel(this.db, sealChannel(channel, this.box));
    this.channelChanged(channel.id);
    await this.settingsChanged();
    return channel;
  }

  private checkShortLinks(type: ChannelType): void {
    if (type !== 'SMS') fail('INVALID_REQUEST', 'short links are for SMS channels', 'shortLinks');
    if (!this.options.shortLinksConfigured) fail('INVALID_REQUEST', 'short links need TERN_SHORT_LINK_BASE, which this server does not set', 'shortLinks');
  }

  private async checkFallbackChannel(organisationId: string, channelId: string): Promise<void> {
    const fallback = await this.readChannel(this.db, channelId);
    if (!fallback || fallback.organisationId !== organisationId || fallback.type !== 'SMS') {
      fail('INVALID_REQUEST', 'fallbackSmsChannelId must be an SMS channel of the same organisation');
    }
  }

  async getChannel(id: string): Promise<Channel> {
    return (await this.readChannel(this.db, id)) ?? fail('NOT_FOUND', `channel ${id} not found`);
  }

  async listChannels(organisationIds: string[]): Promise<Channel[]> {
    return (await listChannels(this.db, organisationIds)).map((c) => openChannel(c, this.box));
  }

  async updateChannel(id: string, patch: ChannelPatch): Promise<Channel> {
    const channel = await this.getChannel(id);
    if (patch.fallbackSmsChannelId) await this.checkFallbackChannel(channel.organisationId, patch.fallbackSmsChannelId);
    if (patch.shortLinks) this.checkShortLinks(channel.type);
    const next: Channel = { ...channel };
    for (const [key, value] of Object.entries(patch)) {
      if (value !== undefined) (next as unknown as Record<string, unknown>)[key] = value;
    }
    if (patch.fromFieldList) await this.senders.approveChannelSenders(channel.organisationId, patch.fromFieldList);
    await saveChannel(this.db, sealChannel(next, this.box));
    this.channelChanged(id);
    await this.settingsChanged();
    return next;
  }

  /** New signing secret; the previous one keeps signing alongside it for a day. */
  async rotateWebhookSecret(id: string, now = Date.now()): Promise<Channel> {
    const channel = await this.getChannel(id);
    const next: Channel = {
      ...channel,
      webhookSecret: generateWebhookSecret(),
      webhookSecretPrevious: channel.webhookSecret,
      webhookSecretPreviousUntil: now + SECRET_ROTATION_OVERLAP_MS,
    };
    await saveChannel(this.db, sealChannel(next, this.box));
    this.channelChanged(id);
    await this.settingsChanged();
    return next;
  }

  async createCredential(channelId: string, input: { name: string; roles: Role[] }, now = Date.now()): Promise<{ credential: Credential; value: string }> {
    const channel = await this.getChannel(channelId);
    const roles = [...new Set(input.roles)];
    if (roles.length === 0 || roles.some((r) => !ROLES.includes(r))) {
      fail('INVALID_REQUEST', `must be a non-empty list of ${ROLES.join(', ')}`, 'roles');
    }
    const value = generateApiKey();
    const credential: Credential = {
      id: uuidv7(now),
      channelId,
      organisationId: channel.organisationId,
      name: input.name,
      keyHash: hashApiKey(value),
      keyPrefix: keyPrefix(value),
      roles,
      state: 'ACTIVE',
      createdAt: now,
      revokedAt: null,
    };
    await insertCredential(this.db, credential);
    await this.settingsChanged();
    return { credential, value };
  }

  async getCredential(id: string): Promise<Credential> {
    return (await findCredential(this.db, id)) ?? fail('NOT_FOUND', `credential ${id} not found`);
  }

  listCredentials(channelId: string): Promise<Credential[]> {
    return listCredentials(this.db, channelId);
  }

  async revokeCredential(id: string, now = Date.now()): Promise<Credential> {
    const credential = await this.getCredential(id);
    if (!(await revokeCredential(this.db, id, now))) fail('CONFLICT', `credential ${id} is already revoked`);
    this.channelChanged(credential.channelId);
    await this.settingsChanged();
    return { ...credential, state: 'REVOKED', revokedAt: now };
  }

  /** Operator top-up: one ledger row and the balance, in one transaction. */
  async credit(organisationId: string, micros: number, reference: string | null, now = Date.now()): Promise<LedgerEntry> {
    await this.getOrganisation(organisationId);
    return this.db.transaction().execute(async (trx) => {
      const entry = await applyBalanceChange(trx, {
        organisationId,
        amount: micros,
        kind: micros >= 0 ? 'TOPUP' : 'ADJUSTMENT',
        reference,
        description: micros >= 0 ? 'Top-up by the operator' : 'Debit by the operator',
        at: now,
      });
      return entry ?? fail('INSUFFICIENT_FUNDS', 'the balance cannot go below zero');
    });
  }

  /** Charged amounts (net of refunds) of a channel today and this month, from the consumption rollups. */
  async channelConsumption(channelId: string, now = Date.now()): Promise<Consumption> {
    return channelDailyAndMonthlyAmounts(this.db, channelId, utcDay(now), utcMonthStart(now));
  }

  async organisationMonthlyConsumption(organisationId: string, now = Date.now()): Promise<number> {
    return organisationAmountSince(this.db, organisationId, utcMonthStart(now));
  }
}
