/**
 * `npm run bench`: starts Tern on a fresh SQLite database in its own process and prints one table:
 * a no-op route as the baseline, durable sends at concurrency 64, their ratio, and end-to-end throughput
 * (accepted → DELIVERED) with the simulator at zero latency. Extra cases (SMPP…) add their rows.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

export type Row = Record<string, string | number>;

const ADMIN_KEY = 'bench-admin-key-0123456789';
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const E2E_MESSAGES = Number(process.env.BENCH_E2E_MESSAGES ?? 50_000);

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
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
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

async function api(url: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
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

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
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

/** Read-only look at the server's database (WAL lets a second process read while it writes). */
function countDelivered(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`select count(*) as n from messages where status = 'DELIVERED'`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** French mobile numbers ending in 5: never one of the simulator's special endings (…0001–0004, …9). */
const benchNumber = (series: number, i: number) => `336${series}${String(i % 1_000_000).padStart(6, '0')}5`;

const progress = (what: string) => process.stderr.write(`bench: ${what}\n`);

async function httpCases(): Promise<Row[]> {
  const server = await startBenchServer();
  try {
    const t = await benchTenant(server.url);
    const base = { url: server.url, connections: 64, duration: DURATION_S };
    progress('no-op route');
    await cannon({ ...base, url: `${server.url}/healthz`, duration: 2 });
    const noop = await cannon({ ...base, url: `${server.url}/healthz` });
    progress('durable sends');
    let n = 0;
    const send = await cannon({
      ...base,
      url: `${server.url}/sms/v1/messages`,
      method: 'POST',
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
      setupClient: (client) => {
        client.setBody(JSON.stringify({ recipient: { to: benchNumber(1, n++) }, body: { text: 'Your verification code is 123456. It expires in 10 minutes.' } }));
      },
    });
    const rssAfterSend = await serverRssMb(server.url);

    const e2e = await startBenchServer();
    let e2eRow: Row;
    try {
      const t2 = await benchTenant(e2e.url);
      progress(`end to end, ${E2E_MESSAGES} messages`);
      let i = 0;
      const cpuBefore = processCpuMs(e2e.process.pid);
      const started = Date.now();
      await cannon({
        url: `${e2e.url}/sms/v1/messages`,
        connections: 64,
        amount: E2E_MESSAGES,
        method: 'POST',
        headers: { 'x-api-key': t2.key, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ recipient: { to: benchNumber(2, i++) }, body: { text: 'End to end' } }),
            }),
          },
        ],
      });
      const accepted = Date.now();
      let delivered = 0;
      for (;;) {
        delivered = countDelivered(e2e.dbPath);
        if (delivered >= E2E_MESSAGES || Date.now() - started > 600_000) break;
        progress(`  ${delivered} delivered`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const done = Date.now();
      const cpuAfter = processCpuMs(e2e.process.pid);
      const cpu = cpuBefore !== null && cpuAfter !== null ? `; server CPU ${((cpuAfter - cpuBefore) / delivered).toFixed(3)} ms per message` : '';
      e2eRow = {
        case: `end to end: ${E2E_MESSAGES} accepted → DELIVERED`,
        'req/s': Math.round((delivered / (done - started)) * 1000),
        'p50 ms': '-',
        'p99 ms': '-',
        'RSS MB': await serverRssMb(e2e.url),
        note: `accepting took ${((accepted - started) / 1000).toFixed(1)} s, all delivered after ${((done - started) / 1000).toFixed(1)} s (${delivered} delivered)${cpu}`,
      };
    } finally {
      await e2e.stop();
    }

    return [
      {
        case: 'no-op route GET /healthz, 64 connections',
        'req/s': Math.round(noop.requests.average),
        'p50 ms': noop.latency.p50,
        'p99 ms': noop.latency.p99,
        'RSS MB': '-',
        note: `${noop.non2xx} non-2xx`,
      },
      {
        case: 'durable POST /sms/v1/messages, 64 connections',
        'req/s': Math.round(send.requests.average),
        'p50 ms': send.latency.p50,
        'p99 ms': send.latency.p99,
        'RSS MB': rssAfterSend,
        note: `${send.non2xx} non-2xx; send/no-op ratio ${(send.requests.average / noop.requests.average).toFixed(2)}`,
      },
      e2eRow,
    ];
  } finally {
    await server.stop();
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

async function main(): Promise<void> {
  const only = process.argv[2];
  const rows: Row[] = [];
  if (!only || only === 'http') rows.push(...(await httpCases()));
  if (!only || only === 'smpp') {
    const smppModule = './smpp.ts';
    const smpp = (await import(smppModule).catch(() => null)) as { runSmppBench?: () => Promise<Row[]> } | null;
    if (smpp?.runSmppBench) rows.push(...(await smpp.runSmppBench()));
  }
  console.log(`\nTern benchmark — ${new Date().toISOString()}, node ${process.version}, ${DURATION_S} s per load case\n`);
  printTable(rows);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
