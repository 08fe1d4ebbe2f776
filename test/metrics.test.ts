// /metrics by Prometheus conventions (standard process and Node.js names, `_total` on counters only, base units), the
// counters of messages, webhook attempts and connector submits after real traffic, the queue backlogs, a node counting
// only what it did itself, and `promtool check metrics` reporting nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp, type TernApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config/index.ts';
import { createLogger } from '../src/log-redaction.ts';
import { promtoolCheckMetrics, type Scrape, scrape } from './support/metrics.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import {
  createTenant,
  forEachDialect,
  freshDatabase,
  request,
  startTestServer,
  TEST_ADMIN_KEY,
  TEST_SECRET_KEY,
  type Tenant,
  type TestServer,
  UNLIMITED,
} from './support/server.ts';
import { eventually, sleep } from './support/wait.ts';

async function send(server: TestServer, t: Tenant, to: string, extra: Record<string, unknown> = {}, path = '/sms/v1/messages'): Promise<string> {
  const body = path.startsWith('/rcs')
    ? { recipient: { to }, body: { type: 'TEXT', text: 'hello' }, ...extra }
    : { recipient: { to }, body: { text: 'hello' }, ...extra };
  const r = await request(server, 'POST', path, { key: t.key, body });
  assert.equal(r.status, 201, r.text);
  return r.body.messageId as string;
}

async function statusOf(server: TestServer, t: Tenant, id: string, path = '/sms/v1/messages'): Promise<string> {
  return (await request(server, 'GET', `${path}/${id}`, { key: t.key })).body.status.value as string;
}

