import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import { Cache } from '../cache.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import {
  deleteSmppCredential,
  findSmppCredential,
  findSmppCredentialBySystemId,
  insertSmppCredential,
  listActiveCredentialIdsOfChannels,
  listSmppCredentials,
  type SmppCredential,
  updateSmppCredential,
} from '../../store/smpp.ts';
import { fail } from '../errors.ts';
import type { TenancyService } from './service.ts';

/** SMPP 3.4 C-octet strings: system_id is at most 16 octets and password 9, each with its NUL. */
export const MAX_SYSTEM_ID_LENGTH = 15;
export const MAX_PASSWORD_LENGTH = 8;
export const DEFAULT_MAX_BINDS = 10;
export const MAX_ALLOWED_IPS = 100;

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const;

function scryptAsync(password: string, salt: Buffer, n: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export async function hashSmppPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Compares in constant time; a malformed stored hash never matches. */
export async function verifySmppPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (!Number.isInteger(n) || !Number.isInteger(r) || !Number.isInteger(p) || expected.length === 0) return false;
  const key = await scryptAsync(password, salt, n, r, p, expected.length);
  return timingSafeEqual(key, expected);
}

/** A client address as the socket reports it; IPv4 arriving over an IPv6 socket is `::ffff:a.b.c.d`. */
function plainAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const a = mapped ? mapped[1]! : address;
  const v = net.isIP(a);
  return v === 4 ? { address: a, family: 'ipv4' } : v === 6 ? { address: a, family: 'ipv6' } : null;
}

/** Checks and normalises allowed IPs: addresses or CIDR ranges, IPv4 or IPv6. Throws INVALID_REQUEST. */
export function normaliseAllowedIps(list: readonly string[], field = 'allowedIps'): string[] {
  if (list.length > MAX_ALLOWED_IPS) fail('INVALID_REQUEST', `at most ${MAX_ALLOWED_IPS} entries`, field);
  return list.map((raw, i) => {
    const entry = raw.trim();
    const [address, prefix, ...rest] = entry.split('/');
    const family = net.isIP(address ?? '');
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || rest.length > 0 || !prefixOk) {
      fail('INVALID_REQUEST', `"${raw}" is not an IP address or CIDR range (e.g. 203.0.113.7, 10.0.0.0/8)`, `${field}[${i}]`);
    }
    return prefix === undefined ? address! : `${address}/${Number(prefix)}`;
  });
}

/** Whether `remote` is allowed by the list (an empty list allows any address). */
export function ipAllowed(allowed: readonly string[], remote: string): boolean {
  if (allowed.length === 0) return true;
  const r = plainAddress(remote);
  if (!r) return false;
  const list = new net.BlockList();
  for (const entry of allowed) {
    const [address, prefix] = entry.split('/');
    const family = net.isIP(address!) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address!, family);
    else list.addSubnet(address!, Number(prefix), family);
  }
  return list.check(r.address, r.family);
}

export interface SmppCredentialInput {
  systemId: string;
  password: string;
  allowedIps?: string[];
  maxBinds?: number;
  tps?: number;
  /** deliver_sm a session sends before waiting for their responses; 0: the node's TERN_SMPP_WINDOW. */
  window?: number;
}

/** What can change in a credential; its system_id and channel stay. */
export type SmppCredentialPatch = Partial<Omit<SmppCredentialInput, 'systemId'>>;

export type SmppAuthResult =
  | { ok: true; credential: SmppCredential }
  | { ok: false; reason: 'UNKNOWN_SYSTEM_ID' | 'WRONG_PASSWORD' | 'DISABLED' | 'ADDRESS_NOT_ALLOWED' };

/**
 * How long a node trusts what it read of a credential. A change drops every node's copy at once (the `settings`
 * signal); this bounds a lost signal.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

function checkedPassword(password: string): string {
  if (!/^[\x20-\x7e]{1,8}$/.test(password)) {
    fail('INVALID_REQUEST', `1 to ${MAX_PASSWORD_LENGTH} printable ASCII characters (SMPP 3.4 limit)`, 'password');
  }
  return password;
}

function checkedMaxBinds(maxBinds: number): number {
  if (!Number.isInteger(maxBinds) || maxBinds < 1 || maxBinds > 1000) fail('INVALID_REQUEST', '1 to 1000', 'maxBinds');
  return maxBinds;
}

export const MAX_SMPP_WINDOW = 1000;

function checkedWindow(window: number): number {
  if (!Number.isInteger(window) || window < 0 || window > MAX_SMPP_WINDOW) fail('INVALID_REQUEST', `0 (the node's setting) to ${MAX_SMPP_WINDOW}`, 'window');
  return window;
}

function checkedTps(tps: number): number {
  if (!Number.isInteger(tps) || tps < 0 || tps > 100_000) fail('INVALID_REQUEST', '0 (no limit) to 100000', 'tps');
  return tps;
}

/**
 * The ACTIVE credentials of these channels, read in `tx` (an event hook's transaction): the receivers an MO of
 * those channels goes to.
 */
export async function activeCredentialsOfChannels(tx: Db, channelIds: string[]): Promise<Array<{ id: string; channelId: string }>> {
  const rows = await listActiveCredentialIdsOfChannels(tx, channelIds);
  return rows.map((r) => ({ id: r.id, channelId: r.channel_id }));
}

