import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

/** A browser's view of one person: the session cookie Tern set and the CSRF token /commons/v1/me gave. */
interface Person {
  cookie: string;
  csrf: string;
  userId: string;
}

function sessionCookieOf(res: { headers: Headers }): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith('tern_session='));
  assert.ok(line, 'a session cookie is set');
  return line.split(';')[0]!;
}

async function invite(server: TestServer, organisationId: string, email: string, role: string): Promise<string> {
  const res = await request(server, 'POST', `/admin/v1/organisations/${organisationId}/invitations`, { key: server.adminKey, body: { email, role } });
  assert.equal(res.status, 201, res.text);
  return new URL(res.body.url.replace('/#/', '/')).searchParams.get('token')!;
}

async function accept(server: TestServer, token: string, password = 'correct horse battery'): Promise<Person> {
  const res = await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password, name: 'Someone' } });
  assert.equal(res.status, 200, res.text);
  return { cookie: sessionCookieOf(res), csrf: res.body.csrfToken, userId: res.body.user.userId };
}

function as(p: Person, extra: Record<string, string> = {}): Record<string, string> {
  return { cookie: p.cookie, 'x-csrf-token': p.csrf, ...extra };
}

const SMS = { recipient: { to: '33612345678' }, body: { text: 'Hello' } };

