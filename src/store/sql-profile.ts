import { writeFileSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/**
 * `TERN_SQL_PROFILE=<file>`: times every statement by its SQL text and writes, when the process exits, the statements
 * that took the most time with their count and mean — where a benchmark's database time goes. `%p` in the file name
 * stands for the process id (benchmarks start several servers). On PostgreSQL the time is the round trip, waits
 * included. `kill -USR2` starts the count afresh.
 */
const target = process.env.TERN_SQL_PROFILE?.replace('%p', String(process.pid));
const spent = new Map<string, { calls: number; ms: number; max?: number; slow?: number }>();

if (target) {
  // SIGUSR2 starts the count afresh: what a process does from a given moment (idle after a load, say).
  process.on('SIGUSR2', () => spent.clear());
  process.on('exit', () => {
    // Batches of different sizes are one statement: their lists of placeholders and rows counted as one, and on
    // PostgreSQL the numbers of the placeholders after them too.
    const shapes = new Map<string, { calls: number; ms: number; max: number; slow: number }>();
    for (const [source, v] of spent) {
      const shape = source
        .replace(/\s+/g, ' ')
        .replace(/\$\d+/g, '?')
        .replace(/\(\?(?:, \?)*\)(?:, \(\?(?:, \?)*\))*/g, '(…)');
      const s = shapes.get(shape) ?? { calls: 0, ms: 0, max: 0, slow: 0 };
      s.calls += v.calls;
      s.ms += v.ms;
      s.max = Math.max(s.max, v.max ?? 0);
      s.slow += v.slow ?? 0;
      shapes.set(shape, s);
    }
    const rows = [...shapes].sort((a, b) => b[1].ms - a[1].ms);
    const total = rows.reduce((sum, [, v]) => sum + v.ms, 0);
    const calls = rows.reduce((sum, [, v]) => sum + v.calls, 0);
    const lines = rows
      .slice(0, 40)
      .map(
        ([source, v]) =>
          `${v.ms.toFixed(0).padStart(7)} ms ${String(v.calls).padStart(8)} × ${((1000 * v.ms) / v.calls).toFixed(0).padStart(6)} µs max ${(v.max ?? 0).toFixed(1)} slow ${v.slow} ${source.slice(0, 240)}`,
      );
    writeFileSync(target, [`${calls} statements, ${total.toFixed(0)} ms`, ...lines, ''].join('\n'));
  });
}

function note(source: string, took: number): void {
  const entry = spent.get(source) ?? { calls: 0, ms: 0 };
  entry.calls++;
  entry.ms += took;
  entry.max = Math.max(entry.max ?? 0, took);
  if (took > 5) entry.slow = (entry.slow ?? 0) + 1;
  spent.set(source, entry);
}

/** Profiling: times every query a PostgreSQL pool's connections run (called for each new connection). */
export function profilePgClient(client: { query: (...args: any[]) => any }): void {
  if (!target) return;
  const query = client.query.bind(client);
  client.query = (...args: any[]) => {
    const first = args[0] as string | { text?: string } | undefined;
    const source = typeof first === 'string' ? first : (first?.text ?? '?');
    const started = performance.now();
    const result = query(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(
        () => note(source, performance.now() - started),
        () => note(source, performance.now() - started),
      );
    }
    return result;
  };
}

/** The statement itself, or (profiling) one that times its runs. */
export function profiledStatement(source: string, stmt: SQLite.Statement): SQLite.Statement {
  if (!target) return stmt;
  const timed =
    (run: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) => {
      const started = performance.now();
      try {
        return run(...args);
      } finally {
        note(source, performance.now() - started);
      }
    };
  return new Proxy(stmt, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...a: unknown[]) => unknown).bind(t);
      return prop === 'run' || prop === 'all' || prop === 'get' || prop === 'iterate' ? timed(bound) : bound;
    },
  });
}
