// Settled one-time passwords are forgotten with the retention of messages: the code, its sends and its number's lock
// row go; a pending code stays.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

forEachDialect('one-time passwords retention', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  test('settled codes, their sends and lock rows are pruned past the retention; pending ones are kept', async () => {
    const t = await createTenant(server, { balance: 10 });
    const ask = async (to: string) => (await request(server, 'POST', '/sms/v1/otp', { key: t.key, body: { recipient: { to } } })).body;
    const settled = await ask('33612349801');
    const pending = await ask('33612349802');
    assert.equal((await request(server, 'DELETE', `/sms/v1/otp/${settled.otpId}`, { key: t.key })).body.status, 'CANCELLED');
    const db = server.app.store.db;
    const count = async (table: 'otps' | 'otp_sends' | 'otp_recipients') =>
      (await db.selectFrom(table).select('recipient').where('recipient', 'in', ['33612349801', '33612349802']).execute()).map((r) => r.recipient).sort();

    assert.equal(await server.app.services.otp.prune(Date.now(), 86_400_000), 0, 'nothing is old enough');
    const removed = await server.app.services.otp.prune(Date.now() + 1_000, 0);
    assert.ok(removed >= 3, `${removed} rows`);
    assert.deepEqual(await count('otps'), ['33612349802']);
    assert.deepEqual(await count('otp_sends'), [], 'sends past the retention');
    assert.deepEqual(await count('otp_recipients'), ['33612349802']);
    assert.equal((await request(server, 'GET', `/sms/v1/otp/${pending.otpId}`, { key: t.key })).body.status, 'PENDING');
    assert.equal((await request(server, 'GET', `/sms/v1/otp/${settled.otpId}`, { key: t.key })).status, 404);
  });
});
