import { type RawBuilder, sql } from 'kysely';
import type { Db, Store } from './db.ts';
import type { Signal } from './signals.ts';

/** Where a queue's rows live and which columns make them due and leased. */
export interface QueueDefinition {
  /** Wakes the queue's workers when rows are written. */
  signal: Signal;
  table: string;
  /** The primary key's columns. */
  keys: readonly string[];
  /** When a row is due (epoch ms). */
  due: string;
  /** Until when the row belongs to the worker that claimed it (epoch ms; null when free). */
  lease: string;
  /** A column recording which node claimed the row, if the table has one. */
  claimedBy?: string;
  /** A column that keeps the claimant a claim found still recorded (its lease ran out unreleased: a takeover). */
  previousClaimant?: string;
  /** What else makes a row claimable, beyond being due and free (e.g. `state = 'PENDING'`). */
  ready?: string;
  /** The order rows are claimed in (default: the due column, oldest first). */
  order?: string;
  /** When a row expires (epoch ms): rows past it are work too, to be dropped. */
  expires?: string;
  /** What makes a row wait in the queue, for its depth (default: every row of the table). */
  waiting?: string;
}

export interface ClaimOptions {
  now: number;
  limit: number;
  leaseMs: number;
  /** Recorded in `claimedBy`. */
  claimant?: string;
  /** Narrows the claim (e.g. to the credentials this node can serve). */
  where?: RawBuilder<unknown>;
}

/**
 * The one leased queue: rows of a table are claimed in batches — due, not leased by anyone, oldest due first — by
 * moving their lease ahead in one statement (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so nodes never wait on each
 * other's rows). A worker that dies leaves its lease to run out, and the rows are claimed again. The dispatcher,
 * the webhook sender, the SMPP outbox and the connectors' timers all read their work through it.
 */
export class LeasedQueue<Row> {
  private readonly keyList: RawBuilder<unknown>;
  private readonly ready: RawBuilder<unknown>;

  constructor(
    private readonly store: Store,
    readonly definition: QueueDefinition,
  ) {
    this.keyList = sql.join(definition.keys.map((k) => sql.ref(k)));
    this.ready = definition.ready ? sql` and ${sql.raw(definition.ready)}` : sql``;
  }

  async claim(opts: ClaimOptions): Promise<Row[]> {
    const { table, assignments, picked } = this.claiming(opts);
    const lock = this.store.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const res = await sql<Row>`
      update ${table} set ${assignments}
      where (${this.keyList}) in (${picked} ${lock})
      returning *`.execute(this.store.db);
    return res.rows;
  }

  /**
   * Claims like `claim`, and says when the earliest row left unclaimed falls due (null: none), for a worker to sleep
   * until then: on PostgreSQL in the claim's own statement (one round trip instead of two on every pass), on SQLite
   * by a second look only when the claim took fewer rows than it could. A claim that took fewer took every row it
   * could claim now, so SQLite's look starts after now: the rows due now that it left (leased, not ready, outside
   * `where`) are never the answer, and reading past them was most of the look's cost (a busy webhook origin's
   * backlog: 3 ms).
   */
  async claimWithNextDue(opts: ClaimOptions): Promise<{ rows: Row[]; nextDue: number | null }> {
    if (this.store.dialect !== 'postgres') {
      const rows = await this.claim(opts);
      return { rows, nextDue: rows.length < opts.limit ? await this.nextDue(opts.now, opts.where, opts.now) : opts.now };
    }
    const { table, assignments, picked, free } = this.claiming(opts);
    const due = sql.ref(this.definition.due);
    // One row even when nothing is claimed (the left join), each carrying the next due time; the rows just picked
    // are left out of it, as the statement still sees them unleased. Unlike SQLite's look this one reads from the
    // first row due: that index scan is what marks the entries of rows no longer due as dead, which keeps the
    // claims' bitmap scans short on a table updated this fast (starting after now, a 20,000-message run's claims
    // read up to 27,000 dead entries each and PostgreSQL spent 60 % more CPU).
    const res = await sql<Row & { tern_next_due: number | string | null }>`
      with picked as (${picked} for update skip locked), claimed as (
        update ${table} set ${assignments}
        where (${this.keyList}) in (select ${this.keyList} from picked)
        returning ${table}.*
      )
      select (select ${due} from ${table} where ${due} is not null and ${free}
                and (${this.keyList}) not in (select ${this.keyList} from picked)
              order by ${due} limit 1) as tern_next_due, claimed.*
      from (select 1) as one left join claimed on true`.execute(this.store.db);
    const first = res.rows[0];
    const nextDue = first?.tern_next_due === null || first?.tern_next_due === undefined ? null : Number(first.tern_next_due);
    const key = this.definition.keys[0]!;
    const rows: Row[] = [];
    for (const r of res.rows) {
      const { tern_next_due: _, ...row } = r as Record<string, unknown>;
      if (row[key] !== null) rows.push(row as Row);
    }
    // A full batch: there may be more due now, whatever the earliest unpicked row says.
    return { rows, nextDue: rows.length >= opts.limit ? opts.now : nextDue };
  }

