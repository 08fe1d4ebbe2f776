/**
 * The HTTP cases of `npm run bench` (`npm run bench http`): on each database, a no-op route as the baseline and
 * durable sends (`POST /sms/v1/messages`, 201 only once committed) at 64 connections, their ratio; on SQLite also the
 * same sends with an fsync per commit; and the sends with the server pinned to one core, then two: how far one node
 * uses the cores it is given. BENCH_DURATION (10) seconds per load.
 */
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import type { Dialect } from './databases.ts';
import { type Figure, int, onEachDatabase, type Result } from './report.ts';
import { boundsText, type CpuSpent, cpuBounds, cpuMeter } from './cpu.ts';
import { benchTenant, DURATION_S, progress, serverRssMb, startBenchServer } from './support.ts';

const CONNECTIONS = 64;
const TARGET_RATIO = 0.25;
const TARGET_P99_MS = 50;
/** Durable sends with the server on two cores ÷ on one (taskset; the load generator unpinned), at least. */
const TARGET_TWO_CORES = 1.5;

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** French mobile numbers ending in 5: never one of the simulator's special endings (…0001–0004, …9). */
const benchNumber = (series: number, i: number) => `336${series}${String(i % 1_000_000).padStart(6, '0')}5`;

async function sends(url: string, key: string, series: number): Promise<autocannon.Result> {
  let n = 0;
  return cannon({
    url: `${url}/sms/v1/messages`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    setupClient: (client) => {
      client.setBody(
        JSON.stringify({ recipient: { to: benchNumber(series, n++) }, body: { text: 'Your verification code is 123456. It expires in 10 minutes.' } }),
      );
    },
  });
}

const loadText = (r: autocannon.Result, unit = 'req/s') => `${int(r.requests.average)} ${unit}, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`;
const errorsOf = (r: autocannon.Result) => (r.non2xx + r.errors > 0 ? `${r.non2xx} non-2xx, ${r.errors} errors` : undefined);

interface Measured {
  noop: autocannon.Result;
  send: autocannon.Result;
  /** CPU during the no-op load, per request answered: the server's, and the load generator's (the bench's process). */
  noopCpu: CpuSpent;
  /** The same during the sends: the server's (every thread) is steadier than a rate on a busy machine. */
  sendCpu: CpuSpent;
  rss: number;
}

async function measure(dialect: Dialect): Promise<Measured> {
  const server = await startBenchServer({}, { dialect });
  try {
    const t = await benchTenant(server.url);
    progress(`no-op route on ${dialect}`);
    await cannon({ url: `${server.url}/healthz`, connections: CONNECTIONS, duration: 2 });
    const meter = () => cpuMeter({ server: [server.process.pid] }, { postgres: dialect === 'postgres' });
    const noopMeter = meter();
    const noop = await cannon({ url: `${server.url}/healthz`, connections: CONNECTIONS, duration: DURATION_S });
    const noopCpu = noopMeter.stop(noop.requests.total, 'request');
    progress(`durable sends on ${dialect}`);
    const sendMeter = meter();
    const send = await sends(server.url, t.key, 1);
    const sendCpu = sendMeter.stop(send.requests.total, 'send');
    return { noop, send, noopCpu, sendCpu, rss: await serverRssMb(server.url) };
  } finally {
    await server.stop();
  }
}

/** The same sends with an fsync per commit (TERN_SQLITE_SYNCHRONOUS=FULL): what surviving a power loss costs. */
async function fullSync(): Promise<autocannon.Result> {
  const server = await startBenchServer({ TERN_SQLITE_SYNCHRONOUS: 'FULL' });
  try {
    const t = await benchTenant(server.url);
    progress('durable sends, synchronous = FULL');
    return await sends(server.url, t.key, 3);
  } finally {
    await server.stop();
  }
}

/** Durable sends with the server pinned to one core, then to two. */
async function pinned(dialect: Dialect): Promise<{ dialect: Dialect; one: autocannon.Result; two: autocannon.Result }> {
  const on = async (cores: string, series: number) => {
    const server = await startBenchServer({}, { dialect, cpus: cores });
    try {
      const t = await benchTenant(server.url);
      progress(`durable sends on ${dialect}, the server on core(s) ${cores}`);
      return await sends(server.url, t.key, series);
    } finally {
      await server.stop();
    }
  };
  return { dialect, one: await on('0', 4), two: await on('0,1', 5) };
}

export async function httpCases(): Promise<Result[]> {
  const measured = await onEachDatabase(measure);
  const cells = measured.cells;
  const normal = measured.on('sqlite')?.send.requests.average;
  let full: Figure | string = 'not measured: SQLite was not';
  if (normal !== undefined) {
    try {
      const f = await fullSync();
      full = { text: `${(f.requests.average / normal).toFixed(2)} × NORMAL: ${loadText(f)}`, note: errorsOf(f) };
    } catch (err) {
      full = `failed: ${(err as Error).message}`;
    }
  }
  const scaling = cpus().length < 2 ? null : await onEachDatabase(pinned);
  return [
    {
      case: `no-op route GET /healthz, ${CONNECTIONS} connections`,
      ...cells((m) => ({ text: loadText(m.noop), note: [errorsOf(m.noop), m.noopCpu.text].filter(Boolean).join('; ') })),
    },
    {
      case: `durable REST send POST /sms/v1/messages ÷ no-op route, ${CONNECTIONS} connections`,
      target: `≥ ${TARGET_RATIO}, p99 < ${TARGET_P99_MS} ms`,
      ...cells((m) => {
        const ratio = m.send.requests.average / m.noop.requests.average;
        const bad = errorsOf(m.send);
        const ceiling = boundsText(m.sendCpu, 'send', 'sends', { rate: m.noop.requests.average, name: 'the no-op route' });
        return {
          text: `${ratio.toFixed(2)}: ${loadText(m.send)}`,
          value: m.send.requests.average,
          met: !bad && ratio >= TARGET_RATIO && m.send.latency.p99 < TARGET_P99_MS,
          note: [bad, `RSS ${m.rss} MB`, m.sendCpu.text, ceiling].filter(Boolean).join('; '),
        };
      }),
    },
    {
      case: `durable sends with the server pinned to two cores ÷ pinned to one (taskset; the load generator unpinned)`,
      target: `≥ ${TARGET_TWO_CORES}`,
      ...(scaling === null
        ? { sqlite: 'not measured: this machine has one core', postgres: 'not measured: this machine has one core' }
        : scaling.cells(({ dialect, one, two }) => {
            const ratio = two.requests.average / one.requests.average;
            const unpinned = measured.on(dialect)?.sendCpu;
            const mainThread = unpinned && cpuBounds(unpinned).mainThreadPerSecond;
            const bound = mainThread
              ? `its main thread, at what it spent a send unpinned, bounds it to ${int(mainThread)} sends/s on any number of cores: ${(mainThread / one.requests.average).toFixed(2)} × its rate on one`
              : '';
            const note = [errorsOf(one), errorsOf(two), bound].filter(Boolean).join('; ');
            return {
              text: `${ratio.toFixed(2)}: ${loadText(two)} on two, ${loadText(one)} on one`,
              met: !errorsOf(one) && !errorsOf(two) && ratio >= TARGET_TWO_CORES,
              ...(note !== '' && { note }),
            };
          })),
    },
    {
      case: 'the same sends with TERN_SQLITE_SYNCHRONOUS=FULL (an fsync per commit)',
      sqlite: full,
      postgres: 'SQLite only (PostgreSQL follows its synchronous_commit)',
    },
  ];
}
