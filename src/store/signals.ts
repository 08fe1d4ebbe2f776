import { sql } from 'kysely';
import pg from 'pg';
import { queryWithin, resultNotRead } from './pg-driver.ts';
import type { Db, Dialect } from './schema.ts';

/**
 * The work queues a node can be woken for (`otp`: one-time passwords' timers), and the settings nodes keep in
 * memory, each dropped or read again when another node changes them: `config` for connectors and routes, `prices`,
 * `organisations` (locales, fraud guards) and `settings` (channels, API keys, SMPP credentials, sub-account logins,
 * traffic limits).
 */
export type Signal =
  | 'dispatch'
  | 'webhooks'
  | 'smpp-outbox'
  | 'connector-records'
  | 'receipts'
  | 'config'
  | 'organisations'
  | 'otp'
  | 'lookup-batches'
  | 'prices'
  | 'settings';

const SIGNALS: ReadonlySet<string> = new Set<Signal>([
  'dispatch',
  'webhooks',
  'smpp-outbox',
  'connector-records',
  'receipts',
  'config',
  'organisations',
  'otp',
  'lookup-batches',
  'prices',
  'settings',
]);

/**
 * Queues whose work the node that writes it does itself: any node can, and the writer is awake and has it at hand.
 * Telling every other node would only have them all race for the same rows in smaller claims (a statement or two
 * each per write, on every node). A node that stops leaves them to the others: the heartbeat and a stopping node's
 * hand-over wake every queue of every node, and the safety poll finds work nobody holds.
 */
const SERVED_WHERE_WRITTEN: ReadonlySet<Signal> = new Set<Signal>(['webhooks', 'connector-records', 'lookup-batches']);

/** How long a node waits before listening again after its listening connection was lost: doubling up to the most. */
const RELISTEN_MS = 250;
const RELISTEN_MAX_MS = 10_000;
/**
 * How often the listening connection is checked with a statement: a connection that silently went away (a server
 * frozen or gone without closing it, a network lost) hears nothing and says nothing, so it is asked.
 */
const LISTENER_CHECK_MS = 15_000;

export interface ListenOptions {
  /** The longest to wait for the connection, and for the answer of a check. */
  connectTimeoutMs?: number;
  /** Told when the listening connection is lost (it is made again by itself). */
  onLost?: (err: Error) => void;
}

type Listener = () => void;

/**
 * Wake-ups for the workers that read the store's queues: when a transaction writes due work into a queue, the
 * workers of that queue run as soon as it commits — on this node through an in-process signal, on the other nodes
 * (PostgreSQL) through `NOTIFY`, which PostgreSQL delivers only when the transaction commits. Workers still look on
 * their own now and then (a slow safety poll), so a lost notification only delays work. Changes of settings travel the
 * same way, so every node drops its copy of them as soon as they are committed.
 */
export class Signals {
  private readonly listeners = new Map<Signal, Set<Listener>>();
  /** Signals raised inside transactions that have not committed yet. */
  private readonly pending = new WeakMap<object, Set<Signal>>();
  /** What runs when those transactions commit, or roll back. */
  private readonly outcomes = new WeakMap<object, Array<{ committed: () => void; rolledBack: () => void }>>();
  private listener: pg.Client | null = null;
  private closed = false;
  private relistenMs = RELISTEN_MS;
  private relistenTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  private listenOptions: ListenOptions = {};
  /** Where the node listens, once `listen` was called. */
  private target: { connectionString: string; options: string | undefined } | null = null;

  constructor(
    private readonly dialect: Dialect,
    /** PostgreSQL: the channel of this database (and schema), so deployments sharing a server do not wake each other. */
    private readonly channel: string,
    /** Distinguishes this node's own notifications, which it has already acted on. */
    private readonly nodeId: string,
  ) {}