  /**
   * Claims like `claim`, from the rows whose `column` is one of `groups` (null: rows without one), picking from each
   * group on its own — its oldest due rows, at most `limit` — and then the oldest `limit` of those. Through `index`,
   * on (`column`, due), each pick reads its own group's rows only, never past the rows due to groups left out.
   */
  async claimFromGroups(opts: ClaimOptions & { column: string; groups: ReadonlyArray<string | null>; index: string }): Promise<Row[]> {
    if (opts.groups.length === 0) return [];
    const { table, assignments, free } = this.claiming(opts);
    const d = this.definition;
    const due = sql.ref(d.due);
    const column = sql.ref(opts.column);
    const postgres = this.store.dialect === 'postgres';
    const lock = postgres ? sql` for update skip locked` : sql``;
    // Left to itself, SQLite would rather take an index that orders by the due column alone, and PostgreSQL too for the
    // group without a value (null): SQLite is told the index, PostgreSQL is asked for its order.
    const from = postgres ? table : sql`${table} indexed by ${sql.raw(opts.index)}`;
    const picks = opts.groups.map(
      (g, i) => sql`select * from (select ${this.keyList}, ${due} from ${from}
        where ${g === null ? sql`${column} is null` : sql`${column} = ${g}`} and ${due} <= ${opts.now} and ${free}
        order by ${column}, ${due} limit ${opts.limit}${lock}) as ${sql.raw(`g${i}`)}`,
    );
    const res = await sql<Row>`
      update ${table} set ${assignments}
      where (${this.keyList}) in (select ${this.keyList} from (${sql.join(picks, sql` union all `)}) as picked order by ${due} limit ${opts.limit})
      returning *`.execute(this.store.db);
    return res.rows;
  }

  /** The parts of a claim: the rows it picks (keys, unlocked), what makes a row free, and what claiming one sets. */
  private claiming(opts: ClaimOptions): {
    table: RawBuilder<unknown>;
    assignments: RawBuilder<unknown>;
    picked: RawBuilder<unknown>;
    free: RawBuilder<unknown>;
  } {
    const d = this.definition;
    const table = sql.table(d.table);
    const due = sql.ref(d.due);
    const leaseCol = sql.ref(d.lease);
    // Assignments read the row as it was, so the previous claimant is kept before it is replaced.
    const previous = d.previousClaimant && d.claimedBy ? sql`, ${sql.ref(d.previousClaimant)} = ${sql.ref(d.claimedBy)}` : sql``;
    const claimedBy = d.claimedBy ? sql`${previous}, ${sql.ref(d.claimedBy)} = ${opts.claimant ?? null}` : sql``;
    const where = opts.where ? sql` and ${opts.where}` : sql``;
    const free = sql`(${leaseCol} is null or ${leaseCol} < ${opts.now})${this.ready}${where}`;
    return {
      table,
      assignments: sql`${leaseCol} = ${opts.now + opts.leaseMs}${claimedBy}`,
      picked: sql`select ${this.keyList} from ${table} where ${due} <= ${opts.now} and ${free} order by ${d.order ? sql.ref(d.order) : due} limit ${opts.limit}`,
      free,
    };
  }

  /** When the earliest row not leased (and due after `after`, if given) falls due, or null when there is none. */
  async nextDue(now: number, where?: RawBuilder<unknown>, after?: number): Promise<number | null> {
    const d = this.definition;
    const leaseCol = sql.ref(d.lease);
    const due = sql.ref(d.due);
    const res = await sql<{ due: number | string }>`
      select ${due} as due from ${sql.table(d.table)}
      where ${after === undefined ? sql`${due} is not null` : sql`${due} > ${after}`} and (${leaseCol} is null or ${leaseCol} < ${now})${this.ready}${where ? sql` and ${where}` : sql``}
      order by ${due} limit 1`.execute(this.store.db);
    const row = res.rows[0];
    return row ? Number(row.due) : null;
  }

  /** Wakes the queue's workers (once `db`'s transaction commits, on every node). */
  wake(db: Db): Promise<void> {
    return this.store.signals.raise(db, this.definition.signal);
  }
}