forEachDialect('Metrics', (dialect) => {
  let server: TestServer;
  let hooks: Receiver;
  before(async () => {
    hooks = await startReceiver((r) => (r.url.startsWith('/gone') ? 410 : r.url.startsWith('/broken') ? 500 : r.url.startsWith('/slow') ? 'hang' : 200));
    server = await startTestServer(dialect, { TERN_WEBHOOK_RETRY_SCHEDULE: '1s' });
  });
  after(async () => {
    // The receiver first: the deliveries left hanging on it end at once instead of at their timeout.
    await hooks?.close();
    await server?.stop();
  });

  test('follow Prometheus conventions: standard process and Node.js names, _total on counters only, base units', async () => {
    const m = await scrape(server.url);
    for (const name of [
      'process_cpu_seconds_total',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds',
      'nodejs_version_info',
    ]) {
      assert.ok(m.types.has(name), `${name} is exposed`);
    }
    assert.equal(m.types.get('process_cpu_seconds_total'), 'counter');
    assert.equal(m.types.get('nodejs_gc_duration_seconds'), 'histogram');
    for (const [name, type] of m.types) {
      assert.ok(!/^tern_(process|nodejs)_/.test(name), `${name}: the default metrics keep their standard names`);
      if (type === 'counter') assert.match(name, /_total$/, `counter ${name} ends in _total`);
      else assert.doesNotMatch(name, /_total$/, `${type} ${name} does not end in _total`);
      assert.doesNotMatch(name, /_(ms|milliseconds|minutes|hours|kb|mb|kilobytes|megabytes)(_|$)/, `${name} is in base units`);
    }
    for (const name of [
      'tern_connector_submits_total',
      'tern_connector_errors_total',
      'tern_connector_receipts_total',
      'tern_connector_inbound_total',
      'tern_connector_unknown_outcomes_total',
      'tern_connector_repeats_recognised_total',
      'tern_messages_accepted_total',
      'tern_messages_final_total',
      'tern_webhook_deliveries_total',
    ]) {
      assert.equal(m.types.get(name), 'counter', name);
    }
    for (const name of ['tern_queue_depth', 'tern_queue_oldest_due_seconds', 'tern_db_up', 'tern_connector_up']) assert.equal(m.types.get(name), 'gauge', name);
    assert.equal(m.types.get('tern_message_time_to_final_seconds'), 'histogram');
    assert.equal(m.value('tern_db_up'), 1);
    // Series at 0 from the start, for rates and alerts.
    assert.ok(m.has('tern_messages_final_total', { type: 'VOICE', status: 'CANCELLED' }));
    assert.ok(m.has('tern_webhook_deliveries_total', { outcome: 'failed' }));
  });

  test('count messages accepted, and each at its first final status by channel type, once', async () => {
    const before = await scrape(server.url);
    const t = await createTenant(server, { balance: 1_000_000 });
    const broke = await createTenant(server, { balance: 0 });
    const rcs = await createTenant(server, { type: 'RCS', balance: 1_000_000 });
    const delivered = await send(server, t, '33612345678');
    const undelivered = await send(server, t, '33612340001');
    const rejected = await send(server, t, '33612340002');
    const noCredit = await send(server, broke, '33612345678');
    const scheduled = await send(server, t, '33612345678', { sentDate: new Date(Date.now() + 3_600_000).toISOString() });
    assert.equal((await request(server, 'DELETE', `/sms/v1/messages/${scheduled}`, { key: t.key })).status, 200);
    const read = await send(server, rcs, '33612345678', {}, '/rcs/v1/messages');
    for (const [id, status] of [
      [delivered, 'DELIVERED'],
      [undelivered, 'UNDELIVERED'],
      [rejected, 'UNDELIVERABLE'],
      [noCredit, 'UNDELIVERABLE'],
      [scheduled, 'CANCELLED'],
    ] as const) {
      const owner = id === noCredit ? broke : t;
      await eventually(async () => ((await statusOf(server, owner, id)) === status ? true : undefined), 20_000, `${id} ${status}`);
    }
    await eventually(async () => ((await statusOf(server, rcs, read, '/rcs/v1/messages')) === 'READ' ? true : undefined), 20_000, 'the RCS message READ');

    const now = await scrape(server.url);
    const delta = (name: string, labels: Record<string, string>) => now.value(name, labels) - before.value(name, labels);
    assert.equal(delta('tern_messages_accepted_total', { type: 'SMS' }), 5);
    assert.equal(delta('tern_messages_accepted_total', { type: 'RCS' }), 1);
    assert.equal(delta('tern_messages_final_total', { type: 'SMS', status: 'DELIVERED' }), 1);
    assert.equal(delta('tern_messages_final_total', { type: 'SMS', status: 'UNDELIVERED' }), 1);
    assert.equal(
      delta('tern_messages_final_total', { type: 'SMS', status: 'UNDELIVERABLE' }),
      2,
      'rejected at submit, and refused at accept for want of credit',
    );
    assert.equal(delta('tern_messages_final_total', { type: 'SMS', status: 'CANCELLED' }), 1);
    assert.equal(delta('tern_messages_final_total', { type: 'RCS', status: 'DELIVERED' }), 1);
    assert.equal(delta('tern_messages_final_total', { type: 'RCS', status: 'READ' }), 0, 'READ after DELIVERED is the same message: counted once');
    // Those settled after their accept (not the one refused at accept): DELIVERED, UNDELIVERED, UNDELIVERABLE at
    // submit, CANCELLED, and the RCS message.
    assert.equal(now.value('tern_message_time_to_final_seconds_count') - before.value('tern_message_time_to_final_seconds_count'), 5);
    assert.ok(delta('tern_connector_submits_total', { connector: 'simulator', outcome: 'accepted' }) >= 2);
    assert.ok(delta('tern_connector_submits_total', { connector: 'simulator', outcome: 'permanent_error' }) >= 1);
  });

  test('count webhook attempts by outcome: delivered, retried, failed for good, gone', async () => {
    const before = await scrape(server.url);
    const ok = await createTenant(server, { balance: 1_000_000, channel: { defaultCallbackUrlStatus: `${hooks.url}/ok` } });
    const gone = await createTenant(server, { balance: 1_000_000, channel: { defaultCallbackUrlStatus: `${hooks.url}/gone` } });
    const broken = await createTenant(server, { balance: 1_000_000, channel: { defaultCallbackUrlStatus: `${hooks.url}/broken` } });
    await send(server, ok, '33612345678');
    await send(server, gone, '33612345678');
    await send(server, broken, '33612345678');
    const delta = async (outcome: string) =>
      (await scrape(server.url)).value('tern_webhook_deliveries_total', { outcome }) - before.value('tern_webhook_deliveries_total', { outcome });
    // The broken receiver: each delivery tried twice (the schedule has one retry), then failed for good.
    await eventually(async () => ((await delta('failed')) >= 1 ? true : undefined), 30_000, 'a delivery failed for good');
    assert.ok((await delta('delivered')) >= 1);
    assert.ok((await delta('gone')) >= 1);
    assert.ok((await delta('retry')) >= 1);
    assert.equal(await delta('refused'), 0);
  });

  test("gauge the queues' backlog: scheduled messages wait without being due, a stuck delivery is due and ages", async () => {
    const t = await createTenant(server, { balance: 1_000_000, channel: { defaultCallbackUrlStatus: `${hooks.url}/slow` } });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await sleep(600);
    const before = await scrape(server.url);
    for (let i = 0; i < 3; i++) await send(server, t, '33612345678', { sentDate: later });
    // The backlog is read once for the gauges of a scrape, and again by a scrape more than half a second later.
    await sleep(600);
    const scheduled = await scrape(server.url);
    assert.equal(scheduled.value('tern_queue_depth', { queue: 'dispatch' }) - before.value('tern_queue_depth', { queue: 'dispatch' }), 3);
    for (const queue of ['dispatch', 'webhooks', 'smpp_outbox', 'connector_records', 'unmatched_receipts'])
      assert.ok(scheduled.has('tern_queue_oldest_due_seconds', { queue }), queue);

    // A status webhook to a receiver that never answers: its delivery stays pending, due, and older at each scrape.
    await send(server, t, '33612345678');
    await eventually(() => (hooks.hanging > 0 ? true : undefined), 20_000, 'the webhook on the wire');
    const first = await eventually(
      async () => {
        const m = await scrape(server.url);
        return m.value('tern_queue_depth', { queue: 'webhooks' }) >= 1 && m.value('tern_queue_oldest_due_seconds', { queue: 'webhooks' }) > 0 ? m : undefined;
      },
      10_000,
      'a pending webhook delivery',
    );
    await sleep(1_100);
    const later2 = await scrape(server.url);
    assert.ok(
      later2.value('tern_queue_oldest_due_seconds', { queue: 'webhooks' }) >= first.value('tern_queue_oldest_due_seconds', { queue: 'webhooks' }) + 1,
      'its age grows',
    );
  });

  test('promtool check metrics reports nothing on a scrape after traffic', async (t) => {
    const m = await scrape(server.url);
    assert.ok(m.value('tern_messages_accepted_total') > 0, 'traffic went through first');
    const checked = promtoolCheckMetrics(m.text);
    if (checked === null) {
      t.skip('promtool is not installed (Debian package prometheus; scripts/setup-system.sh installs it)');
      return;
    }
    assert.equal(checked.output, '', checked.output);
    assert.equal(checked.status, 0);
  });
});