forEachDialect('Console users, roles and sessions', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;

  before(async () => {
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 10 });
  });
  after(() => server?.stop());

  it('a user invited as SENDER sends and reads messages but cannot read the balance', async () => {
    const sender = await accept(server, await invite(server, tenant.organisationId, 'sender@example.com', 'SENDER'));
    const sent = await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(sender) });
    assert.equal(sent.status, 201, sent.text);
    const read = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { headers: as(sender) });
    assert.equal(read.status, 200, read.text);
    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { headers: as(sender) }),
      403,
      '403.001',
      /SENDER may not perform organisation:read/,
    );
    assertError(await request(server, 'GET', '/commons/v1/consumptions', { headers: as(sender) }), 403, '403.001');
    assertError(await request(server, 'GET', '/commons/v1/users', { headers: as(sender) }), 403, '403.001');
    const me = await request(server, 'GET', '/commons/v1/me', { headers: { cookie: sender.cookie } });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.role, 'SENDER');
    assert.equal(me.body.user.email, 'sender@example.com');
    assert.equal(me.body.csrfToken, sender.csrf);
  });

  it('sets the session cookie HttpOnly and SameSite, and Secure only over HTTPS', async () => {
    const token = await invite(server, tenant.organisationId, 'cookie@example.com', 'VIEWER');
    const res = await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'correct horse battery' } });
    const line = res.headers.getSetCookie().find((c) => c.startsWith('tern_session='))!;
    assert.match(line, /; HttpOnly/);
    assert.match(line, /; SameSite=Lax/);
    assert.match(line, /; Path=\//);
    assert.doesNotMatch(line, /Secure/, 'plain HTTP: a Secure cookie would never come back');
  });

  it('refuses a change made with the session cookie but without its CSRF token, or from another origin', async () => {
    const sender = await accept(server, await invite(server, tenant.organisationId, 'csrf@example.com', 'SENDER'));
    const before = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { headers: as(sender) });
    assertError(await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: { cookie: sender.cookie } }), 403, '403.007', /x-csrf-token/);
    assertError(
      await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: { cookie: sender.cookie, 'x-csrf-token': 'x'.repeat(43) } }),
      403,
      '403.007',
    );
    assertError(
      await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(sender, { origin: 'https://evil.example' }) }),
      403,
      '403.007',
      /evil\.example/,
    );
    assertError(await request(server, 'POST', '/commons/v1/sign-out', { headers: { cookie: sender.cookie } }), 403, '403.007');
    const afterwards = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { headers: as(sender) });
    assert.equal(afterwards.body.items.length, before.body.items.length, 'nothing was sent');
    // Reading needs no token; the same origin is welcome.
    assert.equal((await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(sender, { origin: server.url }) })).status, 201);
  });

  it('signs in with email and password, signs out, and refuses the ended session', async () => {
    await accept(server, await invite(server, tenant.organisationId, 'Billing@Example.com', 'BILLING'), 'a long billing password');
    const res = await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'billing@example.COM', password: 'a long billing password' } });
    assert.equal(res.status, 200, res.text);
    const billing: Person = { cookie: sessionCookieOf(res), csrf: res.body.csrfToken, userId: res.body.user.userId };
    const org = await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { headers: as(billing) });
    assert.equal(org.status, 200, 'BILLING reads the balance');
    assertError(await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(billing) }), 403, '403.001');
    const out = await request(server, 'POST', '/commons/v1/sign-out', { headers: as(billing) });
    assert.equal(out.status, 204);
    assert.match(out.headers.getSetCookie()[0]!, /tern_session=;.*Max-Age=0/);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { headers: as(billing) }), 401, '401.003', /ended/);
    assertError(await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'billing@example.com', password: 'not the password' } }), 401, '401.003');
    assertError(await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'nobody@example.com', password: 'not the password' } }), 401, '401.003');
    assertError(await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'not an email', password: 'x' } }), 400, '400.001', /email/);
    assertError(await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'billing@example.com' } }), 400, '400.001');
  });

  it('an API key wins over a cookie, and keys carry the new roles', async () => {
    const key = await request(server, 'POST', `/admin/v1/channels/${tenant.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'sender key', roles: ['SENDER'] },
    });
    assert.equal(key.status, 201, key.text);
    assert.equal((await request(server, 'POST', '/sms/v1/messages', { key: key.body.value, body: SMS })).status, 201);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { key: key.body.value }), 403, '403.001');
    assertError(
      await request(server, 'POST', `/admin/v1/channels/${tenant.channelId}/credentials`, { key: server.adminKey, body: { name: 'bad', roles: ['ROOT'] } }),
      400,
      '400.001',
    );
  });

  it('invitations: OWNER and ADMIN invite by link; a link is used once; bad input is refused', async () => {
    const owner = await accept(server, await invite(server, tenant.organisationId, 'owner@example.com', 'OWNER'));
    const made = await request(server, 'POST', '/commons/v1/invitations', { body: { email: 'dev@example.com', role: 'DEVELOPER' }, headers: as(owner) });
    assert.equal(made.status, 201, made.text);
    assert.match(made.body.url, /\/console\/#\/invitation\?token=/);
    const listed = await request(server, 'GET', '/commons/v1/invitations', { headers: as(owner) });
    assert.deepEqual(
      listed.body.items.map((i: any) => i.email),
      ['dev@example.com'],
    );
    assert.equal(listed.body.items[0].url, undefined, 'the link is shown once');
    const token = new URL(made.body.url.replace('/#/', '/')).searchParams.get('token')!;
    assertError(await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'short' } }), 400, '400.001', /12 to 256/);
    const dev = await accept(server, token);
    assertError(
      await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'correct horse battery' } }),
      401,
      '401.003',
      /used/,
    );
    assertError(
      await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token: 'nope', password: 'correct horse battery' } }),
      401,
      '401.003',
    );
    assertError(
      await request(server, 'POST', '/commons/v1/invitations', { body: { email: 'dev@example.com', role: 'VIEWER' }, headers: as(owner) }),
      409,
      '409.001',
    );
    assertError(
      await request(server, 'POST', '/commons/v1/invitations', { body: { email: 'x@example.com', role: 'ROOT' }, headers: as(owner) }),
      400,
      '400.001',
    );
    assertError(
      await request(server, 'POST', '/commons/v1/invitations', { body: { email: 'x@', role: 'VIEWER' }, headers: as(owner) }),
      400,
      '400.001',
      /email/,
    );
    assertError(
      await request(server, 'POST', '/commons/v1/invitations', { body: { email: 'x@example.com', role: 'VIEWER' }, headers: as(dev) }),
      403,
      '403.001',
    );
    // A DEVELOPER manages keys and webhooks.
    const keys = await request(server, 'GET', `/commons/v1/channels/${tenant.channelId}/credentials`, { headers: as(dev) });
    assert.equal(keys.status, 200, keys.text);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${tenant.organisationId}`, { headers: as(dev) }), 403, '403.001');
  });

  it('roles change and users go: only an OWNER makes owners, the last OWNER stays, a removed user is signed out', async () => {
    const org = await createTenant(server, { name: 'Roles org' });
    const owner = await accept(server, await invite(server, org.organisationId, 'owner@roles.example', 'OWNER'));
    const admin = await accept(server, await invite(server, org.organisationId, 'admin@roles.example', 'ADMIN'));
    const viewer = await accept(server, await invite(server, org.organisationId, 'viewer@roles.example', 'VIEWER'));
    assertError(await request(server, 'PATCH', `/commons/v1/users/${viewer.userId}`, { body: { role: 'OWNER' }, headers: as(admin) }), 403, '403.001', /OWNER/);
    assertError(
      await request(server, 'PATCH', `/commons/v1/users/${owner.userId}`, { body: { role: 'VIEWER' }, headers: as(owner) }),
      409,
      '409.001',
      /last OWNER/,
    );
    assertError(await request(server, 'DELETE', `/commons/v1/users/${owner.userId}`, { headers: as(owner) }), 409, '409.001', /last OWNER/);
    const changed = await request(server, 'PATCH', `/commons/v1/users/${viewer.userId}`, { body: { role: 'SENDER' }, headers: as(admin) });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.role, 'SENDER');
    const sent = await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(viewer) });
    assert.equal(sent.status, 201, `the new role holds at once: ${sent.text}`);
    // Another organisation's users are out of reach.
    assertError(
      await request(server, 'PATCH', `/commons/v1/users/${viewer.userId}`, {
        body: { role: 'VIEWER' },
        headers: as(await accept(server, await invite(server, tenant.organisationId, 'other-admin@example.com', 'ADMIN'))),
      }),
      404,
      '404.001',
    );
    assert.equal((await request(server, 'DELETE', `/commons/v1/users/${viewer.userId}`, { headers: as(admin) })).status, 204);
    assertError(await request(server, 'GET', '/sms/v1/messages', { headers: as(viewer) }), 401, '401.003');
    const list = await request(server, 'GET', '/commons/v1/users', { headers: as(owner) });
    assert.deepEqual(list.body.items.map((u: any) => u.email).sort(), ['admin@roles.example', 'owner@roles.example']);
  });

  it('a password reset link from the operator sets a new password once and ends the old sessions', async () => {
    const user = await accept(server, await invite(server, tenant.organisationId, 'forgetful@example.com', 'VIEWER'), 'the first password');
    const link = await request(server, 'POST', `/admin/v1/organisations/${tenant.organisationId}/users/${user.userId}/password-reset`, {
      key: server.adminKey,
    });
    assert.equal(link.status, 201, link.text);
    const token = new URL(link.body.url.replace('/#/', '/')).searchParams.get('token')!;
    assertError(await request(server, 'POST', '/commons/v1/password-reset', { body: { token, password: 'tiny' } }), 400, '400.001');
    const reset = await request(server, 'POST', '/commons/v1/password-reset', { body: { token, password: 'the second password' } });
    assert.equal(reset.status, 200, reset.text);
    assertError(await request(server, 'POST', '/commons/v1/password-reset', { body: { token, password: 'the third password' } }), 401, '401.003');
    assertError(await request(server, 'GET', '/commons/v1/me', { headers: as(user) }), 401, '401.003', /ended/);
    assertError(
      await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'forgetful@example.com', password: 'the first password' } }),
      401,
      '401.003',
    );
    assert.equal(
      (await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'forgetful@example.com', password: 'the second password' } })).status,
      200,
    );
  });

  it("the operator's own people use the operator API, not a customer's", async () => {
    const op = await accept(server, await invite(server, 'operator', 'ops@tern.example', 'ADMIN'));
    const orgs = await request(server, 'GET', '/admin/v1/organisations?pageSize=1', { headers: as(op) });
    assert.equal(orgs.status, 200, orgs.text);
    assertError(await request(server, 'GET', '/sms/v1/messages', { headers: as(op) }), 403, '403.004');
    const viewer = await accept(server, await invite(server, 'operator', 'ops-viewer@tern.example', 'VIEWER'));
    assertError(await request(server, 'GET', '/admin/v1/organisations', { headers: as(viewer) }), 403, '403.001');
    const customer = await accept(server, await invite(server, tenant.organisationId, 'not-ops@example.com', 'OWNER'));
    assertError(await request(server, 'GET', '/admin/v1/organisations', { headers: as(customer) }), 403, '403.004');
    assertError(
      await request(server, 'POST', '/admin/v1/organisations/nope/invitations', { key: server.adminKey, body: { email: 'a@example.com', role: 'VIEWER' } }),
      404,
      '404.001',
    );
  });
});

