/**
 * The one table `npm run bench` prints: a row per case, its target, the figure measured on SQLite and on PostgreSQL
 * beside it, whether each meets the target, and PostgreSQL's throughput as a share of SQLite's.
 */
import { type Dialect, dialects } from './databases.ts';
import { printTable, type Row } from './support.ts';

/** What one case measured on one database. */
export interface Figure {
  /** The figure as printed: the ratio or rate first, then what it was computed from. */
  text: string;
  /** Throughput (higher is better) compared across databases; absent when not comparable. */
  value?: number;
  /** Whether the case's target is met; absent when the case has no target. */
  met?: boolean;
  note?: string;
}

/** A cell: a figure, or why there is none (prerequisite missing, the run failed). */
export type Cell = Figure | string;

export interface Result {
  case: string;
  target?: string;
  sqlite: Cell;
  postgres: Cell;
  note?: string;
}

/** For a row that involves no database (Kannel, the smpp package loopback): one figure, in the SQLite column. */
export const NO_DATABASE = '(no database: one figure)';

export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => (n >= 100 ? String(Math.round(n)) : n.toFixed(1));

export interface PerDatabase<T> {
  /** The row's two cells: what `pick` makes of each database's measurement, or why there is none. */
  cells(pick: (m: T) => Cell): { sqlite: Cell; postgres: Cell };
  /** The measurement on one database, when it was made. */
  on(dialect: Dialect): T | undefined;
}

/** Runs `measure` on each database measured (one after the other) and keeps, per database, its outcome or failure. */
export async function onEachDatabase<T>(measure: (dialect: Dialect) => Promise<T>): Promise<PerDatabase<T>> {
  const { measured, skipped } = await dialects();
  const outcomes = new Map<Dialect, { ok: T } | { failed: string }>();
  for (const d of measured) {
    try {
      outcomes.set(d, { ok: await measure(d) });
    } catch (err) {
      console.error(`bench: failed on ${d}:`, err);
      outcomes.set(d, { failed: `failed: ${(err as Error).message.split('\n')[0]}` });
    }
  }
  const cell = (d: Dialect, pick: (m: T) => Cell): Cell => {
    const o = outcomes.get(d);
    if (!o) return skipped[d] ?? 'not measured';
    return 'ok' in o ? pick(o.ok) : o.failed;
  };
  return {
    cells: (pick) => ({ sqlite: cell('sqlite', pick), postgres: cell('postgres', pick) }),
    on(d) {
      const o = outcomes.get(d);
      return o && 'ok' in o ? o.ok : undefined;
    },
  };
}

const yesNo = (c: Cell) => (typeof c === 'string' || c.met === undefined ? '' : c.met ? 'yes' : 'NO');
const text = (c: Cell) => (typeof c === 'string' ? c : c.text);

function share(r: Result): string {
  if (typeof r.sqlite === 'string' || typeof r.postgres === 'string') return '';
  if (r.sqlite.value === undefined || r.postgres.value === undefined || r.sqlite.value === 0) return '';
  const x = r.postgres.value / r.sqlite.value;
  return `${x.toFixed(2)} ${x >= 0.5 ? 'yes' : 'NO'}`;
}

function notes(r: Result): string {
  const parts: string[] = [];
  if (r.note) parts.push(r.note);
  for (const [label, c] of [
    ['SQLite', r.sqlite],
    ['PostgreSQL', r.postgres],
  ] as const) {
    if (typeof c !== 'string' && c.note) parts.push(r.postgres === NO_DATABASE ? c.note : `${label}: ${c.note}`);
  }
  return parts.join('; ');
}

/** Rows of a case that measures on SQLite only, written as free columns (req/s, p50 ms, …, note). */
export function fromRows(rows: Row[], why = 'SQLite only'): Result[] {
  return rows.map(({ case: name, note, ...figures }) => ({
    case: String(name),
    sqlite: {
      text: Object.entries(figures)
        .filter(([, v]) => v !== '-' && v !== '')
        .map(([k, v]) => {
          const value = typeof v === 'number' && Number.isInteger(v) ? int(v) : String(v);
          // 'p50 ms' → 'p50 12 ms', 'req/s' → '350 req/s'
          const [name, unit] = k.includes(' ') ? [k.slice(0, k.lastIndexOf(' ')), k.slice(k.lastIndexOf(' ') + 1)] : ['', k];
          return [name, value, unit].filter(Boolean).join(' ');
        })
        .join(', '),
      ...(note !== undefined && note !== '' && { note: String(note) }),
    },
    postgres: why,
  }));
}

export function toRows(results: Result[]): Row[] {
  return results.map((r) => ({
    case: r.case,
    target: r.target ?? '',
    SQLite: text(r.sqlite),
    sqliteMet: yesNo(r.sqlite),
    PostgreSQL: text(r.postgres),
    postgresMet: yesNo(r.postgres),
    'PostgreSQL ÷ SQLite (≥ 0.5?)': share(r),
    note: notes(r),
  }));
}

export function printResults(results: Result[]): void {
  printTable(toRows(results), { sqliteMet: 'met?', postgresMet: 'met?' });
}
