/**
 * `npm run bench -- --cluster N` (PostgreSQL only): what a cluster of 1 … N Tern nodes costs per message. For each
 * node count, a fresh schema and that many Tern processes on it, each pinned to a CPU (round-robin over the cores
 * there are), a warm-up load through every node (BENCH_CLUSTER_WARMUP messages each, 2,000: a fresh process runs its
 * first thousands of messages slower, compiling, and that cost must not be charged to the node count), then the e2e
 * load spread over the nodes: BENCH_CLUSTER_MESSAGES REST sends over 64 connections to each node, each done when its
 * signed DELIVERED status webhook reaches the local receiver. The same load per node, whatever their number: with a
 * fixed total instead (BENCH_CLUSTER_CONNECTIONS) each node holds 1/N of the requests in flight, so its group commits
 * are N times smaller and every statement run once per batch costs N times more per message — a figure of the load
 * generator, not of the cluster. Twice from 2 nodes on: one tenant sending
 * through every node, then a tenant per node. Per row: messages a second and p50/p99 from request to webhook,
 * messages per CPU-second (the Tern processes, their PostgreSQL backends, and this process, the load generator and
 * receiver), that figure over the 1-node one (target ≥ 0.85), database statements per message (the nodes'
 * tern_db_statements_total; target: no more than with 1 node), and each node's statements a second once idle.
 * The backends' states are sampled during each load (pg_stat_activity): what they wait on, which locks, and what
 * the backend holding the lock was doing meanwhile.
 * Sizes: BENCH_CLUSTER_MESSAGES (15,000 a row), BENCH_CLUSTER_IDLE (10 s), BENCH_CLUSTER_CONNECTIONS_PER_NODE (64) or
 * BENCH_CLUSTER_CONNECTIONS (in all), BENCH_CLUSTER_CASES (one,per-node). BENCH_NODE_ARGS reaches every node (e.g.
 * `--cpu-prof --cpu-prof-dir=prof`).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { BackendWatch, type LockWait, SAMPLE_MS } from './backends.ts';
import { createSchema, dropSchema, postgresUnavailable, postgresUrl, schemaName, withPostgres } from './databases.ts';
import { describeFailures, drive } from './load.ts';
import { type EndToEnd, endToEnd, startCompletionReceiver } from './receiver.ts';
import { int, ms, type Result } from './report.ts';
import { api, type BenchServer, benchTenant, printTable, processCpuMs, progress, type Row, startBenchServer } from './support.ts';

const MESSAGES = Number(process.env.BENCH_CLUSTER_MESSAGES ?? 15_000);
const WARMUP = Number(process.env.BENCH_CLUSTER_WARMUP ?? 2_000);
const IDLE_S = Number(process.env.BENCH_CLUSTER_IDLE ?? 10);
/**
 * The load's connections: BENCH_CLUSTER_CONNECTIONS_PER_NODE for each node (64: the same load per node whatever their
 * number), or with BENCH_CLUSTER_CONNECTIONS that many in all, spread over the nodes.
 */
const CONNECTIONS = Number(process.env.BENCH_CLUSTER_CONNECTIONS ?? 64);
const CONNECTIONS_PER_NODE = process.env.BENCH_CLUSTER_CONNECTIONS ? null : Number(process.env.BENCH_CLUSTER_CONNECTIONS_PER_NODE ?? 64);
const connectionsFor = (nodes: number) => (CONNECTIONS_PER_NODE === null ? CONNECTIONS : CONNECTIONS_PER_NODE * nodes);
const connectionsText = CONNECTIONS_PER_NODE === null ? `${CONNECTIONS} connections spread over the nodes` : `${CONNECTIONS_PER_NODE} connections to each node`;
const TARGET_EFFICIENCY = 0.85;
/** Statements a message may cost above the 1-node figure before they count as growing with the node count. */
const STATEMENTS_TOLERANCE = 1.05;
/** BENCH_CLUSTER_CASES: `one` (one tenant through every node), `per-node` (a tenant per node), or both (the default). */
const CASES = (process.env.BENCH_CLUSTER_CASES ?? 'one,per-node').split(',').map((c) => c.trim());

interface Node {
  server: BenchServer;
  cpu: string;
}

interface Cluster {
  nodes: Node[];
  /** The application_name prefix of every connection the nodes open (their backends in pg_stat_activity). */
  application: string;
  stop(): Promise<void>;
}

const CORES = availableParallelism();

