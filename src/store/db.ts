import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  SqliteDialect,
  sql,
  type UnknownRow,
} from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { levelOf, type MigrationTarget, migrateToLatest, readMigrationState, type SchemaLevel } from './migrator.ts';
import { Signals } from './signals.ts';
import { profiledStatement, profilePgClient } from './sql-profile.ts';
import { preparedName } from './batch-sql.ts';
import { PipelinedPostgresDialect, queryWithin } from './pg-driver.ts';
import { SqliteCheckpointer } from './sqlite-checkpoints.ts';
import { StorageFailure, storageFailureOf } from './failures.ts';
import { GuardedDialect } from './guarded-dialect.ts';
import { StoreHealth } from './health.ts';
import { describeBytes, diskSpace, isDiskFull, MIN_FREE_BYTES, probeWrite } from './sqlite-space.ts';

export type { Db, Dialect } from './schema.ts';
export type { SchemaLevel } from './migrator.ts';
import type { Db, Dialect } from './schema.ts';

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The raw better-sqlite3 handle when on SQLite (hot paths use prepared statements). */
  readonly sqlite: SQLite.Database | null;
  /** The PostgreSQL schema Tern's tables live in, when one is configured (`?schema=`). */
  readonly schema: string | null;
  /** Wake-ups of the workers that read the queues (in-process, and between nodes on PostgreSQL). */
  readonly signals: Signals;
  /** Statements run through `db` since the store was opened (BEGIN and COMMIT aside). */
  readonly statements: StatementCounter;
  /** The schema's migrations when the store was opened (after migrating): counted once, read by every /healthz. */
  readonly schemaLevel: SchemaLevel;
  /**
   * How the database is as this node sees it (up, down, or — SQLite — its disk full), told when it changes; the
   * failures that made it so are logged, at most once every 10 s.
   */
  readonly health: StoreHealth;
  /**
   * Whether the database answers now (SQLite with a full disk: whether a write succeeds again), within a short
   * timeout: never waits longer than that, whatever the database does.
   */
  ready(): Promise<{ ready: true } | { ready: false; reason: string }>;
  ping(): Promise<void>;
  /** PostgreSQL: starts hearing the other nodes' wake-ups. */
  listen?(): Promise<void>;
  /** SQLite: the disk was full when the store was opened (it serves reads; writes fail until there is room). */
  readonly startedFull: boolean;
  close(): Promise<void>;
}

// int8 and numeric come back as strings by default; every bigint Tern stores (ms timestamps, micro-euros) fits a
// double exactly, so numbers are returned on both dialects.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

const STATEMENT_CACHE_SIZE = 512;

/** Counts the statements Kysely runs (raw `sql` included), for the queries-per-message figures of a cluster. */
export class StatementCounter implements KyselyPlugin {
  count = 0;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count++;
    return args.result;
  }
}

/**
 * Kysely prepares every query anew; preparing is a measurable share of a write on SQLite. Statements are kept by
 * their SQL text (least recently used out) and reused: better-sqlite3 runs them synchronously, so one statement is
 * never used by two queries at once.
 */
