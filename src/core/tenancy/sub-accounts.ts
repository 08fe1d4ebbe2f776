import { Cache } from '../cache.ts';
import { uuidv7 } from '../../domain/ids.ts';
import type { ChannelFlow } from '../../domain/tenancy.ts';
import { deleteAccountLogin, findAccountLoginByKey, findAccountLoginOf, insertAccountLogin } from '../../store/account-logins.ts';
import type { Channel } from '../../store/channels.ts';
import { insertChannel } from '../../store/channels.ts';
import { type Credential, findCredential, insertCredential } from '../../store/credentials.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { findOrganisation, insertOrganisation, type Organisation, updateOrganisation } from '../../store/organisations.ts';
import type { FundsService } from '../billing/funds.ts';
import { CoreError, fail } from '../errors.ts';
import type { Principal } from './auth.ts';
import { sealChannel, type SecretSealer } from './channel-secrets.ts';
import { generateApiKey, generateWebhookSecret, hashApiKey, keyPrefix } from './keys.ts';
import type { TenancyService } from './service.ts';
import { hashSmppPassword, type SmppCredentialService, verifySmppPassword } from './smpp-credentials.ts';

export const MAX_LOGIN_LENGTH = 50;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;
const MAX_CONTACT_FIELD_LENGTH = 200;
const MAX_REFERENCE_LENGTH = 140;

/**
 * How long a login checked against its password hash is trusted without hashing again (scrypt is slow on purpose). A
 * change of logins, keys or channels drops every node's copy at once (the `settings` signal); this bounds a lost one.
 */
const VERIFIED_TTL_MS = 5_000;

/** Contact details of a sub-account, kept as given. */
export interface SubAccountContact {
  lastName?: string | null;
  firstName?: string | null;
  company?: string | null;
  address?: string | null;
  city?: string | null;
  postalCode?: string | null;
  mobile?: string | null;
  phone?: string | null;
  fax?: string | null;
  email?: string | null;
  /** YYYY-MM-DD. */
  birthDate?: string | null;
}

export interface SubAccountInput {
  login: string;
  password: string;
  reference?: string | null;
  contact?: SubAccountContact;
}

export interface SubAccount {
  organisation: Organisation;
  login: string;
  channel: Channel;
}

/** The case-insensitive form a login is unique in. */
const loginKey = (login: string) => login.toLowerCase();

function checkLogin(login: string): string {
  if (!new RegExp(`^[^\\s\\p{C}]{1,${MAX_LOGIN_LENGTH}}$`, 'u').test(login)) {
    fail('INVALID_REQUEST', `1 to ${MAX_LOGIN_LENGTH} characters, no spaces`, 'login');
  }
  return login;
}

function checkPassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    fail('INVALID_REQUEST', `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, 'password');
  }
  if (/\p{Cc}/u.test(password)) fail('INVALID_REQUEST', 'must not contain control characters', 'password');
  return password;
}

function checkContact(contact: SubAccountContact): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(contact)) {
    if (v === undefined || v === null || v.trim() === '') continue;
    if (v.length > MAX_CONTACT_FIELD_LENGTH) fail('INVALID_REQUEST', `at most ${MAX_CONTACT_FIELD_LENGTH} characters`, `contact.${k}`);
    out[k] = v.trim();
  }
  return out;
}

/**
 * Sub-accounts as the legacy interface makes them: a sub-organisation of the caller's organisation with an SMS
 * channel, and a login and password that authenticate as that channel's ADMIN credential (the password kept as a
 * salted scrypt hash, like SMPP passwords). Logins are unique whatever their case. Deleting a sub-account revokes
 * its keys and SMPP credentials, gives its balance back to the parent, suspends it and frees its login.
 */
export class SubAccountService {
  private readonly verified = new Cache<string, Principal>({ capacity: 10_000, ttlMs: VERIFIED_TTL_MS });
  /** Compared against when a login is unknown, so an unknown login takes as long as a wrong password. */
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly smppCredentials: SmppCredentialService,
    private readonly funds: FundsService,
    private readonly box: SecretSealer,
  ) {
    store.signals.on('settings', () => this.verified.clear());
  }

  async create(parent: Principal, input: SubAccountInput, now = Date.now()): Promise<SubAccount> {
    const login = checkLogin(input.login);
    const password = checkPassword(input.password);
    const reference = input.reference?.trim() || null;
    if (reference !== null && reference.length > MAX_REFERENCE_LENGTH) fail('INVALID_REQUEST', `at most ${MAX_REFERENCE_LENGTH} characters`, 'reference');
    const contact = checkContact(input.contact ?? {});
    const parentOrg = await this.tenancy.getOrganisation(parent.credential.organisationId);
    const taken = () => fail('CONFLICT', `the login "${login}" is already taken`, 'login');
    if (await findAccountLoginByKey(this.store.db, loginKey(login))) taken();

    const name = contact.company ?? ([contact.firstName, contact.lastName].filter(Boolean).join(' ') || login);
    // The parent's other settings (country, time zone) carry over.
    const organisation: Organisation = {
      ...parentOrg,
      id: uuidv7(now),
      name,
      parentId: parentOrg.id,
      balance: 0,
      state: 'ACTIVE',
      parentBilling: false,
      monthlyLimit: null,
      createdAt: now,
    };
    const flow: ChannelFlow = parent.channel.type === 'SMS' ? parent.channel.flow : 'TRANSACTIONAL';
    const channel: Channel = {
      id: uuidv7(now),
      organisationId: organisation.id,
      name: 'SMS',
      type: 'SMS',
      flow,
      defaultFromField: null,
      fromFieldList: [],
      defaultCallbackUrlStatus: null,
      defaultCallbackUrlMo: null,
      dailyLimit: null,
      monthlyLimit: null,
      webhookSecret: generateWebhookSecret(),
      webhookSecretPrevious: null,
      webhookSecretPreviousUntil: null,
      fallbackSmsChannelId: null,
      shortLinks: false,
      state: 'ACTIVE',
      createdAt: now,
    };
    // The login stands for this credential; its key is never shown (createAuthorisation.do makes keys to show).
    const key = generateApiKey();
    const credential: Credential = {
      id: uuidv7(now),
      channelId: channel.id,
      organisationId: organisation.id,
      name: `Login ${login}`,
      keyHash: hashApiKey(key),
      keyPrefix: keyPrefix(key),
      roles: ['ADMIN'],
      state: 'ACTIVE',
      createdAt: now,
      revokedAt: null,
    };
    const passwordHash = await hashSmppPassword(password);
    try {
      await inTransaction(this.store, async (trx) => {
        await insertOrganisation(trx, organisation);
        await insertChannel(trx, sealChannel(channel, this.box));
        await insertCredential(trx, credential);
        await insertAccountLogin(trx, {
          organisation_id: organisation.id,
          login,
          login_key: loginKey(login),
          password_hash: passwordHash,
          credential_id: credential.id,
          reference,
          contact: Object.keys(contact).length > 0 ? JSON.stringify(contact) : null,
          created_at: now,
        });
        await this.store.signals.raise(trx, 'settings');
      });
    } catch (err) {
      // Two creations of the same login at once: the unique index decides, and the loser wrote nothing.
      if (!(err instanceof CoreError) && (await findAccountLoginByKey(this.store.db, loginKey(login)))) taken();
      throw err;
    }
    return { organisation, login, channel };
  }

  /**
   * Deletes a direct sub-account of the caller's organisation: its keys and SMPP credentials stop working, its balance
   * goes back to the parent, it is suspended and its login is freed. NOT_FOUND for a login that is not one of them;
   * CONFLICT while it has sub-organisations of its own.
   */
  async delete(parent: Principal, login: string, now = Date.now()): Promise<{ organisationId: string; returned: number }> {
    const row = await findAccountLoginByKey(this.store.db, loginKey(login));
    const org = row ? await findOrganisation(this.store.db, row.organisation_id) : null;
    if (!row || !org || org.parentId !== parent.credential.organisationId) fail('NOT_FOUND', `no sub-account "${login}" of this account`, 'login');
    if ((await this.tenancy.treeIds(org.id)).length > 1) fail('CONFLICT', `the sub-account "${login}" has sub-accounts of its own; delete them first`, 'login');

    // Access goes first, so nothing spends the balance while it is given back; each step can be run again.
    for (const channel of await this.tenancy.listChannels([org.id])) {
      for (const c of await this.tenancy.listCredentials(channel.id)) {
        if (c.state !== 'ACTIVE') continue;
        await this.tenancy.revokeCredential(c.id, now).catch((err: unknown) => {
          if (!(err instanceof CoreError && err.kind === 'CONFLICT')) throw err;
        });
      }
      if (channel.type === 'SMS') for (const s of await this.smppCredentials.list(channel.id)) await this.smppCredentials.delete(s.id);
    }
    this.verified.deleteWhere((p) => p.credential.organisationId === org.id);
    const balance = (await this.tenancy.getOrganisation(org.id)).balance;
    if (balance > 0) {
      await this.funds.transfer(
        {
          callerOrganisationId: parent.credential.organisationId,
          credentialId: parent.credential.id,
          sourceId: org.id,
          destinationId: org.parentId!,
          amount: balance,
          reference: `deleteSubAccount ${row.login}`.slice(0, MAX_REFERENCE_LENGTH),
          description: `Balance of the deleted sub-account ${row.login}`,
          idempotencyKey: null,
        },
        (t) => ({ statusCode: 200, body: t.id }),
        now,
      );
    }
    await inTransaction(this.store, async (trx) => {
      await deleteAccountLogin(trx, org.id);
      await updateOrganisation(trx, org.id, { state: 'SUSPENDED' });
      await this.store.signals.raise(trx, 'settings');
    });
    return { organisationId: org.id, returned: Math.max(0, balance) };
  }

  /** The principal a login and password stand for; INVALID_API_KEY when either is wrong or the login is disabled. */
  async authenticate(login: string, password: string, now = Date.now()): Promise<Principal> {
    const cacheKey = hashApiKey(`${loginKey(login)}\u0000${password}`);
    const cached = this.verified.get(cacheKey, now);
    if (cached) return cached;
    const generation = this.verified.generation;
    const row = await findAccountLoginByKey(this.store.db, loginKey(login));
    this.dummyHash ??= hashSmppPassword('not a password of anyone');
    const matches = await verifySmppPassword(password, row?.password_hash ?? (await this.dummyHash));
    if (!row || !matches) fail('INVALID_API_KEY', 'unknown login or wrong password');
    const credential = await findCredential(this.store.db, row.credential_id);
    if (!credential || credential.state !== 'ACTIVE') fail('INVALID_API_KEY', 'this login is disabled');
    const principal: Principal = { credential, channel: await this.tenancy.getChannel(credential.channelId) };
    this.verified.setUnlessCleared(generation, cacheKey, principal, now);
    return principal;
  }

  /** The organisation a login belongs to, or null. */
  async organisationOfLogin(login: string): Promise<string | null> {
    return (await findAccountLoginByKey(this.store.db, loginKey(login)))?.organisation_id ?? null;
  }

  /** An organisation's login, or null when it has none. */
  async loginOf(organisationId: string): Promise<string | null> {
    return (await findAccountLoginOf(this.store.db, organisationId))?.login ?? null;
  }
}
