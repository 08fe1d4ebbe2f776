import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTenant, request, startTestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('prices across a cluster [postgres]', { skip }, () => {
  test('a price set on one node is charged by the others within a second', async () => {
    const first = await startTestServer('postgres');
    const second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    try {
      const t = await createTenant(first, { balance: 10 });
      const send = async () => {
        const r = await request(second, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'Priced' } } });
        assert.equal(r.status, 201, r.text);
        return r.body.price.amount as number;
      };
      const before = await send();
      const newPrice = before === 0.5 ? 0.25 : 0.5;
      const put = await request(first, 'PUT', '/admin/v1/prices', {
        key: first.adminKey,
        body: { items: [{ channelType: 'SMS', country: 'FR', amount: newPrice }] },
      });
      assert.equal(put.status, 200, put.text);
      const changedAt = Date.now();
      await eventually(async () => ((await send()) === newPrice ? true : undefined), 5_000, 'the new price charged on the other node');
      assert.ok(Date.now() - changedAt < 1_000, `charged after ${Date.now() - changedAt} ms`);
      const listed = await request(second, 'GET', '/admin/v1/prices', { key: second.adminKey });
      assert.ok(JSON.stringify(listed.body).includes(String(newPrice)), 'and listed there');
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
