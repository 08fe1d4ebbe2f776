import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditedAction, isAuditedChange, withoutSecrets } from '../../../src/domain/audit.ts';
import { parseCsv } from '../../../src/domain/csv.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

test('changes are named from their route, and only management changes are recorded', () => {
  assert.deepEqual(auditedAction('PATCH', '/admin/v1/organisations/:id'), {
    action: 'organisation.update',
    objectType: 'organisation',
    objectParam: 'id',
    hasBefore: true,
  });
  assert.equal(auditedAction('POST', '/admin/v1/organisations/:id/channels').action, 'channel.create');
  assert.equal(auditedAction('POST', '/admin/v1/organisations/:id/credit').action, 'organisation.credit');
  assert.equal(auditedAction('POST', '/commons/v1/channels/:id/webhook-secret/rotate').action, 'webhookSecret.rotate');
  assert.equal(auditedAction('DELETE', '/commons/v1/blacklist/:msisdn').action, 'blacklist.delete');
  assert.equal(auditedAction('PUT', '/admin/v1/prices').action, 'price.set');
  assert.equal(auditedAction('POST', '/commons/v1/blacklist').action, 'blacklist.create');
  assert.equal(auditedAction('POST', '/admin/v1/organisations/:id/erasures').action, 'erasure.create');
  assert.equal(isAuditedChange('POST', '/sms/v1/messages'), false);
  assert.equal(isAuditedChange('GET', '/admin/v1/organisations'), false);
  assert.equal(isAuditedChange('POST', '/admin/v1/simulator/mo'), false);
  assert.equal(isAuditedChange('POST', '/sms/v1/channels/:channelId/templates'), true);
  assert.deepEqual(
    withoutSecrets({ name: 'k', value: 'tern_live_x', nested: { webhookSecret: 'whsec', n: 1 }, list: [{ password: 'p' }], none: null, oneTimePasswords: 3 }),
    {
      name: 'k',
      value: '[Redacted]',
      nested: { webhookSecret: '[Redacted]', n: 1 },
      list: [{ password: '[Redacted]' }],
      none: null,
      oneTimePasswords: 3,
    },
  );
  // One-time links keep their place, not their token.
  assert.deepEqual(withoutSecrets({ url: 'https://tern.example/console/#/invitation?token=abc123&x=1', callbackUrl: 'https://hooks.example/s?id=7' }), {
    url: 'https://tern.example/console/#/invitation?token=[Redacted]&x=1',
    callbackUrl: 'https://hooks.example/s?id=7',
  });
});

