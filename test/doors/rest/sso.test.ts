import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { browse, CookieJar, startOidcProvider, type TestProvider } from '../../support/oidc-provider.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

const ALICE = { sub: 'alice-0001', email: 'alice@example.com', name: 'Alice', groups: ['staff', 'tern-senders'] };
const BOB = { sub: 'bob-0002', email: 'bob@example.com', name: 'Bob', groups: ['staff'] };
const MALLORY = { sub: 'mallory-0003', email: 'mallory@elsewhere.org', name: 'Mallory', groups: ['tern-senders'] };

forEachDialect('Single sign-on with OpenID Connect', (dialect) => {
  let server: TestServer;
  let provider: TestProvider;
  let tenant: Tenant;
  let tern: URL;

  before(async () => {
    server = await startTestServer(dialect);
    tern = new URL(server.url);
    provider = await startOidcProvider([`${server.url}/commons/v1/sso/callback`]);
    tenant = await createTenant(server, { balance: 10 });
    const res = await request(server, 'PUT', '/commons/v1/sso', {
      key: tenant.key,
      body: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        allowedDomains: ['example.com'],
        defaultRole: 'VIEWER',
        groupRoles: [
          { group: 'tern-admins', role: 'ADMIN' },
          { group: 'tern-senders', role: 'SENDER' },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
  });
  after(async () => {
    await provider?.stop();
    await server?.stop();
  });

  /** A browser going through the whole flow: Tern → provider (login) → Tern's callback → the console. */
  async function signInThroughProvider(start: string): Promise<{ jar: CookieJar; final: URL; res: Response; hops: URL[] }> {
    const jar = new CookieJar();
    const { url, res, hops } = await browse(start, jar, (u) => u.pathname === '/console/');
    return { jar, final: url, res, hops };
  }

  it('shows the configuration without its secret, and the redirect URI to register', async () => {
    const res = await request(server, 'GET', '/commons/v1/sso', { key: tenant.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.issuer, provider.issuer);
    assert.equal(res.body.clientSecret, undefined);
    assert.equal(res.body.redirectUri, `${server.url}/commons/v1/sso/callback`);
    assert.deepEqual(res.body.groupRoles[1], { group: 'tern-senders', role: 'SENDER' });
  });

  it('an OIDC sign-in through the provider creates the user with the role their group maps to', async () => {
    provider.signInAs(ALICE);
    const logins = provider.logins();
    const { jar, final, hops } = await signInThroughProvider(`${server.url}/commons/v1/sso/start?organisationId=${tenant.organisationId}`);
    assert.equal(provider.logins(), logins + 1, 'the provider showed its login page');
    assert.equal(final.href, `${server.url}/console/`);
    const authorize = hops.find((u) => u.origin === provider.issuer && u.searchParams.has('code_challenge'))!;
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256', 'PKCE');
    assert.ok(authorize.searchParams.get('nonce'));
    assert.ok(authorize.searchParams.get('state'));
    const cookie = `tern_session=${jar.get(tern.host, 'tern_session')}`;
    const me = await request(server, 'GET', '/commons/v1/me', { headers: { cookie } });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.user.email, 'alice@example.com');
    assert.equal(me.body.user.role, 'SENDER');
    assert.equal(me.body.user.singleSignOn, true);
    assert.equal(me.body.user.password, false);
    assert.equal(me.body.user.organisationId, tenant.organisationId);
    // The mapped role works and holds: she sends, and cannot read the balance.
    const headers = { cookie, 'x-csrf-token': me.body.csrfToken };
    assert.equal(
      (await request(server, 'POST', '/sms/v1/messages', { body: { recipient: { to: '33612345678' }, body: { text: 'hi' } }, headers })).status,
      201,
    );
    assertError(await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { headers }), 403, '403.001');
    // Signing in again finds the same user.
    provider.signInAs(ALICE);
    await signInThroughProvider(`${server.url}/commons/v1/sso/start?email=alice@example.com`);
    const users = await request(server, 'GET', '/commons/v1/users', { key: tenant.key });
    assert.equal(users.body.items.filter((u: any) => u.email === 'alice@example.com').length, 1);
  });

  it('a user in no mapped group gets the default role', async () => {
    provider.signInAs(BOB);
    const { jar } = await signInThroughProvider(`${server.url}/commons/v1/sso/start?email=bob@example.com`);
    const me = await request(server, 'GET', '/commons/v1/me', { headers: { cookie: `tern_session=${jar.get(tern.host, 'tern_session')}` } });
    assert.equal(me.body.user.role, 'VIEWER');
  });

  it('refuses an email outside the allowed domains, and creates no user', async () => {
    provider.signInAs(MALLORY);
    const { jar, res, final } = await signInThroughProvider(`${server.url}/commons/v1/sso/start?organisationId=${tenant.organisationId}`);
    assert.equal(final.pathname, '/commons/v1/sso/callback');
    assert.equal(res.status, 401);
    const body = (await res.json()) as { errorCode: string; detail: string };
    assert.equal(body.errorCode, '401.003');
    assert.match(body.detail, /elsewhere\.org is not an email domain/);
    assert.equal(jar.get(tern.host, 'tern_session'), undefined);
    const users = await request(server, 'GET', '/commons/v1/users', { key: tenant.key });
    assert.equal(
      users.body.items.some((u: any) => u.email === MALLORY.email),
      false,
    );
  });

  it('a callback answers once: a replayed or forged state is refused', async () => {
    provider.signInAs(BOB);
    const jar = new CookieJar();
    const { url } = await browse(
      `${server.url}/commons/v1/sso/start?organisationId=${tenant.organisationId}`,
      jar,
      (u) => u.pathname === '/commons/v1/sso/callback',
    );
    const first = await fetch(url, { redirect: 'manual' });
    assert.equal(first.status, 302);
    const replay = await fetch(url, { redirect: 'manual' });
    assert.equal(replay.status, 401);
    assert.match(((await replay.json()) as { detail: string }).detail, /unknown, used or expired/);
    const forged = new URL(url);
    forged.searchParams.set('state', 'forged-state');
    assert.equal((await fetch(forged, { redirect: 'manual' })).status, 401);
    const noState = await request(server, 'GET', '/commons/v1/sso/callback?code=abc');
    assertError(noState, 401, '401.003', /start again/);
  });

  it('refuses bad configurations and starts that name nothing', async () => {
    const put = (body: Record<string, unknown>) => request(server, 'PUT', '/commons/v1/sso', { key: tenant.key, body });
    const good = { issuer: provider.issuer, clientId: 'x', allowedDomains: ['example.com'], defaultRole: 'VIEWER' };
    assertError(await put({ ...good, issuer: 'http://idp.example.com' }), 400, '400.001', /https/);
    assertError(await put({ ...good, issuer: 'not a url' }), 400, '400.001', /issuer/);
    assertError(await put({ ...good, allowedDomains: [] }), 400, '400.001', /allowedDomains/);
    assertError(await put({ ...good, allowedDomains: ['not a domain'] }), 400, '400.001', /allowedDomains\[0\]/);
    assertError(await put({ ...good, defaultRole: 'OWNER' }), 400, '400.001', /defaultRole/);
    assertError(await put({ ...good, groupRoles: [{ group: 'g', role: 'ROOT' }] }), 400, '400.001');
    const other = await createTenant(server);
    assertError(await request(server, 'PUT', '/commons/v1/sso', { key: other.key, body: good }), 400, '400.001', /clientSecret/);
    assertError(await request(server, 'GET', '/commons/v1/sso/start'), 400, '400.001');
    assertError(await request(server, 'GET', '/commons/v1/sso/start?email=someone@nowhere.example'), 404, '404.001');
    assertError(await request(server, 'GET', `/commons/v1/sso/start?organisationId=${other.organisationId}`), 404, '404.001');
    // The stored configuration is unchanged by the refusals.
    assert.equal((await request(server, 'GET', '/commons/v1/sso', { key: tenant.key })).body.clientId, provider.clientId);
    const sender = await request(server, 'POST', `/admin/v1/channels/${tenant.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 's', roles: ['SENDER'] },
    });
    assertError(await request(server, 'GET', '/commons/v1/sso', { key: sender.body.value }), 403, '403.001');
  });
});