/** `n` Tern processes on one fresh schema, the first started alone (it creates the tables). */
async function startCluster(n: number): Promise<Cluster> {
  const schema = await createSchema(schemaName('cluster'));
  const nodes: Node[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.server.stop()));
    await dropSchema(schema);
  };
  try {
    for (let i = 0; i < n; i++) {
      const url = new URL(postgresUrl(schema));
      url.searchParams.set('application_name', `${schema}_node${i}`);
      const cpu = String(i % CORES);
      nodes.push({
        server: await startBenchServer({ TERN_WEBHOOK_ALLOW_PRIVATE: 'true' }, { dialect: 'postgres', databaseUrl: url.toString(), cpus: cpu }),
        cpu,
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes, application: schema, stop };
}

async function statementsOf(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^tern_db_statements_total (\d+)/m.exec(text);
  if (!m) throw new Error(`${url}/metrics has no tern_db_statements_total`);
  return Number(m[1]);
}

const statementsOfAll = async (c: Cluster) => Promise.all(c.nodes.map((n) => statementsOf(n.server.url)));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Waits until the nodes run no more than a few statements in half a second: the work of the last load is written. */
async function settle(c: Cluster): Promise<void> {
  let before = sum(await statementsOfAll(c));
  for (let quiet = 0, i = 0; quiet < 2 && i < 40; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = sum(await statementsOfAll(c));
    quiet = now - before <= 5 * c.nodes.length ? quiet + 1 : 0;
    before = now;
  }
}

/**
 * Each node's statements a second with nothing to do. A scrape reads the statement count before its own database
 * reads (OTP and connector figures, cached for 500 ms) run: a second scrape right after the first moves those out of
 * the window, and the one at its end reads before its own.
 */
async function idleStatementsPerSecond(c: Cluster): Promise<number[]> {
  await statementsOfAll(c);
  const start = await statementsOfAll(c);
  const began = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const end = await statementsOfAll(c);
  const seconds = (performance.now() - began) / 1000;
  return end.map((e, i) => (e - start[i]!) / seconds);
}

interface Tenant {
  key: string;
  signed: Webhook;
}

async function tenant(url: string): Promise<Tenant> {
  const t = await benchTenant(url);
  const { secret } = await api(url, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, t.key);
  return { key: t.key, signed: new Webhook(secret) };
}

interface CaseRun extends EndToEnd {
  nodes: number;
  tenants: 'one tenant' | 'a tenant per node';
  cpu: { tern: number; postgres: number; load: number };
  /** Messages per CPU-second, everything counted. */
  perCpuSecond: number;
  statementsPerMessage: number;
  states: Array<[string, number]>;
  holders: LockWait[];
  note: string;
}

/** The e2e load over every node of the cluster; `tenants[o]` sends what goes to node o (one tenant: the same one). */
async function runCase(c: Cluster, watch: BackendWatch, tenants: Tenant[], label: CaseRun['tenants'], series: number, total = MESSAGES): Promise<CaseRun> {
  const n = c.nodes.length;
  const receiver = await startCompletionReceiver(total, (cb) => {
    const t = tenants[Number(cb.query.get('t'))];
    if (!t) return 'refused';
    let payload: { status?: { value?: string } };
    try {
      payload = t.signed.verify(cb.body, {
        'webhook-id': String(cb.headers['webhook-id']),
        'webhook-timestamp': String(cb.headers['webhook-timestamp']),
        'webhook-signature': String(cb.headers['webhook-signature']),
      }) as typeof payload;
    } catch {
      return 'refused';
    }
    return payload.status?.value === 'DELIVERED' ? 'done' : 'other';
  });
  try {
    progress(`cluster of ${n}, ${label}: ${total} messages${total === MESSAGES ? '' : ' (warm-up)'}, REST → DELIVERED → signed status webhook`);
    const pids = c.nodes.map((node) => node.server.process.pid);
    const ternBefore = pids.map((pid) => processCpuMs(pid) ?? 0);
    const statementsBefore = sum(await statementsOfAll(c));
    await watch.begin();
    const loadBefore = process.cpuUsage();
    const began = performance.now();
    const load = await drive(
      c.nodes.map((node) => node.server.url),
      {
        total,
        connections: connectionsFor(n),
        request: (i, o) => {
          const t = tenants.length === 1 ? 0 : o;
          return {
            method: 'POST',
            path: '/sms/v1/messages',
            headers: { 'x-api-key': tenants[t]!.key, 'content-type': 'application/json' },
            body: JSON.stringify({
              // French mobile numbers ending in 5 (series 0–8: +3369… is not a mobile range): the simulator delivers all of them.
              recipient: { to: `336${series}${String(i % 1_000_000).padStart(6, '0')}5` },
              body: { text: 'Your verification code is 123456.' },
              callbackUrlStatus: `${receiver.url}/status?n=${i}&t=${t}`,
            }),
          };
        },
      },
    );
    if (load.ok === 0) throw new Error(`no send accepted: ${describeFailures(load.failures)}`);
    await receiver.waitAll();
    await settle(c);
    const loadCpu = process.cpuUsage(loadBefore);
    const wallSeconds = (performance.now() - began) / 1000;
    const { cpuMs: postgresMs, states, holders } = await watch.end();
    const statements = sum(await statementsOfAll(c)) - statementsBefore;
    const ternMs = sum(pids.map((pid, i) => (processCpuMs(pid) ?? 0) - ternBefore[i]!));
    const cpu = { tern: ternMs / 1000, postgres: postgresMs / 1000, load: (loadCpu.user + loadCpu.system) / 1e6 };
    const e = endToEnd(load.startedAt, receiver.doneAt);
    const refused = load.failures.size > 0 ? `; sends refused: ${describeFailures(load.failures)}` : '';
    const bad = receiver.refused > 0 ? `; ${receiver.refused} webhooks refused (bad signature)` : '';
    return {
      ...e,
      nodes: n,
      tenants: label,
      cpu,
      perCpuSecond: e.done / (cpu.tern + cpu.postgres + cpu.load),
      statementsPerMessage: e.done > 0 ? statements / e.done : 0,
      states,
      holders,
      note: `${e.done} of ${load.ok} DELIVERED; CPU s: Tern ${cpu.tern.toFixed(1)}, PostgreSQL backends ${cpu.postgres.toFixed(1)}, load generator ${cpu.load.toFixed(1)} (${((cpu.tern + cpu.postgres + cpu.load) / wallSeconds).toFixed(2)} of ${CORES} cores)${refused}${bad}`,
    };
  } finally {
    await receiver.close();
  }
}

interface NodeCountRun {
  nodes: number;
  cpus: string[];
  cases: CaseRun[];
  idle: number[];
}

async function runNodeCount(n: number, client: pg.Client): Promise<NodeCountRun> {
  progress(`cluster of ${n}: starting ${n} Tern process${n === 1 ? '' : 'es'} on a fresh schema`);
  const c = await startCluster(n);
  try {
    const watch = new BackendWatch(client, c.application);
    const first = c.nodes[0]!.server.url;
    const cases: CaseRun[] = [];
    if (WARMUP > 0) await runCase(c, watch, [await tenant(first)], 'one tenant', 8, WARMUP * n);
    if (n === 1 || CASES.includes('one')) cases.push(await runCase(c, watch, [await tenant(first)], 'one tenant', 1));
    if (n > 1 && CASES.includes('per-node')) {
      const perNode: Tenant[] = [];
      for (let i = 0; i < n; i++) perNode.push(await tenant(first));
      cases.push(await runCase(c, watch, perNode, 'a tenant per node', 2));
    }
    progress(`cluster of ${n}: idle for ${IDLE_S} s`);
    const idle = await idleStatementsPerSecond(c);
    return { nodes: n, cpus: c.nodes.map((node) => node.cpu), cases, idle };
  } finally {
    await c.stop();
  }
}

const statesText = (states: Array<[string, number]>, top = 6) =>
  states
    .filter(([, mean]) => mean >= 0.05)
    .slice(0, top)
    .map(([s, mean]) => `${s} ${mean.toFixed(1)}`)
    .join(', ');

/** The locks most waited on, each with the share of the waits by what the holder was doing (and its main details). */
const lockWaitsText = (waits: LockWait[]) =>
  waits
    .filter((w) => w.mean >= 0.05)
    .slice(0, 2)
    .map((w) => {
      const byState = new Map<string, Array<[string, number]>>();
      for (const [key, mean] of w.holders) {
        const [state, detail] = key.split('|') as [string, string];
        byState.set(state, [...(byState.get(state) ?? []), [detail, mean]]);
      }
      const pct = (mean: number) => `${Math.round((100 * mean) / w.mean)}%`;
      const shares = [...byState]
        .map(([state, details]) => ({ state, details, mean: sum(details.map(([, m]) => m)) }))
        .sort((a, b) => b.mean - a.mean)
        .slice(0, 3)
        .map(({ state, details, mean }) => {
          const top = details
            .filter(([d]) => d !== '')
            .slice(0, 2)
            .map(([d, m]) => `${d} ${pct(m)}`);
          return `${state} ${pct(mean)}${top.length > 0 ? ` (${top.join(', ')})` : ''}`;
        })
        .join(', ');
      return `${w.statement} (${w.mean.toFixed(1)} waiting): holder ${shares}`;
    })
    .join('; ');

function detailRows(runs: NodeCountRun[]): { table: Row[]; waits: Row[] } {
  const base = runs[0]?.cases[0];
  const table: Row[] = [];
  const waits: Row[] = [];
  for (const r of runs) {
    const idle = r.idle.map((x) => x.toFixed(1)).join(' / ');
    for (const k of r.cases) {
      const efficiency = base ? k.perCpuSecond / base.perCpuSecond : 0;
      const isBase = k === base;
      const complete = k.done === MESSAGES;
      table.push({
        case: `${k.nodes} node${k.nodes === 1 ? '' : 's'}, ${k.tenants}`,
        nodes: k.nodes,
        'msg/s': int(k.rate),
        p50: ms(k.p50),
        p99: ms(k.p99),
        'msg/CPU-s': int(k.perCpuSecond),
        efficiency: efficiency.toFixed(2),
        effMet: isBase ? '' : complete && efficiency >= TARGET_EFFICIENCY ? 'yes' : 'NO',
        statements: k.statementsPerMessage.toFixed(2),
        stmtMet: isBase || !base ? '' : k.statementsPerMessage <= base.statementsPerMessage * STATEMENTS_TOLERANCE ? 'yes' : 'NO',
        idle: k === r.cases[0] ? idle : '',
        note: `${k.note}; nodes on CPUs ${r.cpus.join(', ')}`,
      });
      waits.push({ case: `${k.nodes} node${k.nodes === 1 ? '' : 's'}, ${k.tenants}`, states: statesText(k.states), holders: lockWaitsText(k.holders) });
    }
  }
  return { table, waits };
}

export interface ClusterBench {
  results: Result[];
  /** Prints the cluster's own table (a column per figure) and where the backends were during each load. */
  print(): void;
}

export async function runClusterBench(maxNodes: number): Promise<ClusterBench> {
  const why = await postgresUnavailable();
  const sqlite = 'PostgreSQL only (nodes share one database)';
  if (why !== null) {
    progress(`cluster: skipped, PostgreSQL ${why}`);
    return { results: [{ case: `cluster of 1 … ${maxNodes} nodes`, sqlite, postgres: why }], print: () => {} };
  }
  const runs: NodeCountRun[] = [];
  await withPostgres(async (client) => {
    for (let n = 1; n <= maxNodes; n++) runs.push(await runNodeCount(n, client));
  });
  const { table, waits } = detailRows(runs);
  const base = runs[0]!.cases[0]!;
  const results: Result[] = runs.flatMap((r) =>
    r.cases.map((k): Result => {
      const efficiency = k.perCpuSecond / base.perCpuSecond;
      const growing = k.statementsPerMessage > base.statementsPerMessage * STATEMENTS_TOLERANCE;
      const text = `${int(k.rate)} msg/s, p50 ${ms(k.p50)} ms, p99 ${ms(k.p99)} ms, ${int(k.perCpuSecond)} msg/CPU-s, ${k.statementsPerMessage.toFixed(2)} statements/msg`;
      return {
        case: `cluster: ${k.nodes} node${k.nodes === 1 ? '' : 's'}, ${k.tenants}, ${MESSAGES} messages e2e`,
        ...(k !== base && { target: `efficiency ≥ ${TARGET_EFFICIENCY}, statements/msg ≤ 1 node's` }),
        sqlite,
        postgres:
          k === base
            ? { text: `${text} (the baseline)`, value: k.rate, note: k.note }
            : {
                text: `efficiency ${efficiency.toFixed(2)}: ${text}`,
                value: k.rate,
                met: k.done === MESSAGES && efficiency >= TARGET_EFFICIENCY && !growing,
                note: k.note,
              },
      };
    }),
  );
  const pinning =
    CORES >= maxNodes
      ? `each node pinned to a core of its own (taskset -c)`
      : `${CORES} cores for up to ${maxNodes} nodes: nodes pinned round-robin to cores (taskset -c), so some share one; PostgreSQL and the load generator not pinned`;
  return {
    results,
    print() {
      console.log(`\nCluster on PostgreSQL: ${MESSAGES} messages a row over ${connectionsText}; ${pinning}.`);
      console.log(
        `CPU = Tern processes + their PostgreSQL backends + the load generator (and webhook receiver). Efficiency = msg/CPU-s ÷ 1 node's (target ≥ ${TARGET_EFFICIENCY}).`,
      );
      console.log(
        `Statements = tern_db_statements_total of all nodes ÷ messages (target: ≤ 1 node's × ${STATEMENTS_TOLERANCE}); idle = each node's statements/s over ${IDLE_S} s after the loads.\n`,
      );
      printTable(table, {
        p50: 'p50 ms',
        p99: 'p99 ms',
        efficiency: `efficiency (≥ ${TARGET_EFFICIENCY})`,
        effMet: 'met?',
        statements: 'statements/msg',
        stmtMet: 'met?',
        idle: 'idle statements/s per node',
      });
      console.log(
        `\nPostgreSQL backends of the nodes during each load, sampled every ${SAMPLE_MS} ms: mean number of backends in each state (lock waits by the statement`,
      );
      console.log(`waiting), and the locks most waited on, with what the backend holding the lock was doing meanwhile (share of the waits).\n`);
      printTable(waits, { states: 'backends: state mean', holders: 'lock waits: what the holder was doing' });
    },
  };
}
