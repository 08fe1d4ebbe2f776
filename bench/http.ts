/** The HTTP cases of `npm run bench`: a no-op route as the baseline, durable sends, and end to end with the simulator. */
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { benchTenant, DURATION_S, processCpuMs, progress, type Row, serverRssMb, startBenchServer } from './support.ts';

const E2E_MESSAGES = Number(process.env.BENCH_E2E_MESSAGES ?? 50_000);

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
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

export async function httpCases(): Promise<Row[]> {
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

    // The same sends with an fsync per commit (TERN_SQLITE_SYNCHRONOUS=FULL): what surviving a power loss costs.
    const full = await startBenchServer({ TERN_SQLITE_SYNCHRONOUS: 'FULL' });
    let fullSend: autocannon.Result;
    try {
      const tf = await benchTenant(full.url);
      progress('durable sends, synchronous = FULL');
      let m = 0;
      fullSend = await cannon({
        ...base,
        url: `${full.url}/sms/v1/messages`,
        method: 'POST',
        headers: { 'x-api-key': tf.key, 'content-type': 'application/json' },
        setupClient: (client) => {
          client.setBody(JSON.stringify({ recipient: { to: benchNumber(3, m++) }, body: { text: 'Your verification code is 123456. It expires in 10 minutes.' } }));
        },
      });
    } finally {
      await full.stop();
    }

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
      {
        case: 'the same with TERN_SQLITE_SYNCHRONOUS=FULL',
        'req/s': Math.round(fullSend.requests.average),
        'p50 ms': fullSend.latency.p50,
        'p99 ms': fullSend.latency.p99,
        'RSS MB': '-',
        note: `${fullSend.non2xx} non-2xx; ${(fullSend.requests.average / send.requests.average).toFixed(2)} × NORMAL`,
      },
      e2eRow,
    ];
  } finally {
    await server.stop();
  }
}

