import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  type KyselyPlugin,
  type Migration,
  Migrator,
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
import { migrations } from './migrations/index.ts';
import { Signals } from './signals.ts';
import { profiledStatement, profilePgClient } from './sql-profile.ts';
import { preparedName } from './batch-sql.ts';
import { PipelinedPostgresDialect } from './pg-driver.ts';
import { SqliteCheckpointer } from './sqlite-checkpoints.ts';

export type { Db, Dialect } from './schema.ts';
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
  ping(): Promise<void>;
  /** PostgreSQL: starts hearing the other nodes' wake-ups. */
  listen?(): Promise<void>;
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
}

function openSqlite(path: string, nodeId: string, options: StoreOptions): Store {
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const handle = new SQLite(file);
  handle.pragma('journal_mode = WAL');
  handle.pragma(`synchronous = ${options.sqliteSynchronous === 'FULL' ? 'FULL' : 'NORMAL'}`);
  handle.pragma(`cache_size = -${Math.round((options.sqliteCacheMb ?? 16) * 1024)}`);
  handle.pragma('busy_timeout = 5000');
  handle.pragma('foreign_keys = ON');
  // The log is copied back by a thread of its own (SqliteCheckpointer), after which it starts over; a commit
  // checkpoints only if the log still reaches 16 MiB, by then almost all copied already (kept at most 64 MiB on disk).
  handle.pragma('wal_autocheckpoint = 4096');
  handle.pragma('journal_size_limit = 67108864');
  const checkpointer = file === ':memory:' ? null : new SqliteCheckpointer(file);
  const statements = new StatementCounter();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(handle) }), plugins: [statements] });
  return {
    db,
    dialect: 'sqlite',
    sqlite: handle,
    schema: null,
    signals: new Signals('sqlite', 'tern', nodeId),
    statements,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

function openPostgres(url: string, nodeId: string): Store {
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
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // Queries go out without waiting for the one before (the driver sends the statements nobody reads so).
    pipeline: true,
    options: `${sessionOptions} -c plan_cache_mode=force_custom_plan`.trim(),
  });
  pool.on('connect', profilePgClient);
  pool.on('connect', usePreparedBatches);
  const statements = new StatementCounter();
  const db = new Kysely<Database>({ dialect: new PipelinedPostgresDialect(pool), plugins: [statements] });
  const signals = new Signals('postgres', `tern_wake${schema ? `_${schema.toLowerCase()}` : ''}`, nodeId);
  return {
    db,
    dialect: 'postgres',
    sqlite: null,
    schema,
    signals,
    statements,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async listen() {
      await signals.listen(connectionString, sessionOptions || undefined);
    },
    async close() {
      await signals.close();
      await db.destroy();
    },
  };
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
  const store = databaseUrl.startsWith('sqlite:')
    ? openSqlite(databaseUrl.slice('sqlite:'.length), nodeId, options)
    : openPostgres(databaseUrl, nodeId);
  try {
    if (options.migrate !== false) await migrate(store);
    await store.listen?.();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
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

async function migrate(store: Store): Promise<void> {
  if (store.schema) await sql`create schema if not exists ${sql.id(store.schema)}`.execute(store.db);
  const migrator = new Migrator({
    db: store.dialect === 'postgres' ? introspectingOwnSchema(store.db, store.schema) : store.db,
    // Without it the migrator finds its lock table in any schema of the database and skips creating its own.
    ...(store.schema ? { migrationTableSchema: store.schema } : {}),
    provider: {
      async getMigrations(): Promise<Record<string, Migration>> {
        return migrations;
      },
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}
