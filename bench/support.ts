/** What every benchmark case shares: Tern started in its own process on a fresh SQLite database, a tenant, figures. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Row = Record<string, string | number>;

export const BENCH_ADMIN_KEY = 'bench-admin-key-0123456789';
const ADMIN_KEY = BENCH_ADMIN_KEY;
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);

export const progress = (what: string) => process.stderr.write(`bench: ${what}\n`);

async function freePort(): Promise<number> {
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
  dbPath: string;
  smppPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tern-bench-'));
  const httpPort = await freePort();
  const smppPort = await freePort();
  // BENCH_NODE_ARGS: extra node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts', 'serve'], {
    env: {
      ...process.env,
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: String(httpPort),
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: String(smppPort),
      TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
      TERN_ADMIN_KEY: ADMIN_KEY,
      TERN_LOG_LEVEL: 'warn',
      TERN_SIMULATOR_SUBMIT_LATENCY_MS: '0',
      TERN_SIMULATOR_RECEIPT_LATENCY_MS: '0',
      // The load generator is one client sending as fast as it can: limits would measure themselves.
      TERN_RATE_LIMITS: 'send=1000000,read=1000000,lookup=1000000,admin=1000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${httpPort}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 300) throw new Error('Tern did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dbPath: join(dir, 'tern.db'),
    smppPort,
    process: child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
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
  const m = /tern_process_resident_memory_bytes (\d+(\.\d+)?(e\+\d+)?)/.exec(text);
  return m ? Math.round(Number(m[1]) / 1024 / 1024) : 0;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); null elsewhere. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

export function printTable(rows: Row[]): void {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log(line(cols));
  console.log(line(width.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ''))));
}

