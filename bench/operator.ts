/**
 * Operator case of `npm run bench` (`npm run bench operator`, or `node --import tsx bench/operator.ts` alone): two
 * Terns, A and B, each in its own process on its own SQLite database. A's only route is an SMPP connector bound to
 * B's SMPP server; B sends through its simulator at zero latency. Each message goes A → SMPP → B → simulator, and
 * B's receipt comes back to A as a deliver_sm. Two phases:
 * - throughput: BENCH_OPERATOR_MESSAGES (20,000) posted to A at concurrency 64; messages a second from the first
 *   accept to the last DELIVERED on A (p50/p99 there mostly measure the backlog);
 * - latency: BENCH_OPERATOR_RATE (500) messages a second for 10 s, below saturation; p50/p99 of each message's time
 *   from accept to DELIVERED, from A's own timestamps.
 */
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { int, printResults, type Result } from './report.ts';
import { BENCH_ADMIN_KEY, benchTenant, processCpuMs, progress, serverRssMb, startBenchServer } from './support.ts';

const MESSAGES = Number(process.env.BENCH_OPERATOR_MESSAGES ?? 20_000);
const RATE = Number(process.env.BENCH_OPERATOR_RATE ?? 500);
const BINDS = Number(process.env.BENCH_OPERATOR_BINDS ?? 2);
const WINDOW = Number(process.env.BENCH_OPERATOR_WINDOW ?? 100);

async function admin(url: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, { method, headers: { 'x-api-key': BENCH_ADMIN_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

interface Delivered {
  accepted_at: number;
  status_at: number;
}

function deliveredSince(dbPath: string, since: number): Delivered[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare(`select accepted_at, status_at from messages where status = 'DELIVERED' and direction = 'MT' and accepted_at >= ?`).all(since) as Delivered[]
    ).map((r) => ({
      accepted_at: Number(r.accepted_at),
      status_at: Number(r.status_at),
    }));
  } finally {
    db.close();
  }
}

function post(url: string, key: string, opts: { amount: number; rate?: number; series: number }): Promise<void> {
  let i = 0;
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `${url}/sms/v1/messages`,
        connections: opts.rate ? 16 : 64,
        amount: opts.amount,
        ...(opts.rate && { overallRate: opts.rate }),
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        // French mobile numbers ending in 5: the simulator delivers all of them.
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                recipient: { to: `336${opts.series}${String(i++ % 1_000_000).padStart(6, '0')}5` },
                body: { text: 'Through an operator' },
              }),
            }),
          },
        ],
      },
      (err) => (err ? reject(err) : resolve()),
    ),
  );
}

async function waitDelivered(dbPath: string, since: number, count: number): Promise<Delivered[]> {
  const started = Date.now();
  for (;;) {
    const rows = deliveredSince(dbPath, since);
    if (rows.length >= count || Date.now() - started > 600_000) return rows;
    progress(`  ${rows.length} of ${count} delivered on A`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function percentile(rows: Delivered[], p: number): number {
  const sorted = rows.map((r) => r.status_at - r.accepted_at).sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function runOperatorBench(): Promise<Result[]> {
  const b = await startBenchServer();
  const a = await startBenchServer({ TERN_SECRET_KEY: 'bench-operator-secret-key-0123456789abcdef' });
  try {
    const onB = await benchTenant(b.url);
    await admin(b.url, 'POST', `/admin/v1/channels/${onB.channelId}/smpp-credentials`, { systemId: 'tern-a', password: 'bench1' });
    await admin(a.url, 'POST', '/admin/v1/connectors', {
      name: 'tern-b',
      type: 'SMPP',
      host: '127.0.0.1',
      port: b.smppPort,
      systemId: 'tern-a',
      password: 'bench1',
      binds: BINDS,
      window: WINDOW,
    });
    await admin(a.url, 'POST', '/admin/v1/routes', { name: 'all via B', priority: 1, match: { prefix: '33' }, connectors: [{ connector: 'tern-b' }] });
    for (let i = 0; ; i++) {
      const r = await admin(a.url, 'POST', '/admin/v1/routes/test', { to: '33612345675' });
      if (r.candidates?.[0]?.name === 'tern-b') break;
      if (i > 100) throw new Error('the SMPP connector did not come up');
      await new Promise((res) => setTimeout(res, 100));
    }
    const onA = await benchTenant(a.url);

    progress(`operator throughput: ${MESSAGES} messages A → SMPP → B → receipt → A`);
    const cpuA = processCpuMs(a.process.pid);
    const cpuB = processCpuMs(b.process.pid);
    const started = Date.now();
    await post(a.url, onA.key, { amount: MESSAGES, series: 1 });
    const accepted = Date.now();
    const bulk = await waitDelivered(a.dbPath, started, MESSAGES);
    const first = Math.min(...bulk.map((r) => r.accepted_at));
    const last = Math.max(...bulk.map((r) => r.status_at));
    const cpu = (before: number | null, pid: number | undefined) => {
      const after = processCpuMs(pid);
      return before !== null && after !== null ? ((after - before) / Math.max(1, bulk.length)).toFixed(3) : '?';
    };
    const cpuNote = `CPU per message A ${cpu(cpuA, a.process.pid)} ms, B ${cpu(cpuB, b.process.pid)} ms`;
    const rss = await serverRssMb(a.url);

    const steady = RATE * 10;
    progress(`operator latency: ${steady} messages at ${RATE}/s`);
    const steadyStart = Date.now();
    await post(a.url, onA.key, { amount: steady, rate: RATE, series: 2 });
    const paced = await waitDelivered(a.dbPath, steadyStart, steady);
    const sqliteOnly = "SQLite only (the case reads the servers' SQLite files)";
    return [
      {
        case: `operator: ${MESSAGES} REST on A → SMPP → B → receipt → DELIVERED on A`,
        sqlite: {
          text: `${int((bulk.length / Math.max(1, last - first)) * 1000)} msg/s, p50 ${Math.round(percentile(bulk, 50))} ms, p99 ${Math.round(percentile(bulk, 99))} ms`,
          note: `${BINDS} binds, window ${WINDOW}; accepting took ${((accepted - started) / 1000).toFixed(1)} s; ${bulk.length} delivered; ${cpuNote}; RSS ${rss} MB`,
        },
        postgres: sqliteOnly,
      },
      {
        case: `operator at ${RATE} msg/s: accept on A → DELIVERED on A`,
        sqlite: {
          text: `p50 ${Math.round(percentile(paced, 50))} ms, p99 ${Math.round(percentile(paced, 99))} ms`,
          note: `${paced.length} of ${steady} delivered; RSS ${await serverRssMb(a.url)} MB`,
        },
        postgres: sqliteOnly,
      },
    ];
  } finally {
    await a.stop();
    await b.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runOperatorBench()
    .then((results) => printResults(results))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
