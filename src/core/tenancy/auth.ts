import { Cache } from '../cache.ts';
import type { Channel } from '../../store/channels.ts';
import { type Credential, findCredentialByHash } from '../../store/credentials.ts';
import type { Store } from '../../store/db.ts';
import { fail } from '../errors.ts';
import { hashApiKey, hashesEqual } from './keys.ts';
import type { TenancyService } from './service.ts';

export interface Principal {
  /** The API key, or for a signed-in person a credential that stands for them (its id is the user's, its roles theirs). */
  credential: Credential;
  channel: Channel;
  /** The person acting, when the request comes with a console session rather than an API key. */
  userId?: string;
}

/**
 * How long a resolved key is trusted without reading the database again. A change of keys or channels drops the
 * entries of every node at once (the `settings` signal); this bounds a lost signal.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export class AuthService {
  /** Principals by key hash. */
  private readonly cache = new Cache<string, Principal>({ capacity: CACHE_MAX, ttlMs: CACHE_TTL_MS });

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly adminKeyHash: string,
  ) {
    tenancy.onChannelChange((channelId) => {
      this.cache.deleteWhere((principal) => principal.channel.id === channelId);
    });
    store.signals.on('settings', () => this.cache.clear());
  }

  isAdminKey(key: string | undefined): boolean {
    return key !== undefined && key.length > 0 && hashesEqual(hashApiKey(key), this.adminKeyHash);
  }

  /** Resolves an API key to its credential and channel; 401 when it is missing, unknown or revoked. */
  async authenticate(key: string | undefined, now = Date.now()): Promise<Principal> {
    if (key === undefined || key.trim() === '') fail('MISSING_API_KEY', 'send the API key in the X-Api-Key header');
    const hash = hashApiKey(key);
    return this.cache.load(
      hash,
      async () => {
        const credential = await findCredentialByHash(this.store.db, hash);
        if (!credential || !hashesEqual(credential.keyHash, hash)) fail('INVALID_API_KEY', 'unknown API key');
        if (credential.state !== 'ACTIVE') fail('INVALID_API_KEY', 'this API key has been revoked');
        const channel = await this.tenancy.getChannel(credential.channelId);
        return { credential, channel };
      },
      now,
    );
  }
}
