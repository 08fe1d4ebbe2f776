// A node started while its PostgreSQL does not answer yet: it waits for it (a server restarting, a failover under
// way) instead of failing at once; errors that waiting cannot change end the start at once.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { whenDatabaseAnswers } from '../../src/app/database-at-start.ts';
import { StorageFailure } from '../../src/store/failures.ts';
import { freePort, startTernProcess } from '../support/process.ts';
import { freshDatabase, request } from '../support/server.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const quietLog = { warn: () => undefined };
/** A clock that moves only when slept on: what the waits add up to, whatever the machine's speed. */
function fakeClock() {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms: number) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('opening the database at start', () => {
  test('tries again while the database does not answer, then answers what it opened', async () => {
    let tries = 0;
    const warnings: unknown[] = [];
    const opened = await whenDatabaseAnswers(
      async () => {
        if (++tries < 4) throw refused();
        return 'store';
      },
      60_000,
      { warn: (o: unknown) => void warnings.push(o) },
      fakeClock(),
    );
    assert.equal(opened, 'store');
    assert.equal(tries, 4);
    assert.equal(warnings.length, 3, 'each failed try said in the log');
  });

  test('gives up past its wait with the failure of the database, one line to tell', async () => {
    const clock = fakeClock();
    await assert.rejects(
      whenDatabaseAnswers(() => Promise.reject(refused()), 10_000, quietLog, clock),
      (err: unknown) => err instanceof StorageFailure && err.kind === 'unavailable',
    );
    // 0.5, 1, 2 and 4 s (7.5 s): the next wait would end past the 10 s.
    assert.deepEqual(clock.waits, [500, 1_000, 2_000, 4_000]);
  });

  test('waits not at all at 0, nor for what waiting cannot change', async () => {
    let tries = 0;
    const count = async () => {
      tries++;
      throw refused();
    };
    await assert.rejects(whenDatabaseAnswers(count, 0, quietLog, fakeClock()), StorageFailure);
    assert.equal(tries, 1);
    for (const err of [new Error('password authentication failed for user "tern"'), new StorageFailure('full', 'the disk is full')]) {
      let n = 0;
      await assert.rejects(
        whenDatabaseAnswers(
          async () => {
            n++;
            throw err;
          },
          60_000,
          quietLog,
          fakeClock(),
        ),
        (e: unknown) => e === err || (e instanceof StorageFailure && e.kind === 'full'),
      );
      assert.equal(n, 1, err.message);
    }
  });
});

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('a node started before its PostgreSQL answers [postgres]', { skip }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test('waits, then serves once the database answers', async () => {
    const database = await freshDatabase('postgres');
    cleanups.push(() => database.cleanup());
    // The node is given the address of a proxy to PostgreSQL that does not listen yet: connections are refused.
    const proxyPort = await freePort();
    const viaProxy = new URL(database.url);
    const target = { host: viaProxy.hostname, port: Number(viaProxy.port || 5432) };
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxyPort);
    const port = await freePort();
    const starting = startTernProcess(viaProxy.toString(), port, { TERN_DB_START_WAIT_SECONDS: '60' }, 90_000);
    // A few tries refused, then the database "comes back".
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          proxy.close(() => resolve());
        }),
    );
    const tern = await starting;
    cleanups.push(() => tern.stop());
    assert.equal(tern.child.exitCode, null, 'the node kept running while it waited');
    const health = await request(tern, 'GET', '/readyz');
    assert.equal(health.status, 200);
  });
});
