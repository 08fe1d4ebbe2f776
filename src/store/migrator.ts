import { createHash } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type DialectAdapter, type Driver, Kysely, SqliteAdapter, SqliteDialect, SqliteDriver, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import type pg from 'pg';
import { compareVersions, VERSION } from '../version.ts';
import { breakingMigrations, migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';

/** A migration the database has, with when it was applied (as Kysely's migrator recorded it, ISO 8601). */
export interface AppliedMigration {
  name: string;
  appliedAt: string;
}

export interface MigrationState {
  /** Applied migrations, in name order. */
  applied: AppliedMigration[];
  /** Migrations of this version not applied yet, in the order they would be. */
  pending: string[];
  /** Applied migrations this version does not know: a newer Tern migrated the database. */
  unknown: string[];
}

/** Where the schema stands, computed when a store is opened (after migrating) and answered by /healthz. */
export interface SchemaLevel {
  applied: number;
  /** The newest applied migration (null: none). */
  latest: string | null;
  pending: number;
}

/** The setting a breaking migration raises to the major version that brought it (see `breakingMigrations`). */
export const COMPATIBLE_FROM = 'schema.compatibleFrom';

/** What the migrator needs of a freshly opened store. */
export type MigrationTarget =
  | { dialect: 'sqlite'; db: Kysely<Database>; file: string; handle: SQLite.Database }
  | {
      dialect: 'postgres';
      /** `introspectingOwnSchema` of the store's db. */
      db: Kysely<Database>;
      schema: string | null;
      /** A connection of its own, outside the pool, with the store's session settings (search_path). */
      connect(): pg.Client;
    };

function missingTable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === '42P01' || (typeof e?.message === 'string' && /no such table/.test(e.message));
}

/** The migrations the database has, and those this version would still apply (nothing is created or changed). */
export async function readMigrationState(db: Kysely<any>, schema: string | null): Promise<MigrationState> {
  const table = schema ? sql`${sql.id(schema)}.kysely_migration` : sql`kysely_migration`;
  let applied: AppliedMigration[] = [];
  try {
    const rows = await sql<{ name: string; timestamp: string }>`select name, timestamp from ${table} order by name`.execute(db);
    applied = rows.rows.map((r) => ({ name: r.name, appliedAt: r.timestamp }));
  } catch (err) {
    if (!missingTable(err)) throw err;
  }
  const done = new Set(applied.map((m) => m.name));
  return {
    applied,
    pending: Object.keys(migrations).filter((m) => !done.has(m)),
    unknown: applied.map((m) => m.name).filter((m) => !(m in migrations)),
  };
}

export function levelOf(state: MigrationState): SchemaLevel {
  return { applied: state.applied.length, latest: state.applied.at(-1)?.name ?? null, pending: state.pending.length };
}

/** The oldest version of Tern the schema still serves, when a breaking migration said so. */
async function compatibleFrom(db: Kysely<any>): Promise<string | null> {
  try {
    const row = await sql<{ value: string }>`select value from settings where key = ${COMPATIBLE_FROM}`.execute(db);
    return row.rows[0]?.value ?? null;
  } catch (err) {
    if (missingTable(err)) return null;
    throw err;
  }
}

/**
 * Brings the schema to this version's latest migration, one node at a time: concurrent starts on one database
 * serialise here (PostgreSQL: an advisory lock of the schema held on a connection of its own; SQLite: the write lock,
 * taken at the transaction's start, and in-process a queue per file). A database a newer Tern migrated further is
 * left as it is (its migrations only added), unless a breaking migration raised its oldest compatible version above
 * this one: then the node refuses to start.
 */
export async function migrateToLatest(target: MigrationTarget): Promise<void> {
  await oneAtATime(target, async () => {
    if (target.dialect === 'postgres' && target.schema) {
      await sql`create schema if not exists ${sql.id(target.schema)}`.execute(target.db);
    }
    const state = await readMigrationState(target.db, target.dialect === 'postgres' ? target.schema : null);
    const floor = await compatibleFrom(target.db);
    if (floor !== null && compareVersions(floor, VERSION) > 0) {
      throw new Error(
        `this database was migrated by Tern ${floor} or later with changes Tern ${VERSION} cannot run on (${state.unknown.join(', ') || 'see its migrations'}): ` +
          `run Tern ${floor} or later, or restore the backup taken before the upgrade`,
      );
    }
    if (state.unknown.length > 0) {
      if (state.pending.length > 0) {
        throw new Error(
          `the database has migrations of a newer Tern (${state.unknown.join(', ')}) but not ${state.pending.join(', ')} of this one: run the newer Tern`,
        );
      }
      return;
    }
    if (state.pending.length === 0) return;
    await runMigrator(target);
    const raised = raisedFloor(floor, Object.keys(migrations), breakingMigrations);
    if (raised !== null) {
      await sql`insert into settings (key, value) values (${COMPATIBLE_FROM}, ${raised})
        on conflict (key) do update set value = excluded.value`.execute(target.db);
    }
  });
}