forEachDialect('audit log', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server.stop();
  });

  const entries = async (query: string) => {
    const r = await request(server, 'GET', `/admin/v1/audit?pageSize=100&${query}`, { key: server.adminKey });
    assert.equal(r.status, 200, r.text);
    return r.body.items as Array<Record<string, any>>;
  };

  test('each admin change leaves exactly one entry, with before and after and no secret', async () => {
    const t = await createTenant(server);
    const byObject = (id: string) => entries(`searchBy[objectId]=${id}`);
    const created = await byObject(t.organisationId);
    assert.deepEqual(
      created.map((e) => e.action),
      ['organisation.create'],
    );
    assert.equal(created[0]!.organisationId, t.organisationId);
    assert.deepEqual(created[0]!.actor, { type: 'OPERATOR', id: 'operator' });
    assert.equal('before' in created[0]!, false);
    assert.equal(created[0]!.after.name, 'Test org');

    const patch = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, {
      key: server.adminKey,
      body: { name: 'Renamed' },
      headers: { 'x-tern-client': 'cli' },
    });
    assert.equal(patch.status, 200, patch.text);
    const updates = await entries(`searchBy[objectId]=${t.organisationId}&searchBy[action]=organisation.update`);
    assert.equal(updates.length, 1, 'exactly one entry');
    const u = updates[0]!;
    assert.equal(u.before.name, 'Test org');
    assert.equal(u.after.name, 'Renamed');
    assert.equal(u.interface, 'CLI');
    assert.equal(u.requestId, patch.headers.get('x-request-id'));
    assert.equal(typeof u.remoteAddress, 'string');

    // A refused change leaves nothing.
    const bad = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey, body: { contentRetentionDays: 0 } });
    assert.equal(bad.status, 400);
    assert.equal((await entries(`searchBy[objectId]=${t.organisationId}&searchBy[action]=organisation.update`)).length, 1);

    // A key made: its value is shown once, never logged.
    const key = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'Second', roles: ['USER'] },
    });
    assert.equal(key.status, 201, key.text);
    const keyEntries = await byObject(key.body.credentialId);
    assert.equal(keyEntries.length, 1);
    assert.equal(keyEntries[0]!.action, 'credential.create');
    assert.equal(keyEntries[0]!.organisationId, t.organisationId);
    assert.equal(keyEntries[0]!.after.value, '[Redacted]');
    const all = JSON.stringify(await entries(`searchBy[organisationId]=${t.organisationId}`));
    assert.equal(all.includes(key.body.value), false, 'the key never appears');
    assert.equal(all.includes(t.key), false);

    // The organisation's own change, by its key, in its own log.
    const own = await request(server, 'PATCH', `/commons/v1/channels/${t.channelId}`, { key: t.key, body: { name: 'Alerts' } });
    assert.equal(own.status, 200, own.text);
    const mine = await request(server, 'GET', '/commons/v1/audit?pageSize=100', { key: t.key });
    assert.equal(mine.status, 200, mine.text);
    const channelUpdate = mine.body.items.filter((e: any) => e.action === 'channel.update');
    assert.equal(channelUpdate.length, 1);
    assert.equal(channelUpdate[0].actor.type, 'KEY');
    assert.equal(channelUpdate[0].before.name, 'Test channel');
    assert.equal(channelUpdate[0].after.name, 'Alerts');
    assert.ok(mine.body.items.every((e: any) => e.organisationId === t.organisationId));
    const other = await createTenant(server);
    const theirs = await request(server, 'GET', '/commons/v1/audit?pageSize=100', { key: other.key });
    assert.equal(
      theirs.body.items.some((e: any) => e.organisationId === t.organisationId),
      false,
      'an organisation sees only its own',
    );
    // Sending messages is not a management change.
    await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'hi' } } });
    assert.equal((await request(server, 'GET', '/commons/v1/audit?pageSize=100', { key: t.key })).body.items.length, mine.body.items.length);
  });

  test('a person’s change is recorded as theirs, read before as them; an invitation’s link is kept without its token', async () => {
    const t = await createTenant(server);
    const invited = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/invitations`, {
      key: server.adminKey,
      body: { email: 'audited@example.com', role: 'ADMIN' },
    });
    assert.equal(invited.status, 201, invited.text);
    const token = new URL(String(invited.body.url).replace('/#/', '/')).searchParams.get('token')!;
    const log = JSON.stringify(await entries(`searchBy[organisationId]=${t.organisationId}`));
    assert.match(log, /token=\[Redacted\]/, 'the link is recorded');
    assert.equal(log.includes(token), false, 'its token is not');

    const accepted = await request(server, 'POST', '/commons/v1/invitations/accept', { body: { token, password: 'correct horse battery' } });
    assert.equal(accepted.status, 200, accepted.text);
    const cookie = accepted.headers
      .getSetCookie()
      .find((c) => c.startsWith('tern_session='))!
      .split(';')[0]!;
    const person = { cookie, 'x-csrf-token': accepted.body.csrfToken as string };
    const changed = await request(server, 'PATCH', `/commons/v1/channels/${t.channelId}`, { body: { name: 'Renamed by a person' }, headers: person });
    assert.equal(changed.status, 200, changed.text);
    const mine = await request(server, 'GET', '/commons/v1/audit?pageSize=100&searchBy[action]=channel.update', { key: t.key });
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.items.length, 1);
    const entry = mine.body.items[0];
    assert.deepEqual(entry.actor, { type: 'USER', id: accepted.body.user.userId });
    assert.equal(entry.before.name, 'Test channel');
    assert.equal(entry.after.name, 'Renamed by a person');
  });

  test('filters, paging, CSV, and bad filters', async () => {
    const t = await createTenant(server);
    for (const name of ['a', 'b', 'c']) {
      await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey, body: { name } });
    }
    assert.equal((await entries(`searchBy[organisationId]=${t.organisationId}&searchBy[action]=organisation.update`)).length, 3);
    const p = await request(
      server,
      'GET',
      `/admin/v1/audit?searchBy[organisationId]=${t.organisationId}&searchBy[action]=organisation.update&pageSize=2&page=2`,
      {
        key: server.adminKey,
      },
    );
    assert.deepEqual(
      p.body.items.map((e: any) => e.after.name),
      ['a'],
      'newest first, page 2',
    );
    const future = await entries(`searchBy[organisationId]=${t.organisationId}&searchBy[from]=${new Date(Date.now() + 60_000).toISOString()}`);
    assert.equal(future.length, 0);
    const past = await entries(`searchBy[organisationId]=${t.organisationId}&searchBy[until]=2000-01-01T00:00:00Z`);
    assert.equal(past.length, 0);
    const csv = await request(server, 'GET', `/admin/v1/audit?searchBy[organisationId]=${t.organisationId}&format=csv&pageSize=100`, { key: server.adminKey });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers.get('content-type')), /text\/csv/);
    const rows = parseCsv(csv.text, ',');
    assert.deepEqual(rows[0]!.fields.slice(0, 6), ['auditId', 'at', 'organisationId', 'actorType', 'actorId', 'action']);
    assert.equal(rows.length, 1 + 6, 'a header, then the organisation, its channel and key, and 3 updates');
    for (const bad of ['searchBy[from]=yesterday', 'pageSize=1000', 'format=xml']) {
      assert.equal((await request(server, 'GET', `/admin/v1/audit?${bad}`, { key: server.adminKey })).status, 400, bad);
    }
    assert.equal((await request(server, 'GET', '/admin/v1/audit', { key: t.key })).status, 403);
    assert.equal((await request(server, 'GET', '/commons/v1/audit')).status, 401);
  });
});
