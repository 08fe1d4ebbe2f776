// A node's LISTEN connection after the database came back (a failover): listening again at once when told the
// database answers, rather than at the end of the backoff its lost connection left (up to 10 s); and when it was back
// already, every signal acted on again (what was read while the database still failed).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { describe, test } from 'node:test';
import pg from 'pg';
import { Signals } from '../../src/store/signals.ts';
import { eventually, sleep } from '../support/wait.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;
const skip = PG_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

/** A TCP proxy to PostgreSQL that can drop every connection and refuse new ones (counting them) until it is up again. */
async function startProxy(target: URL) {
  const sockets = new Set<Socket>();
  let up = true;
  let refused = 0;
  const server: Server = createServer((client) => {
    if (!up) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    get refused() {
      return refused;
    },
    down() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    up() {
      up = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('listening again once the database answers [postgres]', { skip }, () => {
  test('told the database answers, a node that lost its listening connection listens at once (not at the end of its backoff), acts on every signal, and hears the other nodes', async () => {
    const target = new URL(PG_URL!);
    const proxy = await startProxy(target);
    const proxied = new URL(PG_URL!);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const channel = `tern_relisten_${randomBytes(4).toString('hex')}`;
    const nodeId = `relisten-${randomBytes(4).toString('hex')}`;
    const signals = new Signals('postgres', channel, nodeId);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const fired: string[] = [];
      signals.on('prices', () => fired.push('prices'));
      signals.on('dispatch', () => fired.push('dispatch'));
      await signals.listen(proxied.toString(), undefined, { connectTimeoutMs: 1_000 });
      assert.equal(signals.listening, true);

      proxy.down();
      await eventually(() => !signals.listening, 5_000, 'the listening connection lost');
      // Four attempts refused (250 ms, 500 ms, 1 s, 2 s apart, ±25 %): the next one is at least 3 s away.
      await eventually(() => proxy.refused >= 4, 10_000, 'four attempts to listen again');
      proxy.up();
      await sleep(300);
      assert.equal(signals.listening, false, 'left to its backoff, the node does not listen yet');

      const told = Date.now();
      signals.databaseAnswers();
      await eventually(() => signals.listening, 2_000, 'listening again once told the database answers');
      process.stdout.write(`# listening again ${Date.now() - told} ms after being told the database answers\n`);
      // Notifications sent meanwhile are lost: every signal is acted on, caches dropped and queues looked at.
      assert.ok(fired.includes('prices') && fired.includes('dispatch'), `every signal fired on listening again: ${fired.join(', ')}`);

      fired.length = 0;
      await admin.query('select pg_notify($1, $2)', [channel, 'prices:another-node']);
      await eventually(() => fired.includes('prices'), 5_000, "another node's notification heard");

      // Told again while listening: every signal acted on again, on the one connection that listens.
      fired.length = 0;
      signals.databaseAnswers();
      assert.deepEqual(fired.sort(), ['dispatch', 'prices'], 'every signal fired again');
      await sleep(200);
      const listeners = await admin.query('select count(*)::int as n from pg_stat_activity where application_name = $1', [`tern listener ${nodeId}`]);
      assert.equal(listeners.rows[0].n, 1, 'one listening connection');
    } finally {
      await signals.close();
      await admin.end();
      await proxy.close();
    }
  });
});

describe('listening again, without a database', () => {
  test('databaseAnswers does nothing before listen, after close, or on SQLite', async () => {
    const before = new Signals('postgres', 'tern_relisten_unused', 'n');
    const fired: string[] = [];
    before.on('prices', () => fired.push('prices'));
    before.databaseAnswers();
    assert.equal(before.listening, false);
    assert.deepEqual(fired, [], 'nothing to act on before listening');
    await before.close();
    before.databaseAnswers();
    assert.equal(before.listening, false);
    const sqlite = new Signals('sqlite', 'tern', 'n');
    sqlite.databaseAnswers();
    assert.equal(sqlite.listening, false);
  });
});
