import { CompiledQuery, type DatabaseConnection, type Driver, PostgresDialect, type QueryResult, type TransactionSettings } from 'kysely';
import type pg from 'pg';

/**
 * Statements whose result their caller does not read (the pipeline's batch inserts and updates): in a transaction on
 * PostgreSQL they are sent without waiting for their answer, with the statements after them, on a connection in
 * pipeline mode — a transaction of a read, five inserts and a commit waits for two round trips instead of seven. An
 * error of one of them is told at the transaction's next awaited statement or its commit, with its own code (a
 * deadlock is retried like any), and the transaction is rolled back: the caller sees it fail as it would have at the
 * statement itself, everything it wrote undone. Outside a transaction, and on SQLite, they run as any statement.
 */
const unread = new WeakSet<CompiledQuery>();

/** Marks a statement whose result its caller does not read. */
export function resultNotRead(q: CompiledQuery): CompiledQuery {
  unread.add(q);
  return q;
}

/**
 * Runs `text` on `client`, giving up after `timeoutMs` (node-postgres's `query_timeout`; on a pipelined connection
 * the connection is closed then, since the statements behind it cannot be answered before it).
 */
export function queryWithin(client: pg.ClientBase, text: string, timeoutMs: number): Promise<pg.QueryResult> {
  return client.query({ text, query_timeout: timeoutMs } as pg.QueryConfig);
}

const NOTHING_READ: QueryResult<never> = Object.freeze({ rows: Object.freeze([]) as never[] });

/** Kysely's PostgreSQL dialect, whose transactions send the statements nobody reads without waiting for them. */
export class PipelinedPostgresDialect extends PostgresDialect {
  constructor(private readonly pool: pg.Pool) {
    super({ pool });
  }

  override createDriver(): Driver {
    return new PipelinedPostgresDriver(this.pool);
  }
}

class PipelinedConnection implements DatabaseConnection {
  inTransaction = false;
  /** The connection failed (lost, timed out, a rollback that did not go through): closed instead of reused. */
  discard = false;
  /** The first error of a statement sent without waiting, in the open transaction. */
  private failed: unknown = null;

  constructor(readonly client: pg.PoolClient) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction && unread.has(q)) {
      this.send(q.sql, [...q.parameters]);
      return NOTHING_READ as QueryResult<R>;
    }
    let result: pg.QueryResult;
    try {
      result = await this.client.query(q.sql, [...q.parameters]);
    } catch (err) {
      // After a statement sent without waiting failed, the ones after it fail as "transaction aborted": its error is
      // the one that says why.
      throw this.failed ?? withCallerStack(err);
    }
    if (this.failed !== null) throw this.failed;
    const { command, rowCount, rows } = result;
    return {
      numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PostgreSQL here: read in pages');
  }

  /** Sent with the transaction's first statement: a begin that failed fails the statement awaited after it. */
  begin(sql: string): void {
    this.failed = null;
    this.inTransaction = true;
    this.send(sql, []);
  }

  /** Ends the transaction (commit or rollback), then tells a failure of a statement sent without waiting. */
  async end(sql: 'commit' | 'rollback'): Promise<void> {
    try {
      // A commit after a failed statement is answered as a rollback (no error): the failure is thrown below.
      await this.client.query(sql);
    } catch (err) {
      if (this.failed === null) throw withCallerStack(err);
    }
    const failed = this.failed;
    if (sql === 'rollback' || failed === null) {
      this.inTransaction = false;
      this.failed = null;
    }
    if (failed !== null && sql === 'commit') throw failed;
  }

  private send(sql: string, params: unknown[]): void {
    this.client.query(sql, params).catch((err: unknown) => {
      this.failed ??= err;
    });
  }
}

function withCallerStack(err: unknown): unknown {
  if (err instanceof Error) err.stack = `${err.stack ?? err.message}\n${new Error().stack?.split('\n').slice(1).join('\n') ?? ''}`;
  return err;
}

class PipelinedPostgresDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PipelinedConnection>();

  constructor(private readonly pool: pg.Pool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PipelinedConnection(client);
      this.connections.set(client, connection);
    }
    connection.discard = false;
    return connection;
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let sql = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      sql = 'start transaction';
      if (settings.isolationLevel) sql += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) sql += ` ${settings.accessMode}`;
    }
    (c as PipelinedConnection).begin(sql);
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await (c as PipelinedConnection).end('commit');
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await (c as PipelinedConnection).end('rollback');
  }

  async releaseConnection(c: DatabaseConnection): Promise<void> {
    const connection = c as PipelinedConnection;
    // A connection left in a transaction (its rollback failed) must not serve another caller.
    const unfit = connection.discard || connection.inTransaction;
    connection.inTransaction = false;
    connection.client.release(unfit || undefined);
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}