function withStatementCache(handle: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    let stmt = cache.get(source);
    if (stmt) {
      cache.delete(source);
    } else {
      // A change of schema (the migrations) may change what a kept reader's columns are: its builder is made again.
      if (SCHEMA_CHANGE.test(source)) cache.clear();
      stmt = withRowBuilder(handle.prepare(source));
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, stmt);
    return profiledStatement(source, stmt);
  };
  return new Proxy(handle, {
    get(target, prop) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Statements that change the schema, after which the kept readers' columns may not be what they were. */
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

/**
 * A reader whose rows are read as arrays and made into objects by a function written for its columns: better-sqlite3
 * builds each row object a property at a time, which for a message's 38 columns took longer than SQLite took to find
 * the row (50 messages by id: 850 µs as objects, 400 µs as arrays made into objects this way). The rows are the
 * same plain objects, their properties in the columns' order (a name given twice keeps its last value, as before).
 */
function withRowBuilder(stmt: SQLite.Statement): SQLite.Statement {
  if (!stmt.reader) return stmt;
  const names = stmt.columns().map((c) => JSON.stringify(c.name));
  // oxlint-disable-next-line typescript/no-implied-eval -- built from the statement's own column names, quoted
  const build = new Function('r', `return {${names.map((n, i) => `${n}: r[${i}]`).join(', ')}};`) as (row: unknown[]) => unknown;
  stmt.raw(true);
  const all = stmt.all.bind(stmt) as (...params: unknown[]) => unknown[][];
  const get = stmt.get.bind(stmt) as (...params: unknown[]) => unknown[] | undefined;
  const iterate = stmt.iterate.bind(stmt) as (...params: unknown[]) => IterableIterator<unknown[]>;
  return Object.assign(Object.create(stmt) as SQLite.Statement, {
    all: (...params: unknown[]) => {
      const rows = all(...params);
      for (let i = 0; i < rows.length; i++) (rows as unknown[])[i] = build(rows[i]!);
      return rows;
    },
    get: (...params: unknown[]) => {
      const row = get(...params);
      return row === undefined ? undefined : build(row);
    },
    iterate: function* (...params: unknown[]) {
      for (const row of iterate(...params)) yield build(row);
    },
  });
}

export interface StoreOptions {
  /**
   * SQLite `synchronous`: NORMAL (WAL: a commit survives a crash of the process, and the last commits may be lost with
   * the machine's power) or FULL (an fsync per commit: survives a power loss too, at a cost per commit).
   */
  sqliteSynchronous?: 'NORMAL' | 'FULL';
  /** SQLite's page cache in MiB (default 16). */
  sqliteCacheMb?: number;
  /** false: open as it is, without applying migrations (`tern doctor`, `tern migrate` reading what is pending). */
  migrate?: boolean;
  /**
   * PostgreSQL: the longest a statement may run (the server's `statement_timeout`; the client gives up a little
   * later on a server that does not answer at all, and drops that connection). Default 10,000 ms; 0: no limit.
   */
  statementTimeoutMs?: number;
  /** PostgreSQL: the longest to wait for a connection, new or from the pool (default 5,000 ms). */
  connectTimeoutMs?: number;
  /** Told of the database's failures (rate-limited) and of what the store does about them. */
  log?: StoreLog;
}

/** A store just opened, with what its migrations need. */
interface Opened {
  store: Store & { schemaLevel: SchemaLevel };
  migration: MigrationTarget;
  /** Closes what the migrations alone used (PostgreSQL: their pool, without statement timeout). */
  closeMigration(): Promise<void>;
}

const NO_LEVEL: SchemaLevel = Object.freeze({ applied: 0, latest: null, pending: 0 });

/** Where the store says what happened to its database (pino's warn and info fit). */
export interface StoreLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long a readiness check may take: /readyz answers within it whatever the database does. */
const READY_TIMEOUT_MS = 2_000;
/** The client's own bound on a statement, past the server's statement_timeout (a server that does not answer at all). */
const CLIENT_TIMEOUT_MARGIN_MS = 2_000;

function warnOf(log: StoreLog | undefined, dialect: Dialect): (failure: StorageFailure, unreported: number) => void {
  return (failure, unreported) => {
    const cause = failure.cause as { code?: unknown; message?: unknown } | undefined;
    log?.warn(
      {
        dialect,
        kind: failure.kind,
        ...(typeof cause?.code === 'string' && { code: cause.code }),
        ...(unreported > 0 && { alsoFailedSinceLastReport: unreported }),
      },
      failure.kind === 'full' ? `database write failed, disk full: ${failure.message}` : `database failure: ${failure.message}`,
    );
  };
}

/** Opens the SQLite file with Tern's settings; `exclusive`: without the shared-memory index (see openSqlite). */
function openSqliteHandle(file: string, options: StoreOptions, exclusive: boolean): SQLite.Database {
  const handle = new SQLite(file);
  try {
    if (exclusive) handle.pragma('locking_mode = EXCLUSIVE');
    handle.pragma('journal_mode = WAL');
    handle.pragma(`synchronous = ${options.sqliteSynchronous === 'FULL' ? 'FULL' : 'NORMAL'}`);
    handle.pragma(`cache_size = -${Math.round((options.sqliteCacheMb ?? 16) * 1024)}`);
    // A statement waits this long for another connection's lock (the checkpointer's TRUNCATE, another process).
    handle.pragma('busy_timeout = 5000');
    handle.pragma('foreign_keys = ON');
    // The log is copied back by a thread of its own (SqliteCheckpointer), after which it starts over; a commit
    // checkpoints only if the log still reaches 16 MiB, by then almost all copied already. When the log starts over,
    // its file is cut back to 16 MiB, and the checkpointer truncates it to nothing once it is idle (see
    // sqlite-checkpoints.worker.mjs): the log stays within a few MiB of what writes need, never several times the
    // database's size on a disk that has room for little more.
    handle.pragma('wal_autocheckpoint = 4096');
    handle.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    // The first read opens the log and its index: on a full disk, where the index cannot be made, it fails here.
    handle.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    handle.close();
    throw err;
  }
  return handle;
}

/** The log file's size once it starts over (bytes). */
const JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024;

function openSqlite(path: string, nodeId: string, options: StoreOptions): Opened {
  const file = path === ':memory:' ? path : resolve(path);
  const dir = dirname(file);
  if (file !== ':memory:') mkdirSync(dir, { recursive: true });
  let handle: SQLite.Database;
  // A disk so full that SQLite cannot make the log's shared-memory index: opened in exclusive locking mode, where
  // the index is kept in memory, so the database can be read (and written once there is room); the checkpointer's
  // connection cannot share it then, so the writer checkpoints the log itself until Tern is restarted.
  let exclusive = false;
  try {
    handle = openSqliteHandle(file, options, false);
  } catch (err) {
    if (file === ':memory:' || !isDiskFull(err)) throw err;
    try {
      handle = openSqliteHandle(file, options, true);
    } catch (again) {
      if (!isDiskFull(again)) throw again;
      const free = diskSpace(dir);
      throw new StorageFailure(
        'full',
        `cannot open the database ${file}: the disk holding it is full${free === null ? '' : ` (${describeBytes(free)} free)`}; free some space and start again`,
        { cause: again },
      );
    }
    exclusive = true;
  }
  const opened = handle;
  const checkpointer = file === ':memory:' || exclusive ? null : new SqliteCheckpointer(file, { onError: (message) => checkpointWarning(message) });
  let lastCheckpointWarning = Number.NEGATIVE_INFINITY;
  const checkpointWarning = (message: string) => {
    // A full disk fails every checkpoint: said once a minute at most.
    if (Date.now() - lastCheckpointWarning < 60_000) return;
    lastCheckpointWarning = Date.now();
    options.log?.warn({ dialect: 'sqlite' }, `checkpointing the database's log failed: ${message}`);
  };
  const statements = new StatementCounter();
  const health = new StoreHealth({
    probeTimeoutMs: READY_TIMEOUT_MS,
    failFast: false,
    warn: warnOf(options.log, 'sqlite'),
    probe: async (_timeoutMs, write) => {
      if (!write) {
        opened.prepare('select 1').get();
        return;
      }
      const free = file === ':memory:' ? null : diskSpace(dir);
      if (free !== null && free < MIN_FREE_BYTES) throw new StorageFailure('full', `the disk holding the database has ${describeBytes(free)} free`);
      // A transaction under way holds the connection: the free space says enough then.
      if (opened.inTransaction) return;
      try {
        probeWrite(opened);
      } catch (err) {
        throw storageFailureOf(err) ?? err;
      }
    },
  });
  health.onChange((state) => {
    if (state === 'up') options.log?.info({ dialect: 'sqlite' }, 'the database can be written again');
  });
  const cached = withStatementCache(opened);
  const db = new Kysely<Database>({
    dialect: new GuardedDialect(new SqliteDialect({ database: cached }), health, { remoteCommit: false, beginImmediate: true }),
    plugins: [statements],
  });
  const startedFull = exclusive || diskFullAtStart(opened, file === ':memory:' ? null : dir);
  if (startedFull) {
    health.failed(new StorageFailure('full', `the disk holding ${file} is full`));
    const free = file === ':memory:' ? null : diskSpace(dir);
    options.log?.warn(
      { dialect: 'sqlite', file, ...(free !== null && { freeBytes: free }) },
      `the disk holding the database is full${free === null ? '' : ` (${describeBytes(free)} free)`}: serving reads, writes are refused (507) until space is freed`,
    );
  }
  const store = {
    db,
    dialect: 'sqlite' as const,
    sqlite: opened,
    schema: null,
    signals: new Signals('sqlite', 'tern', nodeId),
    statements,
    schemaLevel: NO_LEVEL,
    health,
    startedFull,
    ready: () => health.ready(),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      health.close();
      await checkpointer?.stop();
      await db.destroy();
    },
  };
  return { store, migration: { dialect: 'sqlite', db, file, handle: cached }, closeMigration: async () => undefined };
}

/** Whether the disk holding an open database has no room: too little free space, or a small write fails. */
function diskFullAtStart(handle: SQLite.Database, dir: string | null): boolean {
  const free = dir === null ? null : diskSpace(dir);
  if (free !== null && free < MIN_FREE_BYTES) return true;
  try {
    probeWrite(handle);
    return false;
  } catch (err) {
    if (isDiskFull(err)) return true;
    throw err;
  }
}

function openPostgres(url: string, nodeId: string, options: StoreOptions): Opened {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const poolSize = Number(u.searchParams.get('pool') ?? 10);
  u.searchParams.delete('pool');
  if (schema !== null && !/^[a-z_][a-z0-9_]*$/i.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  // The batch statements are kept prepared (usePreparedBatches), and planned again at every run: a plan kept from
  // when a table was nearly empty (a scan of it) would stay while the table grows, until its statistics change.
  // The URL's own `options` are kept, before Tern's (the driver would let them replace Tern's).
  const urlOptions = u.searchParams.get('options');
  u.searchParams.delete('options');
  const sessionOptions = [urlOptions, schema ? `-c search_path=${schema}` : null].filter(Boolean).join(' ');
  const connectionString = u.toString();
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const health = new StoreHealth({
    probeTimeoutMs: Math.min(READY_TIMEOUT_MS, connectTimeoutMs),
    warn: warnOf(options.log, 'postgres'),
    probe: (timeoutMs) => probePool(pool, timeoutMs),
  });
  health.onChange((state) => {
    if (state === 'down') options.log?.warn({ dialect: 'postgres' }, 'the database does not answer: requests that need it are refused (503) until it does');
    else if (state === 'up') options.log?.info({ dialect: 'postgres' }, 'the database answers again');
  });
  const pool = newPool(connectionString, nodeId, {
    max: poolSize,
    statementTimeoutMs,
    connectTimeoutMs,
    sessionOptions,
    onError: (err) => health.connectionLost(err),
  });
  const statements = new StatementCounter();
  const db = new Kysely<Database>({ dialect: new GuardedDialect(new PipelinedPostgresDialect(pool), health), plugins: [statements] });
  const signals = new Signals('postgres', `tern_wake${schema ? `_${schema.toLowerCase()}` : ''}`, nodeId);
  health.onChange((state) => {
    if (state === 'up') signals.databaseAnswers();
  });
  const store = {
    db,
    dialect: 'postgres' as const,
    sqlite: null,
    schema,
    signals,
    statements,
    schemaLevel: NO_LEVEL,
    health,
    startedFull: false,
    ready: () => health.ready(),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async listen() {
      await signals.listen(connectionString, sessionOptions || undefined, { connectTimeoutMs, onLost: (err) => health.connectionLost(err) });
    },
    async close() {
      health.close();
      await signals.close();
      await db.destroy();
    },
  };
  // Migrations may build indexes over large tables: no statement timeout for them, on a small pool of their own
  // (connecting lazily: a start with nothing to migrate opens none of it but the look at what is applied).
  const migrationPool = newPool(connectionString, nodeId, { max: 2, statementTimeoutMs: 0, connectTimeoutMs, sessionOptions, onError: () => undefined });
  const migrationDb = new Kysely<Database>({ dialect: new GuardedDialect(new PipelinedPostgresDialect(migrationPool), health) });
  return {
    store,
    migration: {
      dialect: 'postgres',
      db: introspectingOwnSchema(migrationDb, schema),
      schema,
      connect: () => new pg.Client({ connectionString, connectionTimeoutMillis: connectTimeoutMs, ...(sessionOptions && { options: sessionOptions }) }),
    },
    closeMigration: () => migrationDb.destroy(),
  };
}

interface PoolSettings {
  max: number;
  /** 0: none. */
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  sessionOptions: string;
  /** An error of a connection (idle in the pool, or in use): it is dropped and replaced, and this is told. */
  onError: (err: Error) => void;
}

/**
 * A pool of pipelined connections whose errors never go unheard (an `error` event nobody listens to ends the
 * process): a connection that fails is dropped by the pool and a new one made when needed. Every wait is bounded:
 * a connection is had within `connectTimeoutMs` (new, or from a full pool), a statement runs at most
 * `statement_timeout` on the server, and the client gives up on one a little later if the server does not answer
 * at all (a frozen server, a lost network), dropping its connection.
 */
function newPool(connectionString: string, nodeId: string, settings: PoolSettings): pg.Pool {
  const timeouts = settings.statementTimeoutMs > 0 ? `-c statement_timeout=${settings.statementTimeoutMs}` : '';
  const pool = new pg.Pool({
    connectionString,
    max: settings.max,
    // Queries go out without waiting for the one before (the driver sends the statements nobody reads so).
    pipeline: true,
    // The session settings of the URL come after Tern's timeout, so a URL that sets its own wins.
    options: `${timeouts} ${settings.sessionOptions} -c plan_cache_mode=force_custom_plan`.replace(/\s+/g, ' ').trim(),
    application_name: `tern ${nodeId}`,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    ...(settings.statementTimeoutMs > 0 && { query_timeout: settings.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS }),
    keepAlive: true,
  });
  pool.on('error', settings.onError);
  pool.on('connect', (client) => {
    client.on('error', settings.onError);
  });
  pool.on('connect', profilePgClient);
  pool.on('connect', usePreparedBatches);
  return pool;
}

/**
 * `select 1` on a connection of the pool within `timeoutMs` (the pool full of stuck connections fails it too). A
 * connection found lost (ended by the server while idle, not yet noticed by the pool) is dropped and the probe runs
 * again on another: a lost connection says nothing of the database.
 */
async function probePool(pool: pg.Pool, timeoutMs: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw storageFailureOf(err) ?? err;
    }
    try {
      await queryWithin(client, 'select 1', timeoutMs);
      client.release();
      return;
    } catch (err) {
      client.release(true);
      const failure = storageFailureOf(err);
      if (attempt < 3 && failure !== null && !failure.noAnswer) continue;
      throw failure ?? err;
    }
  }
}

