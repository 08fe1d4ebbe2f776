import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connector, route, routedTo } from '../../support/connectors.ts';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { eventually } from '../../support/wait.ts';
import { live, SECRET_KEY, send, statuses } from './support.ts';

forEachDialect('failover between an SMPP operator and the next connector of its route', (dialect) => {
  let a: TestServer;
  let t: Tenant;
  before(async () => {
    a = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY });
    t = await createTenant(a, { balance: 100, channel: { fromFieldList: ['Tern'] } });
  });
  after(() => a.stop());

  test('the SMSC goes away: traffic moves to the failover at once, and comes back within a reconnect interval of its return', async () => {
    let smsc = await TestSmsc.start();
    const port = smsc.port;
    try {
      const id = await connector(a, {
        name: 'primary-smpp',
        type: 'SMPP',
        host: '127.0.0.1',
        port,
        systemId: 'tern',
        password: 'secret',
        reconnectMinSeconds: 1,
        reconnectMaxSeconds: 2,
      });
      await route(a, {
        name: 'with failover',
        priority: 1,
        match: { prefix: '33681' },
        connectors: [{ connector: 'primary-smpp' }],
        failover: [{ connector: 'simulator' }],
      });
      await routedTo(a, '33681000005', 'primary-smpp');
      const placed = async (to: string) => {
        const mid = await send(a, t, to, 'Which way');
        return eventually(async () => (await statuses(a, [mid]))[0]?.connector ?? undefined, 15_000, 'placed');
      };
      assert.equal(await placed('33681000005'), 'primary-smpp');

      await smsc.close();
      await eventually(async () => (await live(a, id)).state === 'DOWN', 10_000, 'DOWN');
      assert.equal(await placed('33681000006'), 'simulator');

      smsc = await TestSmsc.start({}, port);
      const back = Date.now();
      await routedTo(a, '33681000007', 'primary-smpp');
      assert.ok(Date.now() - back < 4_000, `back ${Date.now() - back} ms after the SMSC returned (reconnect interval 1–2 s)`);
      assert.equal(await placed('33681000007'), 'primary-smpp');
    } finally {
      await smsc.close();
    }
  });
});
