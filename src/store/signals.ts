import { sql } from 'kysely';
import pg from 'pg';
import type { Db, Dialect } from './schema.ts';

/**
 * The work queues a node can be woken for (`otp`: one-time passwords' timers), `config` for connectors and routes
 * changed by another node, and `organisations` and `prices` for settings that nodes cache.
 */
export type Signal = 'dispatch' | 'webhooks' | 'smpp-outbox' | 'connector-records' | 'receipts' | 'config' | 'organisations' | 'otp' | 'prices';

const SIGNALS: ReadonlySet<string> = new Set<Signal>(['dispatch', 'webhooks', 'smpp-outbox', 'connector-records', 'receipts', 'config', 'organisations', 'otp', 'prices']);

type Listener = () => void;

/**
 * Wake-ups for the workers that read the store's queues: when a transaction writes due work into a queue, the
 * workers of that queue run as soon as it commits — on this node through an in-process signal, on the other nodes
 * (PostgreSQL) through `NOTIFY`, which PostgreSQL delivers only when the transaction commits. Workers still look on
 * their own now and then (a slow safety poll), so a lost notification only delays work.
 */
export class Signals {
  private readonly listeners = new Map<Signal, Set<Listener>>();
  /** Signals raised inside transactions that have not committed yet. */
  private readonly pending = new WeakMap<object, Set<Signal>>();
  private listener: pg.Client | null = null;
  private closed = false;

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
   * Says that `db` wrote work for `signal`'s workers: inside a transaction opened by `inTransaction`, they are woken
   * when it commits; outside one, at once. Other nodes hear of it through PostgreSQL.
   */
  async raise(db: Db, signal: Signal): Promise<void> {
    if (db.isTransaction) {
      const set = this.pending.get(db);
      if (!set) throw new Error(`"${signal}" raised in a transaction not opened by inTransaction: its workers would not be woken`);
      if (set.has(signal)) return;
      set.add(signal);
    } else {
      queueMicrotask(() => this.fire(signal));
    }
    if (this.dialect === 'postgres') await sql`select pg_notify(${this.channel}, ${`${signal}:${this.nodeId}`})`.execute(db);
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
  }

  /** The transaction rolled back: nothing was written. */
  discard(trx: Db): void {
    this.pending.delete(trx);
  }

  fire(signal: Signal): void {
    for (const l of this.listeners.get(signal) ?? []) l();
  }

  /** PostgreSQL: one connection of this node listens for the other nodes' notifications. */
  async listen(connectionString: string, options?: string): Promise<void> {
    if (this.dialect !== 'postgres' || this.listener || this.closed) return;
    const client = new pg.Client({ connectionString, ...(options ? { options } : {}) });
    client.on('notification', (n) => {
      const [signal, node] = (n.payload ?? '').split(':');
      if (node === this.nodeId || !SIGNALS.has(signal ?? '')) return;
      this.fire(signal as Signal);
    });
    client.on('error', () => {
      // The connection dropped: listen again; workers poll meanwhile.
      this.listener = null;
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.listen(connectionString, options).catch(() => undefined), 1_000).unref();
    });
    await client.connect();
    await client.query(`listen "${this.channel}"`);
    this.listener = client;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.listener;
    this.listener = null;
    if (client) await client.end().catch(() => undefined);
  }
}