/** A connection runs the pipeline's batch statements as named prepared statements (see batch-sql.ts). */
function usePreparedBatches(client: { query: (...args: any[]) => any }): void {
  const query = client.query.bind(client);
  client.query = (...args: any[]) => {
    const name = typeof args[0] === 'string' ? preparedName(args[0]) : undefined;
    return name === undefined ? query(...args) : query({ name, text: args[0] as string, values: args[1] as unknown[] });
  };
}

/** PostgreSQL's serialization failure and deadlock: the transaction did nothing and may simply run again. */
export function isRetryableTransactionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/**
 * Runs `work` in a transaction, again (up to 3 times) when PostgreSQL aborts it as a deadlock. Workers of the queues
 * it wrote to are woken once it commits.
 */
export async function inTransaction<T>(store: Store, work: (trx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let open: Db | null = null;
    try {
      const result = await store.db.transaction().execute((trx) => {
        open = trx;
        store.signals.begin(trx);
        return work(trx);
      });
      store.signals.commit(open!);
      return result;
    } catch (err) {
      if (open) store.signals.discard(open);
      if (attempt >= 3 || !isRetryableTransactionError(err)) throw err;
    }
  }
}

/**
 * Opens `sqlite:<path>` or `postgres://…[?schema=name&pool=n]` and brings its schema up to date.
 */
