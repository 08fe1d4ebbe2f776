// Numbers that are not numbers: `Infinity`, `1e400` and huge values given as traffic limits (and elsewhere), and a
// bad value already stored by an older version.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, test } from 'node:test';
import { nonFinitePath } from '../../../src/doors/rest/schema-compilers.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

test('nonFinitePath finds the first number that is not finite, and names where it is', () => {
  assert.equal(nonFinitePath({ a: 1, b: [1, 2, { c: -3.5 }], d: 'Infinity' }), null);
  assert.equal(nonFinitePath({ send: { perKey: Infinity } }), '/send/perKey');
  assert.equal(nonFinitePath([0, [1, Number.NaN]]), '/1/1');
  assert.equal(nonFinitePath({ 'a/b': { '~': -Infinity } }), '/a~1b/~0');
  assert.equal(nonFinitePath(Infinity), '');
  assert.equal(nonFinitePath(null), null);
});

forEachDialect('traffic limits that are not numbers', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 10 });
  });
  after(() => server.stop());

  const put = (raw: string) =>
    request(server, 'PUT', `/admin/v1/organisations/${t.organisationId}/rate-limits`, {
      key: server.adminKey,
      rawBody: raw,
      headers: { 'content-type': 'application/json' },
    });
  const limitsRead = () => request(server, 'GET', `/admin/v1/organisations/${t.organisationId}/rate-limits`, { key: server.adminKey });

  test('Infinity, 1e400 and numbers past the maximum are refused with 400 naming the field; nothing is stored', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"send":{"perKey":"Infinity","perOrganisation":5}}', /body\.send\.perKey: must be a finite number/],
      ['{"send":{"perKey":5,"perOrganisation":"-Infinity"}}', /body\.send\.perOrganisation: must be a finite number/],
      ['{"read":{"perKey":"1e400","perOrganisation":5}}', /body\.read\.perKey: must be a finite number/],
      ['{"read":{"perKey":1e400,"perOrganisation":5}}', /body\.read\.perKey: must be integer/],
      ['{"lookup":{"perKey":1e20,"perOrganisation":5}}', /body\.lookup\.perKey: must be <= 1000000/],
      ['{"lookup":{"perKey":"9007199254740993","perOrganisation":5}}', /body\.lookup\.perKey: must be <= 1000000/],
      ['{"send":{"perKey":2.5,"perOrganisation":5}}', /body\.send\.perKey: must be integer/],
      ['{"send":{"perKey":0,"perOrganisation":5}}', /body\.send\.perKey: must be >= 1/],
    ];
    for (const [raw, detail] of cases) assertError(await put(raw), 400, '400.001', detail);
    assertError(await put('{"send":{"perKey":Infinity,"perOrganisation":5}}'), 400, '400.002');
    const read = await limitsRead();
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.send, { perKey: 1_000_000, perOrganisation: 1_000_000 }, 'the defaults: nothing was stored');
    const ok = await put('{"send":{"perKey":1000000,"perOrganisation":"7"}}');
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.send, { perKey: 1_000_000, perOrganisation: 7 });
  });

  test('a bad value stored by an older version reads as the default, and the organisation is served', async () => {
    const db = server.app.store.db;
    await db.deleteFrom('organisation_traffic_limits').where('organisation_id', '=', t.organisationId).execute();
    // What an older version let through: Infinity on SQLite (a REAL in the column), out of range on PostgreSQL.
    const bad = dialect === 'sqlite' ? sql`9e999` : sql`${2_147_483_647}`;
    await sql`insert into organisation_traffic_limits (organisation_id, route_group, per_key, per_organisation) values
      (${t.organisationId}, 'send', ${bad}, 3), (${t.organisationId}, 'read', 0, ${bad})`.execute(db);
    // What the node keeps of them is dropped, as a change made through another node drops it.
    server.app.services.access['limits'].clear();
    const read = await limitsRead();
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.send, { perKey: 1_000_000, perOrganisation: 3 }, 'the bad value reads as the default, the good one as stored');
    assert.deepEqual(read.body.read, { perKey: 1_000_000, perOrganisation: 1_000_000 });
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'still served' } } });
    assert.equal(sent.status, 201, sent.text);
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: t.key })).status, 200);
  });

  test('the same hole elsewhere: a page size of Infinity is a 400, not a 500', async () => {
    assertError(await request(server, 'GET', '/sms/v1/messages?pageSize=Infinity', { key: t.key }), 400, '400.001', /query\.pageSize: must be a finite number/);
    assertError(await request(server, 'GET', '/sms/v1/messages?page=1e400', { key: t.key }), 400, '400.001', /query\.page: must be a finite number/);
  });
});
