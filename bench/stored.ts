/**
 * Reads on a store in use (`npm run bench stored`): Tern started on a database holding BENCH_STORED_MESSAGES
 * (10,000,000) messages (fill.ts; filled once and kept), then BENCH_DURATION seconds of each read at
 * BENCH_READ_CONNECTIONS (10) connections with the largest customer's ADMIN key (all its channels):
 * - `GET /commons/v1/consumptions`, monthly SMS consumption over the filled period;
 * - `GET /sms/v1/messages` page 1 filtered by status (DELIVERED, UNDELIVERED, UNDELIVERABLE in turn) over the last
 *   10 days of the filled period (the listing's default window, anchored on the fill rather than on today, so a
 *   database filled some days ago measures the same).
 */
import autocannon from 'autocannon';
import type { Dialect } from './databases.ts';
import { cachedFill } from './fill.ts';
import { int, onEachDatabase, type Result } from './report.ts';
import { DURATION_S, progress, serverRssMb, startBenchServer } from './support.ts';

const STORED = Number(process.env.BENCH_STORED_MESSAGES ?? 10_000_000);
const CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 10);
const CONSUMPTION_P99_MS = 20;
const LIST_P99_MS = 50;
const STATUSES = ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE'];

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

interface Reads {
  consumptions: autocannon.Result;
  list: autocannon.Result;
  rss: number;
}

/** Answers 200 with a list (not empty when `nonEmpty`), or says what came back instead. */
async function checked(url: string, key: string, nonEmpty: boolean): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': key } });
  const body = (await res.json()) as { items?: unknown[] };
  if (res.status !== 200 || !Array.isArray(body.items) || (nonEmpty && body.items.length === 0)) {
    throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
}

async function measure(dialect: Dialect): Promise<Reads> {
  const filled = await cachedFill(dialect, STORED);
  // Retention would start deleting a database filled long enough ago: the benchmark reads what it filled.
  const server = await startBenchServer({ TERN_RETENTION_DAYS: '36500' }, { dialect, databaseUrl: filled.databaseUrl });
  try {
    const headers = { 'x-api-key': filled.key };
    const consumptionPath = `/commons/v1/consumptions?startDate=${day(filled.firstAt)}&endDate=${day(filled.lastAt)}`;
    const listPath = (status: string) =>
      `/sms/v1/messages?searchBy[status.value]=${status}&startDate=${new Date(filled.lastAt - 10 * 86_400_000).toISOString()}&endDate=${new Date(filled.lastAt + 1).toISOString()}`;
    await checked(server.url + consumptionPath, filled.key, true);
    for (const s of STATUSES) await checked(server.url + listPath(s), filled.key, s === 'DELIVERED');

    progress(`GET /commons/v1/consumptions on ${dialect}, ${STORED.toLocaleString('en-US')} messages stored`);
    await cannon({ url: server.url + consumptionPath, headers, connections: CONNECTIONS, duration: 2 });
    const consumptions = await cannon({ url: server.url + consumptionPath, headers, connections: CONNECTIONS, duration: DURATION_S });
    progress(`GET /sms/v1/messages by status on ${dialect}`);
    let i = 0;
    const listOpts = (duration: number): autocannon.Options => ({
      url: server.url,
      headers,
      connections: CONNECTIONS,
      duration,
      requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: listPath(STATUSES[i++ % STATUSES.length]!) }) }],
    });
    await cannon(listOpts(2));
    const list = await cannon(listOpts(DURATION_S));
    return { consumptions, list, rss: await serverRssMb(server.url) };
  } finally {
    await server.stop();
  }
}

const readText = (r: autocannon.Result) => `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (${int(r.requests.average)} req/s)`;
const bad = (r: autocannon.Result) => r.non2xx + r.errors > 0;

export async function runStoredBench(): Promise<Result[]> {
  const { cells } = await onEachDatabase(measure);
  const stored = STORED.toLocaleString('en-US');
  return [
    {
      case: `GET /commons/v1/consumptions with ${stored} messages stored, ${CONNECTIONS} connections`,
      target: `p99 < ${CONSUMPTION_P99_MS} ms`,
      ...cells((m) => ({
        text: readText(m.consumptions),
        value: m.consumptions.requests.average,
        met: !bad(m.consumptions) && m.consumptions.latency.p99 < CONSUMPTION_P99_MS,
        note: bad(m.consumptions) ? `${m.consumptions.non2xx} non-2xx, ${m.consumptions.errors} errors` : undefined,
      })),
    },
    {
      case: `GET /sms/v1/messages page 1 filtered by status with ${stored} stored, ${CONNECTIONS} connections`,
      target: `p99 < ${LIST_P99_MS} ms`,
      ...cells((m) => ({
        text: readText(m.list),
        value: m.list.requests.average,
        met: !bad(m.list) && m.list.latency.p99 < LIST_P99_MS,
        note: [bad(m.list) ? `${m.list.non2xx} non-2xx, ${m.list.errors} errors` : '', `RSS ${m.rss} MB`].filter(Boolean).join(', '),
      })),
    },
  ];
}
