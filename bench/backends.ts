/**
 * The PostgreSQL backends of a cluster's nodes (found by their connections' application_name), sampled while a load
 * runs: the CPU they used, what they were doing, and for each lock waited on, what its holder was doing meanwhile.
 */
import type pg from 'pg';
import { processCpuMs } from './support.ts';

/** How often the backends are sampled. */
export const SAMPLE_MS = 250;

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** A statement in a few words: what it does to which table (a lock it asks for, `for no key update`, included). */
function statementLabel(query: string): string {
  const q = query.replace(/\s+/g, ' ').trim();
  if (/pg_notify/i.test(q)) return 'pg_notify';
  const table = /\b(?:from|into|update)\s+"?(\w+)"?/i.exec(q)?.[1] ?? q.slice(0, 40);
  if (/for no key update/i.test(q)) return `${table} … for no key update`;
  if (/^insert/i.test(q)) return `insert into ${table}`;
  if (/^update/i.test(q)) return `update ${table}`;
  if (/^delete/i.test(q)) return `delete from ${table}`;
  if (/^select/i.test(q)) return `select from ${table}`;
  return q.slice(0, 40);
}

interface BackendRow {
  pid: number;
  state: string | null;
  wait_event_type: string | null;
  wait_event: string | null;
  query: string;
  /** The backends it waits for, when it waits on a lock. */
  blockers: number[];
}

/**
 * A lock waited on: the statement waiting, the mean backends waiting, and what the holders did meanwhile (mean
 * backends, by `state|detail`).
 */
export interface LockWait {
  statement: string;
  mean: number;
  holders: Array<[string, number]>;
}

/**
 * What a backend holding a lock others wait for is doing, in a word and in detail: its node's turn (the transaction
 * waits for the node's next statement), a statement running, a lock it waits on itself, WAL (the commit).
 */
function holderState(r: BackendRow): [string, string] {
  if (r.state === 'idle in transaction') return ["its node's turn", `after ${statementLabel(r.query)}`];
  if (r.state !== 'active') return [r.state ?? 'gone', ''];
  if (r.wait_event_type === 'Lock') return ['waiting on a lock itself', statementLabel(r.query)];
  if (r.wait_event_type === 'IO' || r.wait_event_type === 'LWLock') return ['WAL and IO', `${r.wait_event_type}:${r.wait_event}`];
  return ['running a statement', statementLabel(r.query)];
}

/** What a backend is doing, or null when it is idle outside a transaction. */
function stateOf(r: BackendRow): string | null {
  if (r.state === 'idle in transaction') return 'idle in transaction';
  if (r.state !== 'active') return null;
  if (r.wait_event_type === 'Lock') return `Lock:${r.wait_event} (${statementLabel(r.query)})`;
  if (r.wait_event_type) return `${r.wait_event_type}:${r.wait_event}`;
  return 'on CPU';
}

/**
 * The nodes' PostgreSQL backends, sampled while a load runs: the CPU each used (from /proc) and what they were doing
 * (pg_stat_activity), as the mean number of backends in each state.
 */
export class BackendWatch {
  private base = new Map<number, number>();
  private last = new Map<number, number>();
  private states = new Map<string, number>();
  /** Lock waits by the statement waiting, then by what the backend holding the lock was doing meanwhile. */
  private holders = new Map<string, Map<string, number>>();
  private samples = 0;
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: pg.Client,
    private readonly application: string,
  ) {}

  private async sample(counting: boolean): Promise<void> {
    const { rows } = await this.client.query<BackendRow>(
      `select pid, state, wait_event_type, wait_event, query,
              case when wait_event_type = 'Lock' then pg_blocking_pids(pid) else '{}' end as blockers
         from pg_stat_activity where application_name like $1`,
      [`${this.application}\\_node%`],
    );
    for (const r of rows) {
      const cpu = processCpuMs(r.pid);
      if (cpu === null) continue;
      // A backend first seen during the load started during it (from no CPU at all).
      if (!this.base.has(r.pid)) this.base.set(r.pid, counting ? 0 : cpu);
      this.last.set(r.pid, cpu);
    }
    if (!counting) return;
    this.samples++;
    const byPid = new Map(rows.map((r) => [r.pid, r]));
    for (const r of rows) {
      const state = stateOf(r);
      if (state === null) continue;
      this.states.set(state, (this.states.get(state) ?? 0) + 1);
      for (const pid of r.blockers) {
        const holder = byPid.get(pid);
        const waited = statementLabel(r.query);
        const doing = this.holders.get(waited) ?? new Map<string, number>();
        const what = (holder ? holderState(holder) : ['another client', '']).join('|');
        doing.set(what, (doing.get(what) ?? 0) + 1);
        this.holders.set(waited, doing);
      }
    }
  }

  async begin(): Promise<void> {
    this.base.clear();
    this.last.clear();
    this.states.clear();
    this.holders.clear();
    this.samples = 0;
    await this.sample(false);
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample(true)).catch(() => {});
    }, SAMPLE_MS);
  }

  /**
   * Stops sampling; answers the CPU the backends used since begin() (ms), their states and what lock holders were
   * doing while others waited, as mean backends a sample, most first.
   */
  async end(): Promise<{ cpuMs: number; states: Array<[string, number]>; holders: LockWait[] }> {
    if (this.timer) clearInterval(this.timer);
    await this.sampling;
    await this.sample(false);
    let cpuMs = 0;
    for (const [pid, base] of this.base) cpuMs += (this.last.get(pid) ?? base) - base;
    const means = (m: Map<string, number>) => [...m].map(([s, n]): [string, number] => [s, n / Math.max(1, this.samples)]).sort((a, b) => b[1] - a[1]);
    const holders = [...this.holders]
      .map(([statement, doing]): LockWait => ({ statement, mean: sum([...doing.values()]) / Math.max(1, this.samples), holders: means(doing) }))
      .sort((a, b) => b.mean - a.mean);
    return { cpuMs, states: means(this.states), holders };
  }
}