/**
 * The signals of the queues among `queues` that hold work due at `now` and held by no one (or rows past their
 * expiry), in one statement: what a lost wake-up, or a node that stopped with rows leased, leaves waiting.
 */
export async function queuesWithWorkDue(store: Store, queues: readonly QueueDefinition[], now: number): Promise<Signal[]> {
  if (queues.length === 0) return [];
  const looks = queues.map((d) => {
    const table = sql.table(d.table);
    const lease = sql.ref(d.lease);
    const ready = d.ready ? sql` and ${sql.raw(d.ready)}` : sql``;
    const due = sql`exists (select 1 from ${table} where ${sql.ref(d.due)} <= ${now} and (${lease} is null or ${lease} < ${now})${ready})`;
    const expired = d.expires ? sql` or exists (select 1 from ${table} where ${sql.ref(d.expires)} <= ${now})` : sql``;
    return sql`select ${sql.lit(d.signal)} as signal where ${due}${expired}`;
  });
  const res = await sql<{ signal: Signal }>`${sql.join(looks, sql` union all `)}`.execute(store.db);
  return res.rows.map((r) => r.signal);
}

/** A queue's backlog: rows waiting (counted up to a cap), and the due time of the oldest one due (null: none). */
export interface QueueBacklog {
  signal: Signal;
  depth: number;
  oldestDue: number | null;
}

/**
 * The backlog of each queue of `queues`, in one statement: its waiting rows counted up to `cap` (so a deep queue costs
 * no more than `cap` rows read), and the oldest due time among them not after `now`, read from the due index.
 */
export async function queueBacklogs(store: Store, queues: readonly QueueDefinition[], now: number, cap: number): Promise<QueueBacklog[]> {
  if (queues.length === 0) return [];
  const looks = queues.map((d) => {
    const table = sql.table(d.table);
    const waiting = d.waiting ? sql` where ${sql.raw(d.waiting)}` : sql``;
    const andWaiting = d.waiting ? sql` and ${sql.raw(d.waiting)}` : sql``;
    const due = sql.ref(d.due);
    return sql`select ${sql.lit(d.signal)} as signal,
      (select count(*) from (select 1 from ${table}${waiting} limit ${sql.lit(cap)}) as capped) as depth,
      (select min(${due}) from ${table} where ${due} <= ${now}${andWaiting}) as oldest`;
  });
  const res = await sql<{ signal: Signal; depth: number | string; oldest: number | string | null }>`${sql.join(looks, sql` union all `)}`.execute(store.db);
  return res.rows.map((r) => ({ signal: r.signal, depth: Number(r.depth), oldestDue: r.oldest === null ? null : Number(r.oldest) }));
}

export const DISPATCH_QUEUE: QueueDefinition = {
  signal: 'dispatch',
  table: 'dispatch_queue',
  keys: ['message_id'],
  due: 'due_at',
  lease: 'lease_until',
  claimedBy: 'claimed_by',
  previousClaimant: 'previous_claimant',
  // Within a lane, fair between organisations (see fair-queue.ts); claims name the lane.
  order: 'rank',
};

export const WEBHOOK_QUEUE: QueueDefinition = {
  signal: 'webhooks',
  table: 'webhook_deliveries',
  keys: ['id'],
  due: 'next_attempt_at',
  lease: 'lease_until',
  // In order per message: a delivery waits while an earlier one of the same message is pending (ids are time-ordered).
  ready: `state = 'PENDING' and not exists (select 1 from webhook_deliveries earlier
    where earlier.message_id = webhook_deliveries.message_id and earlier.state = 'PENDING' and earlier.id < webhook_deliveries.id)`,
  // Delivered and failed deliveries stay (their history) until retention.
  waiting: `state = 'PENDING'`,
};

export const SMPP_OUTBOX_QUEUE: QueueDefinition = {
  signal: 'smpp-outbox',
  table: 'smpp_outbox',
  keys: ['id'],
  due: 'next_attempt_at',
  lease: 'lease_until',
  expires: 'expires_at',
};

export const CONNECTOR_RECORD_QUEUE: QueueDefinition = {
  signal: 'connector-records',
  table: 'connector_records',
  keys: ['connector', 'key'],
  due: 'due_at',
  lease: 'lease_until',
  // Records without a due time are kept for a receipt to match, not work waiting.
  waiting: 'due_at is not null',
};

export const UNMATCHED_RECEIPT_QUEUE: QueueDefinition = {
  signal: 'receipts',
  table: 'unmatched_receipts',
  keys: ['id'],
  due: 'next_attempt_at',
  lease: 'lease_until',
};