/**
 * The oldest compatible version once `applied` are: the newest major version among the breaking migrations applied,
 * when it is above the floor already recorded; null when the floor stays.
 */
export function raisedFloor(floor: string | null, applied: string[], breaking: Record<string, string>): string | null {
  const newest = applied
    .map((name) => breaking[name])
    .filter((v): v is string => v !== undefined)
    .sort(compareVersions)
    .at(-1);
  return newest !== undefined && (floor === null || compareVersions(newest, floor) > 0) ? newest : null;
}

async function runMigrator(target: MigrationTarget): Promise<void> {
  const migrator = new Migrator({
    db: target.dialect === 'sqlite' ? immediateTransactions(target.handle) : target.db,
    // Without it the migrator finds its lock table in any schema of the database and skips creating its own.
    ...(target.dialect === 'postgres' && target.schema ? { migrationTableSchema: target.schema } : {}),
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

async function oneAtATime(target: MigrationTarget, work: () => Promise<void>): Promise<void> {
  if (target.dialect === 'postgres') return withAdvisoryLock(target, work);
  return inFileQueue(target.file, async () => {
    // The process that waits for another's migrations waits in SQLite's busy handler: as long as they may take.
    const busy = target.handle.pragma('busy_timeout', { simple: true }) as number;
    target.handle.pragma('busy_timeout = 600000');
    try {
      await work();
    } finally {
      target.handle.pragma(`busy_timeout = ${busy}`);
    }
  });
}

/** The advisory lock key of a schema's migrations: the same on every node, another for each schema. */
export function migrationLockKey(schema: string): string {
  return BigInt.asIntN(64, createHash('sha256').update(`tern:migrations:${schema}`).digest().readBigUInt64BE(0)).toString();
}

/**
 * Kysely's migrator takes an advisory lock too, but only around its transaction: before it, it creates its schema,
 * its tables and its lock row, looking for them first, and Tern created the schema before that — steps that fail
 * when nodes run them at once ("duplicate key value violates unique constraint pg_namespace_nspname_index"). Its
 * lock is also one key for every schema and every application of the database. This one covers every step, per schema.
 */
async function withAdvisoryLock(target: Extract<MigrationTarget, { dialect: 'postgres' }>, work: () => Promise<void>): Promise<void> {
  const client = target.connect();
  await client.connect();
  try {
    const schema = target.schema ?? (await client.query<{ s: string | null }>('select current_schema() as s')).rows[0]?.s ?? 'public';
    const key = migrationLockKey(schema);
    await client.query('select pg_advisory_lock($1::bigint)', [key]);
    try {
      await work();
    } finally {
      await client.query('select pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
    }
  } finally {
    // Closing the connection releases the lock too, should the unlock have failed.
    await client.end().catch(() => undefined);
  }
}

/**
 * Stores of one process opening the same SQLite file migrate one after the other: SQLite's busy handler waits
 * synchronously, so two connections of one thread waiting on each other would wait out the timeout.
 */
const fileQueues = new Map<string, Promise<void>>();

async function inFileQueue(file: string, work: () => Promise<void>): Promise<void> {
  const before = fileQueues.get(file) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const mine = before.then(() => done);
  fileQueues.set(file, mine);
  await before;
  try {
    await work();
  } finally {
    release();
    if (fileQueues.get(file) === mine) fileQueues.delete(file);
  }
}

/**
 * The store's SQLite connection as the migrator uses it: the pending migrations run in one transaction, begun
 * IMMEDIATE so that it holds the write lock before it reads which are applied. Kysely's SQLite adapter ran them with
 * no transaction at all (it declares no transactional DDL, which SQLite has): two processes starting on one new file
 * both read "nothing applied", then both created the tables ("table organisations already exists"), and a migration
 * that failed half-way stayed half-applied. Not destroyed: the connection is the store's.
 */
function immediateTransactions(handle: SQLite.Database): Kysely<Database> {
  class ImmediateDriver extends SqliteDriver {
    override async beginTransaction(connection: DatabaseConnection): Promise<void> {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    }
  }
  class TransactionalDdlAdapter extends SqliteAdapter {
    override get supportsTransactionalDdl(): boolean {
      return true;
    }
  }
  class ImmediateDialect extends SqliteDialect {
    override createDriver(): Driver {
      return new ImmediateDriver({ database: handle });
    }
    override createAdapter(): DialectAdapter {
      return new TransactionalDdlAdapter();
    }
  }
  return new Kysely<Database>({ dialect: new ImmediateDialect({ database: handle }) });
}