forEachDialect('Console sign-in lockout', (dialect) => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer(dialect, { TERN_AUTH_FAILURES_PER_MINUTE: '3' });
  });
  after(() => server?.stop());

  it('locks the address out after failed sign-ins, even for the right password', async () => {
    const tenant = await createTenant(server);
    const res = await request(server, 'POST', `/admin/v1/organisations/${tenant.organisationId}/invitations`, {
      key: server.adminKey,
      body: { email: 'locked@example.com', role: 'VIEWER' },
    });
    const token = new URL(res.body.url.replace('/#/', '/')).searchParams.get('token')!;
    assert.equal((await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'the right password' } })).status, 200);
    // Failures are counted per clock minute: the five tries below go in one, not across the turn of one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await sleep(60_000 - intoMinute + 50);
    for (let i = 0; i < 3; i++) {
      assertError(
        await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'locked@example.com', password: `wrong password ${i}` } }),
        401,
        '401.003',
      );
    }
    // The fourth failure in the minute locks the address out.
    assertError(await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'locked@example.com', password: 'wrong password 3' } }), 401, '401.003');
    const locked = await request(server, 'POST', '/commons/v1/sign-in', { body: { email: 'locked@example.com', password: 'the right password' } });
    assertError(locked, 429, '429.001', /too many failed authentications/);
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
  });
});

