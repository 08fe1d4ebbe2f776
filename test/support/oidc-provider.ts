/**
 * A real OpenID provider in the test process, for single sign-on tests: `oidc-provider` (the certified OpenID Connect
 * server for Node.js), configured as an identity provider of a company would be. It follows OpenID Connect Core 1.0
 * (the authorization code flow, §3.1; the ID token, §2, signed with RS256 under a key made for the run and published
 * at its jwks_uri), OpenID Connect Discovery 1.0 (/.well-known/openid-configuration), RFC 7636 (PKCE, required for
 * every client here) and RFC 6749 (client_secret_basic at the token endpoint). Its one client is Tern; its accounts
 * carry an email, a name and a `groups` claim (in the ID token, under the `profile` scope).
 *
 * The person at the provider's login page is simulated by the interaction route: it signs in the account named by
 * `signInAs` (the provider then resumes the flow itself, checks, issues and signs everything as in production).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestAccount {
  sub: string;
  email: string;
  emailVerified?: boolean;
  name: string;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the simulated person signs in as at the next login page. */
  signInAs(account: TestAccount): void;
  /** How many login pages were served (each sign-in through the provider shows one). */
  logins(): number;
  stop(): Promise<void>;
}

/** The provider's state (sessions, codes, grants) in this process: what its own in-memory default does, without its warning. */
class MemoryAdapter {
  private static readonly rows = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();

  constructor(private readonly model: string) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  async upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void> {
    MemoryAdapter.rows.set(this.key(id), { payload, expiresAt: Date.now() + expiresIn * 1000 });
  }

  async find(id: string): Promise<Record<string, unknown> | undefined> {
    const row = MemoryAdapter.rows.get(this.key(id));
    return row && row.expiresAt > Date.now() ? row.payload : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    for (const { payload } of MemoryAdapter.rows.values()) if (payload.uid === uid) return payload;
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const row = MemoryAdapter.rows.get(this.key(id));
    if (row) row.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    MemoryAdapter.rows.delete(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [k, { payload }] of MemoryAdapter.rows) if (payload.grantId === grantId) MemoryAdapter.rows.delete(k);
  }
}

export async function startOidcProvider(redirectUris: string[]): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'tern-console';
  const clientSecret = randomBytes(24).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', use: 'sig', alg: 'RS256' };
  const accounts = new Map<string, TestAccount>();
  let next: TestAccount | null = null;
  let loginCount = 0;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
      },
    ],
    adapter: MemoryAdapter,
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    jwks: { keys: [jwk as never] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    // Scope claims in the ID token itself, as most company providers are set up to send groups.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const a = accounts.get(sub);
      if (!a) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: a.email, email_verified: a.emailVerified ?? true, name: a.name, groups: a.groups }),
      };
    },
    // Tern is a first-party client here: the grant of its scopes is given without a consent page.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        try {
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name !== 'login' || !next) {
            res.statusCode = 400;
            res.end(`unexpected prompt ${details.prompt.name}`);
            return;
          }
          loginCount++;
          accounts.set(next.sub, next);
          await provider.interactionFinished(req, res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
        } catch (err) {
          res.statusCode = 500;
          res.end(String(err));
        }
      })();
      return;
    }
    void callback(req, res);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      next = account;
    },
    logins: () => loginCount,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser's cookies, enough for the flow: per host, name → value (paths and expiry ignored). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  header(url: URL): string | undefined {
    const c = this.jar.get(url.host);
    return c && c.size > 0 ? [...c].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }

  take(url: URL, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const cookies = this.jar.get(url.host) ?? new Map<string, string>();
      if (value === '' || /max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
      this.jar.set(url.host, cookies);
    }
  }

  get(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }
}

/** Follows a browser's redirects from `start`, with cookies, until an answer that is not a redirect (or leaves `stopAt`). */
export async function browse(start: string, jar: CookieJar, stopAt?: (url: URL) => boolean): Promise<{ url: URL; res: Response; hops: URL[] }> {
  let url = new URL(start);
  const hops: URL[] = [];
  for (let i = 0; i < 20; i++) {
    hops.push(url);
    const cookie = jar.header(url);
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    jar.take(url, res);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { url, res, hops };
    url = new URL(location, url);
    if (stopAt?.(url)) return { url, res, hops: [...hops, url] };
  }
  throw new Error(`more than 20 redirects from ${start}`);
}
