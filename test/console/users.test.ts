// People in the console, in a real browser (Debian's chromium driven by playwright-core): an invitation link accepted
// with a password, sign-out and sign-in with email and password, the Users page of an OWNER, and single sign-on
// through a real OpenID provider running in this process (test/support/oidc-provider.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startOidcProvider, type TestProvider } from '../support/oidc-provider.ts';
import { createTenant, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';

const CHROMIUM = process.env.TERN_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM}: install it with scripts/setup-system.sh or set TERN_CHROMIUM`;

describe('console users in a browser', { skip, timeout: 120_000 }, () => {
  let server: TestServer;
  let tenant: Tenant;
  let provider: TestProvider;
  let browser: Browser;
  let page: Page;

  const invitationUrl = async (organisationId: string, email: string, role: string): Promise<string> => {
    const res = await request(server, 'POST', `/admin/v1/organisations/${organisationId}/invitations`, { key: server.adminKey, body: { email, role } });
    assert.equal(res.status, 201, res.text);
    return res.body.url;
  };

  before(async () => {
    if (!existsSync('console/dist/index.html')) {
      const build = spawnSync('npm', ['run', '--silent', 'build:console'], { encoding: 'utf8' });
      assert.equal(build.status, 0, `${build.stdout}${build.stderr}`);
    }
    server = await startTestServer('sqlite');
    tenant = await createTenant(server, { balance: 10, name: 'Acme' });
    provider = await startOidcProvider([`${server.url}/commons/v1/sso/callback`]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (err) => assert.fail(`error in the page: ${err.message}`));
  });

  after(async () => {
    await browser?.close();
    await provider?.stop();
    await server?.stop();
  });

  it('accepts an invitation with a password, signs out, and signs in again with email and password', async () => {
    await page.goto(await invitationUrl(tenant.organisationId, 'owner@acme.example', 'OWNER'));
    await page.getByRole('heading', { name: 'Join your organisation on Tern' }).waitFor();
    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByLabel('Password (12 characters or more)').fill('olivia owns acme');
    await page.getByRole('button', { name: 'Join' }).click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    assert.equal(await page.locator('#who-user').textContent(), 'owner@acme.example');
    // The session is an HttpOnly cookie: the page cannot read it, and nothing is kept in storage.
    assert.equal(await page.evaluate(() => (globalThis as any).document.cookie), '');
    assert.equal(await page.evaluate(() => (globalThis as any).sessionStorage.length), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email', { exact: true }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill('owner@acme.example');
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: '401.003' }).waitFor();
    await page.getByLabel('Password', { exact: true }).fill('olivia owns acme');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    assert.equal(await page.locator('#who-user').textContent(), 'owner@acme.example');
  });

  it("an OWNER invites from the Users page and the link is shown once; the page's changes carry the CSRF token", async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByLabel('Email').fill('sam@acme.example');
    await page.getByLabel('Role', { exact: true }).selectOption('SENDER');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = await page.locator('#one-time-link').textContent();
    assert.match(link ?? '', /\/console\/#\/invitation\?token=/);
    const invitations = await request(server, 'GET', `/admin/v1/organisations/${tenant.organisationId}/users`, { key: server.adminKey });
    assert.deepEqual(
      invitations.body.items.map((u: any) => u.email),
      ['owner@acme.example'],
    );
    // The invited person joins in another browser and sends; the balance page refuses them.
    const other = await browser.newPage();
    await other.goto(link!);
    await other.getByLabel('Password (12 characters or more)').fill('sam sends the texts');
    await other.getByRole('button', { name: 'Join' }).click();
    await other.getByRole('heading', { name: 'Messages' }).waitFor();
    assert.equal(await other.locator('#who-user').textContent(), 'sam@acme.example');
    assert.equal(await other.getByRole('link', { name: 'Users' }).count(), 0, 'a SENDER manages no users');
    await other.close();
  });

  it('signs in through the organisation’s OpenID provider', async () => {
    const sso = await request(server, 'PUT', '/commons/v1/sso', {
      key: tenant.key,
      body: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        allowedDomains: ['acme.example'],
        defaultRole: 'VIEWER',
        groupRoles: [{ group: 'billing', role: 'BILLING' }],
      },
    });
    assert.equal(sso.status, 200, sso.text);
    provider.signInAs({ sub: 'bea', email: 'bea@acme.example', name: 'Bea', groups: ['billing'] });
    const fresh = await browser.newPage();
    await fresh.goto(`${server.url}/console/`);
    await fresh.getByLabel('Work email, for single sign-on').fill('bea@acme.example');
    await fresh.getByRole('button', { name: 'Sign in with your company' }).click();
    await fresh.locator('#who-user').waitFor();
    assert.equal(await fresh.locator('#who-user').textContent(), 'bea@acme.example');
    assert.match((await fresh.locator('.who').textContent()) ?? '', /BILLING/);
    await fresh.close();
  });
});
