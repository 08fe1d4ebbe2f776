// Failures of the database itself: how the store tells them, how its health follows them, how each door answers
// them, and what becomes of a send whose commit was lost with its connection.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DatabaseConnection, type Dialect, type Driver, Kysely, sql, type TransactionSettings } from 'kysely';
import pg from 'pg';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { asCoreError, StorageError } from '../../src/core/errors.ts';
import { EventConsumers } from '../../src/core/events.ts';
import { GroupCommitter } from '../../src/core/group-commit.ts';
import { MessagingService } from '../../src/core/messaging/service.ts';
import { SmsService } from '../../src/core/sms/service.ts';
import { legacyFailureOf } from '../../src/doors/legacy/errors.ts';
import { toErrorReply } from '../../src/doors/rest/errors.ts';
import { submitErrorStatus } from '../../src/doors/smpp/errors.ts';
import { SmppStatus } from '../../src/protocols/smpp/pdu.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { StorageFailure, storageFailureOf } from '../../src/store/failures.ts';
import { GuardedDialect } from '../../src/store/guarded-dialect.ts';
import { StoreHealth } from '../../src/store/health.ts';
import { PipelinedPostgresDialect } from '../../src/store/pg-driver.ts';
import { createTenant, freshDatabase, startTestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;
const pgSkip = PG_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('storage failures: which driver errors are failures of the database', () => {
  test('PostgreSQL: lost, refused, shut down, cancelled by a timeout → unavailable; a full disk → full; statement errors stay as they are', () => {
    for (const code of ['57P01', '57P02', '57P03', '57014', '08006', '08001', '53300', '25006', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) {
      const f = storageFailureOf(coded(code));
      assert.equal(f?.kind, 'unavailable', code);
      assert.equal(f?.noAnswer, false, code);
      assert.equal((f?.cause as { code: string } | undefined)?.code, code, 'the original error is kept as the cause');
    }
    assert.equal(storageFailureOf(coded('53100'))?.kind, 'full');
    for (const code of ['23505', '23503', '40001', '40P01', '42P01', '22P02']) assert.equal(storageFailureOf(coded(code)), null, code);
    assert.equal(storageFailureOf(new Error('Connection terminated unexpectedly'))?.kind, 'unavailable');
    assert.equal(storageFailureOf(new Error('Client has encountered a connection error and is not queryable'))?.kind, 'unavailable');
    for (const message of ['Query read timeout', 'timeout exceeded when trying to connect', 'Connection terminated due to connection timeout']) {
      const f = storageFailureOf(new Error(message));
      assert.equal(f?.kind, 'unavailable', message);
      assert.equal(f?.noAnswer, true, `${message}: the database did not answer at all`);
    }
    assert.equal(storageFailureOf(new Error('relation "x" does not exist')), null);
  });

  test('SQLite: a full disk or a failed write → full; locked past busy_timeout → unavailable; read-only is not a failure of the disk', () => {
    for (const code of ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_SHMSIZE'])
      assert.equal(storageFailureOf(coded(code))?.kind, 'full', code);
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_CANTOPEN']) assert.equal(storageFailureOf(coded(code))?.kind, 'unavailable', code);
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH']) assert.equal(storageFailureOf(coded(code)), null, code);
    assert.equal(storageFailureOf(coded('SQLITE_READONLY')), null, 'a database made read-only on purpose is not a full disk');
  });

  test('what is not an Error is not a failure of the database; a StorageFailure is itself', () => {
    for (const v of [null, undefined, 'SQLITE_FULL', 42, { code: '57P01' }]) assert.equal(storageFailureOf(v), null);
    const f = new StorageFailure('full', 'x');
    assert.equal(storageFailureOf(f), f);
  });
});

describe('each door answers a failure of the database in its own format', () => {
  const unavailable = new StorageFailure('unavailable', 'the database is unavailable: gone');
  const full = new StorageFailure('full', 'the database cannot write');

  test('core: STORAGE_UNAVAILABLE (retry after 5 s) and STORAGE_FULL (after 30 s); other errors are not core errors', () => {
    const a = asCoreError(unavailable);
    assert.ok(a instanceof StorageError);
    assert.equal(a.kind, 'STORAGE_UNAVAILABLE');
    assert.equal(a.retryAfterSeconds, 5);
    assert.equal(a.cause, unavailable);
    const b = asCoreError(full);
    assert.ok(b instanceof StorageError);
    assert.equal(b.kind, 'STORAGE_FULL');
    assert.equal(b.retryAfterSeconds, 30);
    assert.equal(asCoreError(new Error('boom')), null);
  });

  test('core: a failure under a COMMIT sent to the server says the change may have been made; any other, that nothing was', () => {
    assert.match(asCoreError(unavailable)!.message, /nothing was done/);
    const underCommit = asCoreError(unavailable.duringCommit())!;
    assert.equal(underCommit.kind, 'STORAGE_UNAVAILABLE');
    assert.match(underCommit.message, /may or may not have been made/);
    assert.doesNotMatch(underCommit.message, /nothing was done/);
  });

  test('REST: 503 503.002 and 507 507.001 in the smsmode error body, never an internal error', () => {
    const req = { headers: {} } as never;
    const a = toErrorReply(unavailable, req);
    assert.equal(a.status, 503);
    assert.deepEqual(Object.keys(a.body).sort(), ['detail', 'errorCode', 'message']);
    assert.equal(a.body.errorCode, '503.002');
    assert.equal(a.body.message, 'Storage unavailable');
    const b = toErrorReply(full, req);
    assert.equal(b.status, 507);
    assert.equal(b.body.errorCode, '507.001');
    assert.equal(b.body.message, 'Insufficient storage');
    assert.match(b.body.detail, /full/);
    assert.equal(toErrorReply(new Error('boom'), req).status, 500);
  });

  test('legacy HTTP: `50 | Temporarily unavailable: …` with HTTP 503 or 507', () => {
    const a = legacyFailureOf(unavailable);
    assert.equal(a.code, 50);
    assert.equal(a.httpStatus, 503);
    assert.match(a.line, /^50 \| Temporarily unavailable: the database is unavailable/);
    const b = legacyFailureOf(full);
    assert.equal(b.code, 50);
    assert.equal(b.httpStatus, 507);
    assert.equal(legacyFailureOf(new Error('boom')).code, 31);
  });

  test('SMPP: ESME_RSYSERR', () => {
    assert.equal(submitErrorStatus('STORAGE_UNAVAILABLE'), SmppStatus.ESME_RSYSERR);
    assert.equal(submitErrorStatus('STORAGE_FULL'), SmppStatus.ESME_RSYSERR);
  });
});

describe('the database settings', () => {
  test('statement timeout 10 s and connect timeout 5 s by default; read, bounded, and refused when out of range naming the setting', () => {
    const d = loadConfig({});
    assert.equal(d.dbStatementTimeoutMs, 10_000);
    assert.equal(d.dbConnectTimeoutMs, 5_000);
    const c = loadConfig({ TERN_DB_STATEMENT_TIMEOUT_MS: '30000', TERN_DB_CONNECT_TIMEOUT_MS: '1500' });
    assert.equal(c.dbStatementTimeoutMs, 30_000);
    assert.equal(c.dbConnectTimeoutMs, 1_500);
    assert.equal(loadConfig({ TERN_DB_STATEMENT_TIMEOUT_MS: '0' }).dbStatementTimeoutMs, 0, '0: no limit');
    for (const [setting, value] of [
      ['TERN_DB_STATEMENT_TIMEOUT_MS', '50'],
      ['TERN_DB_STATEMENT_TIMEOUT_MS', '-1'],
      ['TERN_DB_STATEMENT_TIMEOUT_MS', '10s'],
      ['TERN_DB_STATEMENT_TIMEOUT_MS', '99999999'],
      ['TERN_DB_CONNECT_TIMEOUT_MS', '0'],
      ['TERN_DB_CONNECT_TIMEOUT_MS', '1e4'],
      ['TERN_DB_CONNECT_TIMEOUT_MS', ''.padEnd(3, ' ')],
    ] as const) {
      assert.throws(
        () => loadConfig({ [setting]: value }),
        (err: unknown) => err instanceof ConfigError && err.setting === setting,
        `${setting}=${JSON.stringify(value)}`,
      );
    }
  });
});

describe('the store health', () => {
  const failure = (noAnswer = false) => new StorageFailure('unavailable', 'the database is unavailable: x', { noAnswer });

  test('a lost connection starts a probe; a database that answers it stays up', async () => {
    let probes = 0;
    const health = new StoreHealth({ probeTimeoutMs: 100, probe: async () => void probes++ });
    health.failed(failure());
    await health.check();
    assert.equal(health.state, 'up');
    assert.equal(probes, 1);
    health.admit();
    health.close();
  });

  test('no answer in time: down at once, work refused at once; up again only after two probes in a row, listeners told', async () => {
    let answers = false;
    const states: string[] = [];
    const health = new StoreHealth({
      probeTimeoutMs: 100,
      reprobeMs: 20,
      probe: async () => {
        if (!answers) throw new Error('no');
      },
    });
    health.onChange((s) => states.push(s));
    health.failed(failure(true));
    assert.equal(health.state, 'down');
    const started = Date.now();
    assert.throws(
      () => health.admit(),
      (err: unknown) => err instanceof StorageFailure && err.kind === 'unavailable',
    );
    assert.ok(Date.now() - started < 20);
    const r = await health.ready();
    assert.equal(r.ready, false);
    answers = true;
    assert.equal(await health.check(), false, 'one probe is not enough');
    await eventually(() => health.state === 'up', 2_000, 'up after the probes');
    assert.deepEqual(states, ['down', 'up']);
    assert.deepEqual(await health.ready(), { ready: true });
    health.close();
  });

  test('a probe that hangs is bounded by its timeout', async () => {
    const health = new StoreHealth({ probeTimeoutMs: 100, probe: () => new Promise(() => undefined) });
    const started = Date.now();
    const r = await health.ready();
    assert.equal(r.ready, false);
    assert.ok(Date.now() - started < 1_000, `answered in ${Date.now() - started} ms`);
    assert.match((r as { reason: string }).reason, /did not answer within 100 ms/);
    health.close();
  });

  test('a full disk: not ready until a write probe succeeds', async () => {
    let room = false;
    const writes: boolean[] = [];
    const health = new StoreHealth({
      probeTimeoutMs: 100,
      failFast: false,
      probe: async (_ms, write) => {
        writes.push(write);
        if (write && !room) throw new StorageFailure('full', 'no room');
      },
    });
    health.failed(new StorageFailure('full', 'disk full'));
    assert.equal(health.state, 'full');
    health.admit(); // reads go on
    const r = await health.ready();
    assert.equal(r.ready, false);
    assert.match((r as { reason: string }).reason, /full/);
    room = true;
    assert.deepEqual(await health.ready(), { ready: true });
    assert.deepEqual(writes, [true, true]);
    health.close();
  });

  test('a flood of failures is logged once per period, with the count of those not told', async () => {
    const told: number[] = [];
    const health = new StoreHealth({ probeTimeoutMs: 100, logEveryMs: 200, probe: async () => undefined, warn: (_f, unreported) => told.push(unreported) });
    for (let i = 0; i < 50; i++) health.failed(failure());
    assert.deepEqual(told, [0]);
    await sleep(250);
    health.failed(failure());
    assert.deepEqual(told, [0, 49]);
    health.close();
  });
});

describe('group commit and the database failing', () => {
  test('a failure of the database fails the whole batch at once (no halves flushed again); another error still fails alone', async () => {
    let flushes = 0;
    const down = new GroupCommitter<number, number>(async () => {
      flushes++;
      throw new StorageFailure('unavailable', 'gone');
    });
    const results = await Promise.allSettled([1, 2, 3, 4, 5, 6, 7, 8].map((n) => down.submit(n)));
    assert.ok(results.every((r) => r.status === 'rejected' && r.reason instanceof StorageFailure));
    assert.equal(flushes, 1);
    const picky = new GroupCommitter<number, number>(async (items) => {
      if (items.includes(3)) throw new Error('bad item');
      return items;
    });
    const mixed = await Promise.allSettled([1, 2, 3, 4].map((n) => picky.submit(n)));
    assert.deepEqual(
      mixed.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
  });
});

/**
 * PostgreSQL through a driver whose first `commits` commits fail as if the connection were lost: `after`, once the
 * commit went through (its answer lost); `before`, rolled back.
 */
class LostCommitDialect extends PipelinedPostgresDialect {
  failures = 0;
  constructor(
    pool: pg.Pool,
    private readonly mode: 'after' | 'before',
    private commits: number,
  ) {
    super(pool);
  }

  override createDriver(): Driver {
    const inner = super.createDriver();
    return new Proxy(inner, {
      get: (target, prop) => {
        if (prop === 'commitTransaction') {
          return async (c: DatabaseConnection) => {
            if (this.commits <= 0) return target.commitTransaction(c);
            this.commits--;
            this.failures++;
            if (this.mode === 'after') await target.commitTransaction(c);
            else await target.rollbackTransaction(c);
            throw Object.assign(new Error('Connection terminated unexpectedly'), {});
          };
        }
        if (prop === 'beginTransaction') return (c: DatabaseConnection, s: TransactionSettings) => target.beginTransaction(c, s);
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}

describe('a send whose commit was lost with its connection [postgres]', { skip: pgSkip }, () => {
  /** A messaging service over the test server's database whose commits fail as `dialect` says. */
  async function withLostCommits(
    mode: 'after' | 'before',
    commits: number,
    run: (m: MessagingService, store: Store, send: () => Promise<string>) => Promise<void>,
  ): Promise<void> {
    const server = await startTestServer('postgres');
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2, options: `-c search_path=${server.app.store.schema}` });
    try {
      const tenant = await createTenant(server, { balance: 100 });
      const base = server.app.store;
      const dialect: Dialect = new LostCommitDialect(pool, mode, commits);
      const store: Store = { ...base, db: new Kysely({ dialect: new GuardedDialect(dialect, base.health) }) };
      const messaging = new MessagingService(store, server.app.services.tenancy, { messageValiditySeconds: 3_600 }, new EventConsumers());
      await messaging.init();
      const channel = await server.app.services.tenancy.getChannel(tenant.channelId);
      const send = async () => (await new SmsService(messaging).send(channel, { to: '33612345675', text: 'lost commit', source: 'REST' })).id;
      await run(messaging, base, send);
      await store.db.destroy();
    } finally {
      await server.stop();
    }
  }

  const count = async (store: Store, id: string) =>
    Number(
      (
        await store.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('committed, its answer lost: found by its id and answered as accepted, stored once', async () => {
    await withLostCommits('after', 1, async (_m, store, send) => {
      const id = await send();
      assert.equal(await count(store, id), 1);
      const charged = await store.db.selectFrom('ledger').select('id').where('message_id', '=', id).execute();
      assert.equal(charged.length, 1, 'charged once');
    });
  });

  test('not committed: run again under the same id on another connection, stored once', async () => {
    await withLostCommits('before', 1, async (_m, store, send) => {
      const id = await send();
      assert.equal(await count(store, id), 1);
    });
  });

  test('never committed: refused as unavailable, nothing stored', async () => {
    await withLostCommits('before', 100, async (_m, store, send) => {
      const before = Number(
        (
          await store.db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      // Each try failed under its COMMIT: the answer cannot say nothing was done.
      await assert.rejects(send(), (err: unknown) => err instanceof StorageFailure && err.kind === 'unavailable' && err.outcomeUnknown);
      const after = Number(
        (
          await store.db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      assert.equal(after, before);
    });
  });
});

describe('a PostgreSQL store when its connections fail [postgres]', { skip: pgSkip }, () => {
  test('ended connections (idle and in use) never reach the process as an unhandled error; the store answers on new ones', async () => {
    const database = await freshDatabase('postgres');
    const nodeId = `failures-${process.pid}-${Date.now()}`;
    const store = await openStore(database.url, nodeId, { statementTimeoutMs: 5_000, connectTimeoutMs: 2_000 });
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await Promise.all([1, 2, 3].map(() => store.db.selectFrom('settings').selectAll().execute()));
      const busy = sql`select pg_sleep(3)`.execute(store.db);
      await sleep(200);
      const ended = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name in ($1, $2)`, [
        `tern ${nodeId}`,
        `tern listener ${nodeId}`,
      ]);
      assert.ok(ended.rowCount! >= 2);
      await assert.rejects(busy, (err: unknown) => err instanceof StorageFailure && err.kind === 'unavailable');
      await sleep(300);
      await eventually(async () => (await store.ready()).ready, 10_000, 'ready again');
      // An idle connection ended a moment before may still be handed out once, before the pool has read its end.
      await eventually(
        () =>
          store.db
            .selectFrom('settings')
            .selectAll()
            .execute()
            .then(
              () => true,
              () => undefined,
            ),
        10_000,
        'a statement answered on a new connection',
      );
      await eventually(() => store.signals.listening, 10_000, 'listening again');
    } finally {
      await admin.end();
      await store.close();
      await database.cleanup();
    }
  });

  test('a statement past the statement timeout fails as unavailable within the timeout; a pool with no free connection within the connect timeout', async () => {
    const database = await freshDatabase('postgres');
    const u = new URL(database.url);
    u.searchParams.set('pool', '1');
    const store = await openStore(u.toString(), `timeouts-${process.pid}`, { statementTimeoutMs: 300, connectTimeoutMs: 300 });
    try {
      let started = Date.now();
      await assert.rejects(sql`select pg_sleep(5)`.execute(store.db), (err: unknown) => err instanceof StorageFailure && /statement timeout/.test(err.message));
      assert.ok(Date.now() - started < 2_000, `cancelled after ${Date.now() - started} ms`);
      // The one connection held by a transaction: another statement gets none within the connect timeout.
      let release!: () => void;
      const held = store.db.transaction().execute(async (trx) => {
        await trx.selectFrom('settings').selectAll().execute();
        await new Promise<void>((r) => (release = r));
      });
      await sleep(50);
      started = Date.now();
      await assert.rejects(store.db.selectFrom('settings').selectAll().execute(), (err: unknown) => err instanceof StorageFailure && err.noAnswer);
      assert.ok(Date.now() - started < 2_000);
      assert.equal(store.health.state, 'down', 'no connection in time: the store is down');
      started = Date.now();
      await assert.rejects(store.db.selectFrom('settings').selectAll().execute(), StorageFailure);
      assert.ok(Date.now() - started < 50, 'refused at once while down');
      release();
      await held;
      await eventually(() => store.health.state === 'up', 10_000, 'up again');
    } finally {
      await store.close();
      await database.cleanup();
    }
  });
});