  on(signal: Signal, listener: Listener): () => void {
    let set = this.listeners.get(signal);
    if (!set) this.listeners.set(signal, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /**
   * Says that `db` wrote work for `signal`'s workers (or changed the settings it names): inside a transaction opened
   * by `inTransaction`, they are woken when it commits; outside one, at once. Other nodes hear of it through PostgreSQL
   * (`everyNode`: even for the queues a node serves itself).
   */
  async raise(db: Db, signal: Signal, everyNode = false): Promise<void> {
    if (db.isTransaction) {
      const set = this.pending.get(db);
      if (!set) throw new Error(`"${signal}" raised in a transaction not opened by inTransaction: its workers would not be woken`);
      if (set.has(signal)) return;
      set.add(signal);
    } else {
      queueMicrotask(() => this.fire(signal));
    }
    if (this.dialect === 'postgres' && (everyNode || !SERVED_WHERE_WRITTEN.has(signal))) {
      // Nothing reads its answer: in a transaction it goes out with the statements after it (see pg-driver.ts).
      await db.executeQuery(resultNotRead(sql`select pg_notify(${this.channel}, ${`${signal}:${this.nodeId}`})`.compile(db)));
    }
  }

  /**
   * Runs `committed` once `db`'s transaction (opened by `inTransaction`) commits, `rolledBack` if it does not; outside
   * a transaction, `committed` at once. Neither may throw: they run as the transaction ends, for its caller.
   */
  afterCommit(db: Db, committed: () => void, rolledBack: () => void): void {
    if (!db.isTransaction) {
      committed();
      return;
    }
    if (!this.pending.has(db)) throw new Error('afterCommit in a transaction not opened by inTransaction: it would never run');
    let list = this.outcomes.get(db);
    if (!list) this.outcomes.set(db, (list = []));
    list.push({ committed, rolledBack });
  }

  /** Opens the account of a transaction's signals (called by `inTransaction`). */
  begin(trx: Db): void {
    this.pending.set(trx, new Set());
  }

  /** The transaction committed: wakes the workers it wrote work for. */
  commit(trx: Db): void {
    const set = this.pending.get(trx);
    this.pending.delete(trx);
    if (set) for (const s of set) this.fire(s);
    const outcomes = this.outcomes.get(trx);
    this.outcomes.delete(trx);
    if (outcomes) for (const o of outcomes) o.committed();
  }

  /** The transaction rolled back: nothing was written. */
  discard(trx: Db): void {
    this.pending.delete(trx);
    const outcomes = this.outcomes.get(trx);
    this.outcomes.delete(trx);
    if (outcomes) for (const o of outcomes) o.rolledBack();
  }

  fire(signal: Signal): void {
    for (const l of this.listeners.get(signal) ?? []) l();
  }

  /**
   * PostgreSQL: one connection of this node listens for the other nodes' notifications. When it is lost (or fails
   * its periodic check) the node listens again by itself, soon and then less often (250 ms doubling to 10 s) until it
   * can; notifications sent meanwhile are lost, so once listening again it acts as if every signal had come: caches
   * of settings are dropped and workers look at their queues.
   */
  async listen(connectionString: string, options?: string, listenOptions: ListenOptions = {}): Promise<void> {
    if (this.dialect !== 'postgres' || this.listener || this.closed) return;
    this.listenOptions = listenOptions;
    this.target = { connectionString, options };
    await this.connectListener(connectionString, options);
  }

  /**
   * The database answers again after it failed (a failover ended). Not listening: listen now rather than at the end
   * of the wait the lost connection left, which grows to 10 s — meanwhile the other nodes' changes would not reach
   * this one. Listening already (it came back while the database still failed): act on every signal again, since
   * what was read then — the settings dropped and read again, the queues looked at — may have failed.
   */
  databaseAnswers(): void {
    if (this.closed || !this.target) return;
    if (this.listener) {
      for (const signal of SIGNALS) this.fire(signal as Signal);
      return;
    }
    // Not listening and no retry waiting: an attempt is under way, which acts on every signal when it succeeds.
    if (!this.relistenTimer) return;
    clearTimeout(this.relistenTimer);
    this.relistenTimer = null;
    this.relistenMs = RELISTEN_MS;
    const { connectionString, options } = this.target;
    this.connectListener(connectionString, options, true).catch(() => this.listenAgainLater(connectionString, options));
  }

  /** Whether a connection listens now (PostgreSQL). */
  get listening(): boolean {
    return this.listener !== null;
  }

  private async connectListener(connectionString: string, options: string | undefined, again = false): Promise<void> {
    const timeoutMs = this.listenOptions.connectTimeoutMs ?? 5_000;
    const client = new pg.Client({
      connectionString,
      application_name: `tern listener ${this.nodeId}`,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
      ...(options ? { options } : {}),
    });
    client.on('notification', (n) => {
      const [signal, node] = (n.payload ?? '').split(':');
      if (node === this.nodeId || !SIGNALS.has(signal ?? '')) return;
      this.fire(signal as Signal);
    });
    const lost = (err?: Error) => {
      // Only the connection this node listens on; one that failed while connecting is the caller's to retry.
      if (this.listener !== client) return;
      this.listener = null;
      this.stopChecks();
      client.end().catch(() => undefined);
      if (!this.closed) this.listenOptions.onLost?.(err ?? new Error('the listening connection ended'));
      this.listenAgainLater(connectionString, options);
    };
    client.on('error', (err) => lost(err));
    client.on('end', () => lost());
    try {
      await client.connect();
      await queryWithin(client, `listen "${this.channel}"`, timeoutMs);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed || this.listener) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.relistenMs = RELISTEN_MS;
    this.scheduleCheck(client, timeoutMs, lost);
    if (again) for (const signal of SIGNALS) this.fire(signal as Signal);
  }

  private scheduleCheck(client: pg.Client, timeoutMs: number, lost: (err?: Error) => void): void {
    this.checkTimer = setTimeout(() => {
      this.checkTimer = null;
      if (this.listener !== client) return;
      queryWithin(client, 'select 1', timeoutMs).then(
        () => {
          if (this.listener === client) this.scheduleCheck(client, timeoutMs, lost);
        },
        (err: Error) => lost(err),
      );
    }, LISTENER_CHECK_MS);
    this.checkTimer.unref();
  }

  private stopChecks(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = null;
  }

  private listenAgainLater(connectionString: string, options: string | undefined): void {
    if (this.closed || this.relistenTimer) return;
    // A little jitter, so the nodes of a cluster do not all come back at the same instant.
    const delay = Math.round(this.relistenMs * (0.75 + Math.random() * 0.5));
    this.relistenMs = Math.min(RELISTEN_MAX_MS, this.relistenMs * 2);
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = null;
      if (this.closed || this.listener) return;
      this.connectListener(connectionString, options, true).catch(() => this.listenAgainLater(connectionString, options));
    }, delay);
    this.relistenTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopChecks();
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    this.relistenTimer = null;
    const client = this.listener;
    this.listener = null;
    if (client) await client.end().catch(() => undefined);
  }
}