forEachDialect('Console sessions behind HTTPS', (dialect) => {
  let server: TestServer;

  before(async () => {
    // TERN_PUBLIC_URL in https: the address browsers use is HTTPS (a proxy terminates TLS in front of Tern).
    server = await startTestServer(dialect, { TERN_PUBLIC_URL: 'https://tern.example' });
  });
  after(() => server?.stop());

  it('marks the session cookie Secure, and takes changes only from the public origin', async () => {
    const tenant = await createTenant(server, { balance: 10 });
    const token = await invite(server, tenant.organisationId, 'secure@example.com', 'SENDER');
    assertError(
      await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'correct horse battery' }, headers: { origin: server.url } }),
      403,
      '403.007',
    );
    const res = await request(server, 'POST', '/commons/v1/invitations/accept', {
      body: { token, password: 'correct horse battery' },
      headers: { origin: 'https://tern.example' },
    });
    assert.equal(res.status, 200, res.text);
    const line = res.headers.getSetCookie().find((c) => c.startsWith('tern_session='))!;
    assert.match(line, /; Secure/);
    assert.match(line, /; HttpOnly/);
    const person: Person = { cookie: sessionCookieOf(res), csrf: res.body.csrfToken, userId: res.body.user.userId };
    assertError(await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(person, { origin: server.url }) }), 403, '403.007');
    assert.equal((await request(server, 'POST', '/sms/v1/messages', { body: SMS, headers: as(person, { origin: 'https://tern.example' }) })).status, 201);
  });
});