forEachDialect('Metrics of a node', (dialect) => {
  if (dialect === 'sqlite') {
    test('count what the node did, not what another node sharing its database did', { skip: 'nodes share a PostgreSQL database only' }, () => {});
    return;
  }
  const nodes: TernApp[] = [];
  const urls: string[] = [];
  let database: { url: string; cleanup(): Promise<void> };
  before(async () => {
    database = await freshDatabase('postgres');
    for (const id of ['metrics-a', 'metrics-b']) {
      const config = loadConfig({
        TERN_HTTP_HOST: '127.0.0.1',
        TERN_HTTP_PORT: '0',
        TERN_SMPP_HOST: '127.0.0.1',
        TERN_SMPP_PORT: '0',
        TERN_DATABASE_URL: database.url,
        TERN_ADMIN_KEY: TEST_ADMIN_KEY,
        TERN_SECRET_KEY: TEST_SECRET_KEY,
        TERN_RATE_LIMITS: UNLIMITED,
        TERN_NODE_ID: id,
        TERN_SIMULATOR_RECEIPT_LATENCY_MS: '5',
      });
      const app = await createApp(config, { logger: createLogger('silent') });
      nodes.push(app);
      urls.push(`http://127.0.0.1:${(await app.start()).httpPort}`);
    }
  });
  after(async () => {
    for (const app of nodes) await app.stop();
    await database?.cleanup();
  });

  test('count what the node did, not what another node sharing its database did', async () => {
    const [a, b] = urls.map((url) => ({ url, adminKey: TEST_ADMIN_KEY })) as [TestServer, TestServer];
    const t = await createTenant(a, { balance: 1_000_000 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await send(a, t, '33612345678'));
    for (const id of ids) await eventually(async () => ((await statusOf(b, t, id)) === 'DELIVERED' ? true : undefined), 20_000, `${id} DELIVERED`);
    const [onA, onB] = [await scrape(a.url), await scrape(b.url)];
    assert.equal(onA.value('tern_messages_accepted_total', { type: 'SMS' }), 4);
    assert.equal(onB.value('tern_messages_accepted_total', { type: 'SMS' }), 0, 'B accepted none of them');
    // Each reached DELIVERED once, on whichever node applied its receipt: the nodes' counts add up to the messages.
    const final = (m: Scrape) => m.value('tern_messages_final_total', { type: 'SMS', status: 'DELIVERED' });
    await eventually(async () => (final(await scrape(a.url)) + final(await scrape(b.url)) === 4 ? true : undefined), 10_000, 'four DELIVERED over both nodes');
    // The queues are the cluster's: both nodes see the same backlog.
    assert.equal(onA.value('tern_queue_depth', { queue: 'dispatch' }), onB.value('tern_queue_depth', { queue: 'dispatch' }));
  });
});
