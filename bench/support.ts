/** What the benchmark cases share: Tern in its own process on a database of its own, a tenant, figures, tables. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSchema, type Dialect, dropSchema, postgresUrl } from './databases.ts';

export type Row = Record<string, string | number>;

export const BENCH_ADMIN_KEY = 'bench-admin-key-0123456789';
const ADMIN_KEY = BENCH_ADMIN_KEY;
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);

export const progress = (what: string) => process.stderr.write(`bench: ${what}\n`);

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface BenchServer {
  url: string;
  dialect: Dialect;
  /** The SQLite file (empty on PostgreSQL). */
  dbPath: string;
  smppPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Seals the secrets the benchmarked servers keep (PostgreSQL requires one). */
const BENCH_SECRET_KEY = 'bench-secret-key-0123456789abcdefghijklmnop';

export interface ServerOptions {
  dialect?: Dialect;
  /** An existing database to start on and keep (a filled one): `sqlite:<file>` or a PostgreSQL URL with `?schema=`. */
  databaseUrl?: string;
  /** The CPUs the server may run on (`taskset -c` list, e.g. `0` or `0,1`); any when absent. */
  cpus?: string;
}

/**
 * Tern in its own process on a fresh database of the dialect (a SQLite file in a temporary folder, or a PostgreSQL
 * schema of its own, dropped at stop), or on `databaseUrl`, which is kept.
 */
export async function startBenchServer(env: Record<string, string> = {}, options: ServerOptions = {}): Promise<BenchServer> {
  const dialect = options.dialect ?? 'sqlite';
  let databaseUrl = options.databaseUrl;
  let dbPath = '';
  let cleanup = async (): Promise<void> => {};
  if (databaseUrl === undefined && dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tern-bench-'));
    dbPath = join(dir, 'tern.db');
    databaseUrl = `sqlite:${dbPath}`;
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else if (databaseUrl === undefined) {
    const schema = await createSchema();
    databaseUrl = postgresUrl(schema);
    cleanup = () => dropSchema(schema);
  } else if (databaseUrl.startsWith('sqlite:')) {
    dbPath = databaseUrl.slice('sqlite:'.length);
  }
  const httpPort = await freePort();
  const smppPort = await freePort();
  // BENCH_NODE_ARGS: extra node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // As `npm run serve` starts it (package.json): a smaller young generation and two malloc arenas (see the README's
  // "Memory"), unless the flags or the environment say otherwise.
  const memoryArgs = nodeArgs.some((a) => a.startsWith('--max-semi-space-size')) ? [] : ['--max-semi-space-size=16'];
  const command = [process.execPath, ...memoryArgs, ...nodeArgs, 'dist/main.js', 'serve'];
  // taskset execs the server: the child's pid stays the server's own.
  if (options.cpus !== undefined) command.unshift('taskset', '-c', options.cpus);
  const child = spawn(command[0]!, command.slice(1), {
    env: {
      MALLOC_ARENA_MAX: '2',
      ...process.env,
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: String(httpPort),
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: String(smppPort),
      TERN_DATABASE_URL: databaseUrl,
      TERN_ADMIN_KEY: ADMIN_KEY,
      TERN_SECRET_KEY: BENCH_SECRET_KEY,
      TERN_LOG_LEVEL: 'warn',
      TERN_SIMULATOR_SUBMIT_LATENCY_MS: '0',
      TERN_SIMULATOR_RECEIPT_LATENCY_MS: '0',
      // The load generator is one client sending as fast as it can: limits would measure themselves.
      TERN_RATE_LIMITS: 'send=1000000,read=1000000,lookup=1000000,admin=1000000',
      ...env,
    },
    // Its log (warnings and errors only) goes to the benchmark's stderr, beside its progress: the table stays clean.
    stdio: ['ignore', 2, 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  const url = `http://127.0.0.1:${httpPort}`;
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`Tern exited with code ${child.exitCode} while starting`);
      try {
        if ((await fetch(`${url}/readyz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 600) throw new Error('Tern did not start within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await cleanup();
    throw err;
  }
  return {
    url,
    dialect,
    dbPath,
    smppPort,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await cleanup();
    },
  };
}

export async function api(url: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** An organisation with plenty of credit, an SMS channel and an API key. */
export async function benchTenant(url: string): Promise<{ key: string; channelId: string; organisationId: string }> {
  const org = await api(url, 'POST', '/admin/v1/organisations', ADMIN_KEY, { name: 'Bench' });
  const channel = await api(url, 'POST', `/admin/v1/organisations/${org.organisationId}/channels`, ADMIN_KEY, {
    name: 'Bench SMS',
    type: 'SMS',
    flow: 'TRANSACTIONAL',
  });
  const cred = await api(url, 'POST', `/admin/v1/channels/${channel.channelId}/credentials`, ADMIN_KEY, { name: 'bench', roles: ['ADMIN'] });
  await api(url, 'POST', `/admin/v1/organisations/${org.organisationId}/credit`, ADMIN_KEY, { amount: 1_000_000 });
  return { key: cred.value, channelId: channel.channelId, organisationId: org.organisationId };
}

export async function serverRssMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /process_resident_memory_bytes (\d+(\.\d+)?(e\+\d+)?)/.exec(text);
  return m ? Math.round(Number(m[1]) / 1024 / 1024) : 0;
}

/** A process's resident memory in MB, from /proc (Linux); null elsewhere. */
export function processRssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc (Linux); null elsewhere. With `mainThread`,
 * its main thread's alone (the one that runs JavaScript's event loop in Node).
 */
export function processCpuMs(pid: number | undefined, mainThread = false): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** Prints rows as a Markdown table; `headers` names columns whose key is not their title. */
export function printTable(rows: Row[], headers: Record<string, string> = {}): void {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const titles = cols.map((c) => headers[c] ?? c);
  const width = cols.map((c, i) => Math.max(titles[i]!.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log(line(titles));
  console.log(line(width.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ''))));
}
