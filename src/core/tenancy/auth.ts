import type { Channel } from '../../store/channels.ts';
import { type Credential, findCredentialByHash } from '../../store/credentials.ts';
import type { Store } from '../../store/db.ts';
import { fail } from '../errors.ts';
import { hashApiKey, hashesEqual } from './keys.ts';
import type { TenancyService } from './service.ts';

export interface Principal {
  credential: Credential;
  channel: Channel;
}

/**
 * How long a resolved key is trusted without reading the database again. Changes made through this node drop the
 * entry at once; on other nodes a revocation takes effect within this delay.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export class AuthService {
  private readonly cache = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly adminKeyHash: string,
  ) {
    tenancy.onChannelChange((channelId) => {
      for (const [hash, entry] of this.cache) {
        if (entry.principal.channel.id === channelId) this.cache.delete(hash);
      }
    });
  }

  isAdminKey(key: string | undefined): boolean {
    return key !== undefined && key.length > 0 && hashesEqual(hashApiKey(key), this.adminKeyHash);
  }

  /** Resolves an API key to its credential and channel; 401 when it is missing, unknown or revoked. */
  async authenticate(key: string | undefined, now = Date.now()): Promise<Principal> {
    if (key === undefined || key.trim() === '') fail('MISSING_API_KEY', 'send the API key in the X-Api-Key header');
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const credential = await findCredentialByHash(this.store.db, hash);
    if (!credential || !hashesEqual(credential.keyHash, hash)) fail('INVALID_API_KEY', 'unknown API key');
    if (credential.state !== 'ACTIVE') fail('INVALID_API_KEY', 'this API key has been revoked');
    const channel = await this.tenancy.getChannel(credential.channelId);
    const principal: Principal = { credential, channel };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { principal, until: now + CACHE_TTL_MS });
    return principal;
  }
}
