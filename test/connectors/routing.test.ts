import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { uuidv7 } from '../../src/domain/ids.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

forEachDialect('connectors and routes as data', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 10 });
  });
  after(() => server.stop());

  const db = () => server.app.store.db;
  const now = Date.now();

  async function addConnector(name: string, kind: string): Promise<string> {
    const id = uuidv7();
    await db().insertInto('connectors').values({ id, name, kind, settings: '{}', source: 'API', enabled: 1, created_at: now, updated_at: now }).execute();
    return id;
  }

  async function addRoute(name: string, priority: number, match: object, connectors: string[], failover: string[] = []): Promise<string> {
    const id = uuidv7();
    await db()
      .insertInto('routes')
      .values({
        id,
        name,
        priority,
        match: JSON.stringify(match),
        connectors: JSON.stringify(connectors.map((connectorId) => ({ connectorId, weight: 1 }))),
        failover: JSON.stringify(failover),
        lookup_before_send: 0,
        strategy: 'weight',
        allow_loss: 0,
        max_attempts: 1,
        min_delivery_rate: null,
        source: 'API',
        enabled: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }

  /** Another node (or the admin API) changed the configuration: every node reloads it. */
  const changed = () => server.app.store.signals.fire('config');

  const send = async (to: string) => {
    const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 'routed' } } });
    assert.equal(r.status, 201, r.text);
    return r.body.messageId as string;
  };
  const message = (id: string) => db().selectFrom('messages').select(['status', 'status_detail', 'connector']).where('id', '=', id).executeTakeFirstOrThrow();

  test('a route made through the API is in force on its node when the answer comes', async (t) => {
    if (dialect !== 'postgres') return t.skip('SQLite reads the routes again in the same turn as the commit: no window to hold open');
    const admin = (method: string, path: string, body?: unknown) => request(server, method, path, { key: server.adminKey, body });
    // The reload after a change reads the rates too: held here, it cannot end until they are let go.
    const schema = new URL(server.app.config.databaseUrl).searchParams.get('schema');
    const holder = new pg.Client({ connectionString: server.app.config.databaseUrl.replace(/\?.*$/, '') });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`lock table ${schema}.connector_rates in access exclusive mode`);
      const made = admin('POST', '/admin/v1/routes', { name: 'at once', priority: 1, match: { prefix: '3361556' }, connectors: [{ connector: 'simulator' }] });
      // Answered while the reload waits, the change would not be in force yet: what routes/test says then is asked.
      const early = await Promise.race([made.then(() => admin('POST', '/admin/v1/routes/test', { to: '33615561234' })), sleep(1_000).then(() => null)]);
      await holder.query('commit');
      assert.equal((await made).status, 201);
      const tried = early ?? (await admin('POST', '/admin/v1/routes/test', { to: '33615561234' }));
      assert.equal(tried.body.route, 'at once', early ? `answered before the reload: ${tried.text}` : tried.text);
    } finally {
      await holder.end();
    }
  });

  test('the default data reproduces the embedded setup: the simulator for everything, its voice network for voice', async () => {
    const connectors = await db().selectFrom('connectors').select(['name', 'kind', 'source']).orderBy('name').execute();
    assert.deepEqual(connectors.slice(0, 2), [
      { name: 'simulator', kind: 'SIMULATOR', source: 'DEFAULT' },
      { name: 'simulator-voice', kind: 'SIMULATOR', source: 'DEFAULT' },
    ]);
    const id = await send('33612345678');
    // The receipt can be applied before the dispatcher's record of the placement commits (see below): both are waited for.
    const m = await eventually(async () => {
      const now = await message(id);
      return now.status === 'DELIVERED' && now.connector !== null ? now : undefined;
    });
    assert.equal(m.connector, 'simulator');
  });

  test('a route whose connectors are down fails over in order; with none up the message waits, and goes once one is', async () => {
    const simulator = (await db().selectFrom('connectors').select('id').where('name', '=', 'simulator').executeTakeFirstOrThrow()).id;
    // A connector of a kind this server has no factory for never comes up.
    const dead = await addConnector(`dead-${dialect}`, 'NO_SUCH_KIND');
    const spare = await addConnector(`spare-${dialect}`, 'SIMULATOR');
    await addRoute('uk via dead, then spare', 1, { prefix: '447911' }, [dead], [spare]);
    const waiting = await addRoute('fr test range via dead only', 1, { prefix: '3361999' }, [dead]);
    changed();
    const failedOver = await eventually(async () => {
      const id = await send('447911123456');
      const m = await eventually(async () => ((await message(id)).status === 'DELIVERED' ? message(id) : undefined));
      return m.connector === `spare-${dialect}` ? m : undefined;
    });
    assert.equal(failedOver.status, 'DELIVERED');

    const held = await send('33619990001');
    await new Promise((r) => setTimeout(r, 700));
    assert.deepEqual(await message(held), { status: 'ENROUTE', status_detail: null, connector: null }, 'waits in the queue, not failed');
    await db()
      .updateTable('routes')
      .set({ connectors: JSON.stringify([{ connectorId: simulator, weight: 1 }]) })
      .where('id', '=', waiting)
      .execute();
    changed();
    // 0001: the simulator reports UNDELIVERED; what matters is that it left the queue through the simulator. Its
    // receipt can be applied a moment before the dispatcher's record of the placement commits (two transactions, in
    // either order): both are waited for.
    const gone = await eventually(
      async () => {
        const m = await message(held);
        return m.status !== 'ENROUTE' && m.connector !== null ? m : undefined;
      },
      15_000,
      'the held message to go',
    );
    assert.deepEqual(gone, { status: 'UNDELIVERED', status_detail: null, connector: 'simulator' });
  });

  test('a message no route takes is refused (NOT_ROUTABLE) and refunded', async () => {
    await db().updateTable('routes').set({ enabled: 0 }).where('source', '=', 'DEFAULT').execute();
    changed();
    try {
      const id = await eventually(async () => {
        const sent = await send('33612345678');
        const m = await eventually(async () => ((await message(sent)).status !== 'ENROUTE' ? message(sent) : undefined));
        return m.status_detail === 'NOT_ROUTABLE' ? sent : undefined;
      });
      const m = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
      assert.deepEqual([m.body.status.value, m.body.status.detail, m.body.price.amount], ['UNDELIVERABLE', 'NOT_ROUTABLE', 0]);
    } finally {
      await db().updateTable('routes').set({ enabled: 1 }).where('source', '=', 'DEFAULT').execute();
      changed();
    }
  });

  test('connectors mount their own routes: the simulator takes MO under /connectors/{name}/mo with the operator key', async () => {
    const channel = await request(server, 'PATCH', `/admin/v1/channels/${t.channelId}`, { key: server.adminKey, body: { fromFieldList: ['36180'] } });
    assert.equal(channel.status, 200, channel.text);
    const body = { from: '33612345678', to: '36180', text: 'Hello through the connector route' };
    assert.equal((await request(server, 'POST', '/connectors/simulator/mo', { body })).status, 401);
    assert.equal((await request(server, 'POST', '/connectors/simulator/mo', { key: t.key, body })).status, 403);
    assert.equal((await request(server, 'POST', '/connectors/nobody/mo', { key: server.adminKey, body })).status, 404);
    const bad = await request(server, 'POST', '/connectors/simulator/mo', { key: server.adminKey, body: { from: '33612345678' } });
    assert.equal(bad.status, 400);
    const r = await request(server, 'POST', '/connectors/simulator/mo', { key: server.adminKey, body });
    assert.equal(r.status, 202, r.text);
    const mo = await eventually(async () =>
      db().selectFrom('messages').selectAll().where('direction', '=', 'MO').where('channel_id', '=', t.channelId).executeTakeFirst(),
    );
    assert.equal(JSON.parse(mo.body).text, 'Hello through the connector route');
    assert.equal(mo.connector, 'simulator');
  });
});
