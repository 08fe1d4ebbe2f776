import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { migrations } from '../../../src/store/migrations/index.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

forEachDialect('foundation', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test('organisation, channel, key, top-up: the key reads its channel and balance', async () => {
    const admin = server.adminKey;
    const org = await request(server, 'POST', '/admin/v1/organisations', { key: admin, body: { name: 'Acme' } });
    assert.equal(org.status, 201);
    assert.equal(org.body.name, 'Acme');
    assert.deepEqual(org.body.balance, { amount: 0, currency: 'EUR', parentBilling: false });
    const orgId = org.body.organisationId;

    const channel = await request(server, 'POST', `/admin/v1/organisations/${orgId}/channels`, {
      key: admin,
      body: {
        name: 'Alerts',
        type: 'SMS',
        flow: 'MARKETING',
        defaultFromField: 'ACME',
        fromFieldList: ['ACME', 'ACMEINFO'],
        defaultCallbackUrlStatus: 'https://example.com/status',
        dailyConsumptionLimit: 12.5,
      },
    });
    assert.equal(channel.status, 201, channel.text);
    assert.equal(channel.body.type, 'SMS');
    assert.equal(channel.body.flow, 'MARKETING');
    assert.deepEqual(channel.body.fromFieldList, ['ACME', 'ACMEINFO']);
    assert.equal(channel.body.dailyConsumptionLimit, 12.5);

    const cred = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, {
      key: admin,
      body: { name: 'backend', roles: ['ADMIN'] },
    });
    assert.equal(cred.status, 201);
    assert.match(cred.body.value, /^tern_[A-Za-z0-9_-]{43}$/);
    assert.equal(cred.body.keyPrefix, cred.body.value.slice(0, 12));
    const key = cred.body.value;

    const listed = await request(server, 'GET', `/admin/v1/channels/${channel.body.channelId}/credentials`, { key: admin });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items.length, 1);
    assert.equal(listed.body.items[0].value, undefined, 'the key value is shown only once');

    const credit = await request(server, 'POST', `/admin/v1/organisations/${orgId}/credit`, {
      key: admin,
      body: { amount: '25.123456', reference: 'invoice 42' },
    });
    assert.equal(credit.status, 201, credit.text);
    assert.equal(credit.body.amount, 25.123456);
    assert.equal(credit.body.balance, 25.123456);
    assert.equal(credit.body.kind, 'TOPUP');

    const channels = await request(server, 'GET', '/commons/v1/channels', { key });
    assert.equal(channels.status, 200);
    assert.equal(channels.body.items.length, 1);
    const c = channels.body.items[0];
    assert.equal(c.channelId, channel.body.channelId);
    assert.equal(c.defaultFromField, 'ACME');
    assert.equal(c.defaultCallbackUrlStatus, 'https://example.com/status');
    assert.equal(c.href, `${server.url}/commons/v1/channels/${c.channelId}`);
    assert.match(c.creationDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const mine = await request(server, 'GET', `/commons/v1/organisations/${orgId}`, { key });
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.balance, { amount: 25.123456, currency: 'EUR', parentBilling: false });

    const other = await createTenant(server);
    const foreign = await request(server, 'GET', `/commons/v1/organisations/${other.organisationId}`, { key });
    assertError(foreign, 404, '404.001');

    const admins = await request(server, 'GET', `/admin/v1/organisations/${orgId}`, { key: admin });
    assert.equal(admins.body.balance.amount, 25.123456);
  });

  test('missing, unknown and revoked keys get 401 with the JSON error body', async () => {
    assertError(await request(server, 'GET', '/commons/v1/channels'), 401, '401.001', /X-Api-Key/);
    assertError(await request(server, 'GET', '/commons/v1/channels', { key: 'tern_nope' }), 401, '401.002');
    const t = await createTenant(server);
    const ok = await request(server, 'GET', '/commons/v1/channels', { headers: { 'X-API-KEY': t.key } });
    assert.equal(ok.status, 200, 'the header name is case-insensitive');
    const revoked = await request(server, 'DELETE', `/admin/v1/credentials/${t.credentialId}`, { key: server.adminKey });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.state, 'REVOKED');
    assertError(await request(server, 'GET', '/commons/v1/channels', { key: t.key }), 401, '401.002', /revoked/);
    assertError(await request(server, 'DELETE', `/admin/v1/credentials/${t.credentialId}`, { key: server.adminKey }), 409, '409.001');
  });

  test('roles: a MESSAGE key may not read the channel; a USER key may not read the organisation', async () => {
    const m = await createTenant(server, { roles: ['MESSAGE'] });
    assertError(await request(server, 'GET', '/commons/v1/channels', { key: m.key }), 403, '403.001');
    const u = await createTenant(server, { roles: ['USER'] });
    assert.equal((await request(server, 'GET', '/commons/v1/channels', { key: u.key })).status, 200);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${u.organisationId}`, { key: u.key }), 403, '403.001');
  });

  test('the admin API needs the operator key', async () => {
    assertError(await request(server, 'GET', '/admin/v1/organisations'), 401, '401.001');
    assertError(await request(server, 'GET', '/admin/v1/organisations', { key: 'wrong-key-wrong-key' }), 401, '401.002');
    const t = await createTenant(server);
    assertError(await request(server, 'GET', '/admin/v1/organisations', { key: t.key }), 403, '403.004');
    const list = await request(server, 'GET', '/admin/v1/organisations?page=1&pageSize=2', { key: server.adminKey });
    assert.equal(list.status, 200);
    assert.equal(list.body.items.length, 2);
    assert.equal(list.body.page, 1);
    assert.equal(list.body.pageSize, 2);
  });

  test('bad input: validation names the field, malformed JSON, content type, size, unknown path', async () => {
    const admin = server.adminKey;
    assertError(await request(server, 'POST', '/admin/v1/organisations', { key: admin, body: {} }), 400, '400.001', /body\.name/);
    assertError(
      await request(server, 'POST', '/admin/v1/organisations', {
        key: admin,
        body: { name: 'x', parentOrganisationId: '0190a000-0000-7000-8000-000000000000' },
      }),
      404,
      '404.001',
    );
    const org = await request(server, 'POST', '/admin/v1/organisations', { key: admin, body: { name: 'Bad input' } });
    const id = org.body.organisationId;
    assertError(
      await request(server, 'POST', `/admin/v1/organisations/${id}/channels`, { key: admin, body: { name: 'c', type: 'FAX', flow: 'OTP' } }),
      400,
      '400.001',
      /body\.type: must be one of SMS, RCS, VOICE/,
    );
    assertError(
      await request(server, 'POST', `/admin/v1/organisations/${id}/channels`, {
        key: admin,
        body: { name: 'c', type: 'SMS', flow: 'OTP', defaultCallbackUrlMo: 'ftp://example.com/x' },
      }),
      400,
      '400.001',
      /defaultCallbackUrlMo: must be an http or https URL/,
    );
    assertError(
      await request(server, 'POST', `/admin/v1/organisations/${id}/credit`, { key: admin, body: { amount: '1.1234567' } }),
      400,
      '400.006',
      /at most 6 decimals/,
    );
    assertError(await request(server, 'POST', `/admin/v1/organisations/${id}/credit`, { key: admin, body: { amount: -5 } }), 400, '400.006');
    assertError(await request(server, 'POST', `/admin/v1/organisations/${id}/credit`, { key: admin, body: { amount: 0 } }), 400, '400.006');
    assertError(await request(server, 'GET', '/admin/v1/organisations/not-a-uuid', { key: admin }), 400, '400.001', /path\.id/);
    assertError(
      await request(server, 'POST', '/admin/v1/organisations', { key: admin, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } }),
      400,
      '400.002',
    );
    assertError(
      await request(server, 'POST', '/admin/v1/organisations', { key: admin, rawBody: 'name=x', headers: { 'content-type': 'text/csv' } }),
      415,
      '415.001',
    );
    assertError(
      await request(server, 'POST', '/admin/v1/organisations', {
        key: admin,
        rawBody: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
      }),
      413,
      '413.001',
    );
    assertError(await request(server, 'GET', '/no/such/path'), 404, '404.002', /GET \/no\/such\/path/);
  });

  test('operations: healthz, readyz, metrics', async () => {
    const health = await request(server, 'GET', '/healthz');
    const latest = Object.keys(migrations).at(-1);
    // The version of the repository's package.json (the test files run from .test-build/test/…).
    const { version } = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.match(version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(health.body, { status: 'ok', version, schema: { applied: Object.keys(migrations).length, latest, pending: 0 } });
    const ready = await request(server, 'GET', '/readyz');
    assert.deepEqual(ready.body, { status: 'ready', database: dialect });
    const metrics = await request(server, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /tern_http_requests_total\{method="GET",route="\/readyz",status="200"\} 1/);
    assert.match(metrics.text, /process_cpu_user_seconds_total/);
  });

  test('OpenAPI 3 document validates and documents every route with its schemas', async () => {
    const doc = await request(server, 'GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.match(doc.body.openapi, /^3\./);
    const validator = new Validator();
    const result = await validator.validate(doc.body);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    const paths = doc.body.paths as Record<string, Record<string, any>>;
    for (const p of [
      '/admin/v1/organisations',
      '/admin/v1/organisations/{id}/channels',
      '/admin/v1/channels/{id}/credentials',
      '/commons/v1/channels',
      '/commons/v1/organisations/{id}',
      '/healthz',
    ]) {
      assert.ok(paths[p], `${p} documented`);
    }
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (path === '/metrics') continue;
        assert.ok(op.responses && Object.keys(op.responses).length > 0, `${method} ${path} has responses`);
        const success = Object.keys(op.responses).find((s) => /^2\d\d$/.test(s));
        assert.ok(success, `${method} ${path} documents a success answer`);
        if (success !== '204') {
          const content = op.responses[success].content ?? {};
          assert.ok(
            Object.values(content).some((c: any) => c.schema),
            `${method} ${path} documents its success schema`,
          );
        }
        if (['post', 'put', 'patch'].includes(method) && !path.endsWith('/rotate') && !path.endsWith('/replay')) {
          // JSON, or the media type the operation takes (a legacy upload is multipart/form-data).
          assert.ok(
            Object.values<any>(op.requestBody?.content ?? {}).some((c) => c.schema),
            `${method} ${path} documents its body`,
          );
        }
      }
    }
    const docs = await request(server, 'GET', '/docs/');
    assert.equal(docs.status, 200);
    assert.match(docs.text, /swagger/i);
  });
});