/**
 * SMPP credentials: a system_id and password that bind to one SMS channel, with the addresses it may bind from,
 * how many sessions it may hold, its submit rate and its deliver_sm window. Passwords are kept as salted scrypt hashes.
 */
export class SmppCredentialService {
  /** Credentials by id; null for one known not to exist (deleted). */
  private readonly cache = new Cache<string, SmppCredential | null>({ capacity: CACHE_MAX, ttlMs: CACHE_TTL_MS });
  private readonly deletedListeners: Array<(credential: SmppCredential) => void> = [];

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
  ) {
    store.signals.on('settings', () => this.cache.clear());
  }

  onDeleted(listener: (credential: SmppCredential) => void): void {
    this.deletedListeners.push(listener);
  }

  async create(channelId: string, input: SmppCredentialInput, now = Date.now()): Promise<SmppCredential> {
    const channel = await this.tenancy.getChannel(channelId);
    if (channel.type !== 'SMS') fail('INVALID_REQUEST', `SMPP credentials belong to SMS channels; this channel is ${channel.type}`);
    const systemId = input.systemId;
    if (!/^[\x21-\x7e]{1,15}$/.test(systemId)) {
      fail('INVALID_REQUEST', `1 to ${MAX_SYSTEM_ID_LENGTH} printable ASCII characters, no spaces`, 'systemId');
    }
    const password = checkedPassword(input.password);
    const maxBinds = checkedMaxBinds(input.maxBinds ?? DEFAULT_MAX_BINDS);
    const tps = checkedTps(input.tps ?? 0);
    const window = checkedWindow(input.window ?? 0);
    const allowedIps = normaliseAllowedIps(input.allowedIps ?? []);
    if (await findSmppCredentialBySystemId(this.store.db, systemId)) {
      fail('CONFLICT', `SMPP system_id "${systemId}" is already taken`);
    }
    const credential: SmppCredential = {
      id: uuidv7(now),
      channelId,
      organisationId: channel.organisationId,
      systemId,
      passwordHash: await hashSmppPassword(password),
      allowedIps,
      maxBinds,
      tps,
      window,
      state: 'ACTIVE',
      createdAt: now,
    };
    try {
      await insertSmppCredential(this.store.db, credential);
    } catch (err) {
      // Two creations of the same system_id at once: the unique index decides.
      if (await findSmppCredentialBySystemId(this.store.db, systemId)) {
        fail('CONFLICT', `SMPP system_id "${systemId}" is already taken`);
      }
      throw err;
    }
    await this.store.signals.raise(this.store.db, 'settings');
    return credential;
  }

  /**
   * Changes a credential's password, allowed addresses, bind count, rate or window. New binds on every node check the
   * new values at once; bound sessions keep their bind and their window, and submit at the new rate.
   */
  async update(id: string, patch: SmppCredentialPatch): Promise<SmppCredential> {
    const credential = (await findSmppCredential(this.store.db, id)) ?? fail('NOT_FOUND', `SMPP credential ${id} not found`);
    const next: SmppCredential = {
      ...credential,
      ...(patch.password !== undefined && { passwordHash: await hashSmppPassword(checkedPassword(patch.password)) }),
      ...(patch.allowedIps !== undefined && { allowedIps: normaliseAllowedIps(patch.allowedIps) }),
      ...(patch.maxBinds !== undefined && { maxBinds: checkedMaxBinds(patch.maxBinds) }),
      ...(patch.tps !== undefined && { tps: checkedTps(patch.tps) }),
      ...(patch.window !== undefined && { window: checkedWindow(patch.window) }),
    };
    await updateSmppCredential(this.store.db, id, {
      passwordHash: next.passwordHash,
      allowedIps: next.allowedIps,
      maxBinds: next.maxBinds,
      tps: next.tps,
      window: next.window,
    });
    this.cache.delete(id);
    await this.store.signals.raise(this.store.db, 'settings');
    return next;
  }

  async list(channelId: string): Promise<SmppCredential[]> {
    await this.tenancy.getChannel(channelId);
    return listSmppCredentials(this.store.db, [channelId]);
  }

  async delete(id: string): Promise<SmppCredential> {
    const credential = (await findSmppCredential(this.store.db, id)) ?? fail('NOT_FOUND', `SMPP credential ${id} not found`);
    await inTransaction(this.store, async (trx) => {
      await deleteSmppCredential(trx, id);
      await this.store.signals.raise(trx, 'settings');
    });
    this.cache.set(id, null);
    for (const l of this.deletedListeners) l(credential);
    return credential;
  }

  /** A credential by id, cached briefly (submits check that their bind's credential still exists). */
  get(id: string, now = Date.now()): Promise<SmppCredential | null> {
    return this.cache.load(id, () => findSmppCredential(this.store.db, id), now);
  }

  /** Checks a bind: system_id, password, state, and the client's address. */
  async authenticate(systemId: string, password: string, remoteAddress: string): Promise<SmppAuthResult> {
    const credential = await findSmppCredentialBySystemId(this.store.db, systemId);
    if (!credential) return { ok: false, reason: 'UNKNOWN_SYSTEM_ID' };
    if (!(await verifySmppPassword(password, credential.passwordHash))) return { ok: false, reason: 'WRONG_PASSWORD' };
    if (credential.state !== 'ACTIVE') return { ok: false, reason: 'DISABLED' };
    if (!ipAllowed(credential.allowedIps, remoteAddress)) return { ok: false, reason: 'ADDRESS_NOT_ALLOWED' };
    return { ok: true, credential };
  }
}
