import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

forEachDialect('text that cannot be stored', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 100, channel: { fromFieldList: ['Tern'] } });
  });
  after(() => server.stop());

  const send = (body: Record<string, unknown>) =>
    request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'Hi' }, ...body } });

  test('a NUL character or half a surrogate pair in any field is a 400 naming it, and nothing is stored', async () => {
    assertError(await send({ refClient: 'a\u0000b' }), 400, '400.001', /^body\.refClient: must not contain the NUL character/);
    assertError(await send({ from: 'Te\u0000rn' }), 400, '400.001', /^body\.from: /);
    assertError(await send({ callbackUrlStatus: 'https://example.com/\u0000' }), 400, '400.001', /^body\.callbackUrlStatus: /);
    assertError(await send({ body: { text: 'x\u0000' } }), 400, '400.001', /^body\.body\.text: /);
    const raw = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      rawBody: '{"recipient":{"to":"33612345678"},"body":{"text":"\\ud800"}}',
      headers: { 'content-type': 'application/json' },
    });
    assertError(raw, 400, '400.001', /^body\.body\.text: must not contain half of a surrogate pair/);
    const stored = await server.app.store.db.selectFrom('messages').select('id').where('organisation_id', '=', t.organisationId).execute();
    assert.equal(stored.length, 0);
  });

  test('in path parameters and filters too: 400, not 500', async () => {
    assertError(await request(server, 'GET', '/sms/v1/campaigns/%00', { key: t.key }), 400, '400.001', /^path\.campaignId: must not contain the NUL/);
    assertError(await request(server, 'GET', '/rcs/v1/channels/%00/campaigns', { key: t.key }), 400, '400.001', /^path\.channelId: must not contain the NUL/);
    assertError(await request(server, 'GET', '/sms/v1/messages?searchBy[refClient]=%00', { key: t.key }), 400, '400.001', /^query\[searchBy\[refClient\]\]: /);
    assertError(await request(server, 'GET', `/admin/v1/organisations/a%00b`, { key: server.adminKey }), 400, '400.001', /^path\./);
  });

  test('one tenant sending NUL in a loop does not change another tenant’s answers', async () => {
    const other = await createTenant(server, { balance: 100 });
    let noisy = true;
    const noise = (async () => {
      let n = 0;
      while (noisy) {
        const r = await send({ refClient: `noise\u0000${n++}` });
        assert.equal(r.status, 400);
      }
      return n;
    })();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(server, 'POST', '/sms/v1/messages', {
          key: other.key,
          body: { recipient: { to: '33612345678' }, body: { text: `quiet ${i}` }, refClient: `q${i}` },
        }),
      ),
    );
    noisy = false;
    assert.ok((await noise) > 0);
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [201]);
  });
});
