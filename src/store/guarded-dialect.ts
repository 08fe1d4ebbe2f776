import { CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type { StoreHealth } from './health.ts';
import { StorageFailure, storageFailureOf } from './failures.ts';

export interface GuardedDialectOptions {
  /**
   * COMMIT is sent to a server (PostgreSQL; the default), so a connection lost under it leaves the outcome unknown;
   * false for SQLite, whose commit runs in this process and writes nothing when it fails.
   */
  remoteCommit?: boolean;
  /**
   * Transactions begin with SQLite's BEGIN IMMEDIATE, taking the write lock at once. A deferred transaction that has
   * read and then writes while another connection holds the write lock (the checkpointer's TRUNCATE, a CLI command
   * on the same file) fails at once with SQLITE_BUSY — SQLite cannot wait there without risking a deadlock — where
   * one that asks for the lock first waits busy_timeout for it.
   */
  beginImmediate?: boolean;
}

/**
 * A Kysely dialect whose every error that means the database failed (lost, out of reach, too slow, out of space)
 * comes out as a StorageFailure, told to the store's health; while the health says the database is down, taking a
 * connection fails at once instead of waiting for one that cannot be had. Errors of statements pass as they are.
 */
export class GuardedDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly health: StoreHealth,
    private readonly options: GuardedDialectOptions = {},
  ) {}

  createDriver(): Driver {
    return new GuardedDriver(this.inner.createDriver(), this.health, this.options.remoteCommit ?? true, this.options.beginImmediate ?? false);
  }

  createQueryCompiler(): ReturnType<Dialect['createQueryCompiler']> {
    return this.inner.createQueryCompiler();
  }

  createAdapter(): ReturnType<Dialect['createAdapter']> {
    return this.inner.createAdapter();
  }

  createIntrospector(db: Parameters<Dialect['createIntrospector']>[0]): ReturnType<Dialect['createIntrospector']> {
    return this.inner.createIntrospector(db);
  }
}

/** A connection of the wrapped driver, and whether it failed in a way that makes it unfit to go back to its pool. */
class GuardedConnection implements DatabaseConnection {
  broken = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: GuardedDriver,
  ) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    let result: QueryResult<R>;
    try {
      result = await this.inner.executeQuery<R>(q);
    } catch (err) {
      throw this.driver.failed(err, this);
    }
    return result;
  }

  streamQuery<R>(q: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(q, chunkSize);
  }
}

const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');

class GuardedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly health: StoreHealth,
    private readonly remoteCommit: boolean,
    private readonly beginImmediate: boolean,
  ) {}

  /** The error to throw for `err`: a StorageFailure (told to the health) or `err` itself. */
  failed(err: unknown, connection?: GuardedConnection): unknown {
    const failure = storageFailureOf(err);
    if (failure === null) return err;
    if (connection) connection.broken = true;
    this.health.failed(failure);
    return failure;
  }

  async init(): Promise<void> {
    try {
      await this.inner.init();
    } catch (err) {
      throw this.failed(err);
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.health.admit();
    try {
      return new GuardedConnection(await this.inner.acquireConnection(), this);
    } catch (err) {
      throw this.failed(err);
    }
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const g = c as GuardedConnection;
    try {
      if (this.beginImmediate) await g.inner.executeQuery(BEGIN_IMMEDIATE);
      else await this.inner.beginTransaction(g.inner, settings);
    } catch (err) {
      throw this.failed(err, g);
    }
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    const g = c as GuardedConnection;
    try {
      await this.inner.commitTransaction(g.inner);
    } catch (err) {
      const failure = this.failed(err, g);
      throw this.remoteCommit && failure instanceof StorageFailure ? failure.duringCommit() : failure;
    }
  }

  /**
   * A rollback that fails leaves the error that caused it to be told: the transaction is over either way (SQLite
   * ends it by itself after a full disk; PostgreSQL, when the connection is gone). The connection is not given back
   * to its pool then.
   */
  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    const g = c as GuardedConnection;
    try {
      await this.inner.rollbackTransaction(g.inner);
    } catch (err) {
      this.failed(err, g);
      g.broken = true;
    }
  }

  async savepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    const g = c as GuardedConnection;
    try {
      await this.inner.savepoint!(g.inner, name, compile);
    } catch (err) {
      throw this.failed(err, g);
    }
  }

  async rollbackToSavepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]): Promise<void> {
    const g = c as GuardedConnection;
    try {
      await this.inner.rollbackToSavepoint!(g.inner, name, compile);
    } catch (err) {
      throw this.failed(err, g);
    }
  }

  async releaseSavepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2]): Promise<void> {
    const g = c as GuardedConnection;
    try {
      await this.inner.releaseSavepoint!(g.inner, name, compile);
    } catch (err) {
      throw this.failed(err, g);
    }
  }

  async releaseConnection(c: DatabaseConnection): Promise<void> {
    const g = c as GuardedConnection;
    const inner = g.inner as DatabaseConnection & { discard?: boolean };
    // The pipelined PostgreSQL connection is closed instead of going back to the pool (see pg-driver.ts).
    if (g.broken) inner.discard = true;
    await this.inner.releaseConnection(g.inner);
  }

  async destroy(): Promise<void> {
    await this.inner.destroy();
  }
}