export async function openStore(databaseUrl: string, nodeId = `node-${process.pid}`, options: StoreOptions = {}): Promise<Store> {
  const { store, migration, closeMigration } = databaseUrl.startsWith('sqlite:')
    ? openSqlite(databaseUrl.slice('sqlite:'.length), nodeId, options)
    : openPostgres(databaseUrl, nodeId, options);
  try {
    try {
      if (options.migrate !== false) await migrate(store, migration);
    } finally {
      await closeMigration();
    }
    store.schemaLevel = levelOf(await readMigrationState(store.db, store.schema));
    await store.listen?.();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * Brings the schema up to date. On a full disk nothing can be written, not even the migrations' lock: a database that
 * needs no migration is served as it is (reads), one that needs some cannot start.
 */
async function migrate(store: Store, migration: MigrationTarget): Promise<void> {
  if (store.startedFull) {
    const { pending } = await readMigrationState(store.db, store.schema);
    if (pending.length === 0) return;
    throw new StorageFailure(
      'full',
      `the disk holding the database is full: the database needs ${pending.length} migration${pending.length === 1 ? '' : 's'} (${pending[0]}…), which cannot be written; free some space and start again`,
    );
  }
  await migrateToLatest(migration);
}

/**
 * The database as the migrator sees it on PostgreSQL: its introspection limited to Tern's own schema. Kysely's looks
 * for the migration tables by reading every table of every schema, calling functions on each, and failed when
 * another schema was dropped meanwhile ("relation … does not exist"): a node starting while another application,
 * or another Tern, dropped its schema in the same database.
 */
function introspectingOwnSchema(db: Kysely<Database>, schema: string | null): Kysely<Database> {
  const getTables = async () => {
    const res = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema ?? sql`current_schema()`} and c.relkind in ('r', 'p', 'v')`.execute(db);
    return res.rows.map((r) => ({ name: r.name, schema: r.schema, isView: r.kind === 'v', columns: [] }));
  };
  const introspection = {
    getSchemas: () => db.introspection.getSchemas(),
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
