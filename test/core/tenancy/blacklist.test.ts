import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CoreError } from '../../../src/core/errors.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

async function rejects(p: Promise<unknown>, kind: string, detail: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CoreError, String(err));
    assert.equal(err.kind, kind);
    assert.match(err.detail, detail);
    return true;
  });
}

forEachDialect('blacklist use case', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test('newest first then by number, paged, narrowed to one number, and kept per organisation', async () => {
    const blacklist = server.app.services.blacklist;
    const a = await createTenant(server, { name: 'A' });
    const b = await createTenant(server, { name: 'B' });
    await blacklist.add(a.organisationId, '33611111111', 1_000);
    await blacklist.add(a.organisationId, '33633333333', 2_000);
    await blacklist.add(a.organisationId, '33622222222', 2_000);
    await blacklist.add(b.organisationId, '33611111111', 3_000);

    const numbers = async (page: number, pageSize: number, msisdn?: string) =>
      (await blacklist.list(a.organisationId, { page, pageSize, ...(msisdn ? { msisdn } : {}) })).map((e) => e.msisdn);
    assert.deepEqual(await numbers(1, 10), ['33622222222', '33633333333', '33611111111']);
    assert.deepEqual(await numbers(1, 2), ['33622222222', '33633333333']);
    assert.deepEqual(await numbers(2, 2), ['33611111111']);
    assert.deepEqual(await numbers(3, 2), []);
    assert.deepEqual(await numbers(1, 10, '33633333333'), ['33633333333']);

    const [entry] = await blacklist.list(b.organisationId, { page: 1, pageSize: 10 });
    assert.deepEqual(entry, { organisation_id: b.organisationId, msisdn: '33611111111', source: 'API', created_at: 3_000 });

    await rejects(blacklist.add(a.organisationId, '33611111111', 4_000), 'CONFLICT', /^33611111111 is already blacklisted$/);
    assert.equal((await blacklist.list(a.organisationId, { page: 1, pageSize: 10, msisdn: '33611111111' }))[0]!.created_at, 1_000);

    await blacklist.remove(b.organisationId, '33611111111');
    assert.deepEqual(await numbers(1, 10, '33611111111'), ['33611111111'], "another organisation's removal leaves it");
    await rejects(blacklist.remove(b.organisationId, '33611111111'), 'NOT_FOUND', /^33611111111 is not blacklisted$/);

    // The REST door answers from the same list.
    const listed = await request(server, 'GET', '/commons/v1/blacklist?page=2&pageSize=2', { key: a.key });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, {
      items: [{ msisdn: '33611111111', source: 'API', creationDate: new Date(1_000).toISOString() }],
      page: 2,
      pageSize: 2,
    });
  });
});
