/**
 * End to end (`npm run bench e2e`): BENCH_E2E_MESSAGES (50,000) REST sends over 64 connections, each with a
 * callbackUrlStatus on a local receiver that verifies every Standard Webhooks signature with the channel's secret;
 * a message is done when its DELIVERED status webhook arrives. Messages a second from the first request to the last
 * webhook, p50/p99 of each message's request → webhook time. Twice: through the embedded simulator at zero latency
 * (which keeps what it received in Tern's database, as a network would in its own), and like for like with Kannel,
 * through one SMPP connection (window 100) to the same kind of SMSC as Kannel's, in the load generator's process.
 * The anchor, measured in the same run with the same load: Kannel from sendsms to its DLR call (kannel.ts).
 */
import { cpus } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { type CpuSpent, cpuMeter } from './cpu.ts';
import type { Dialect } from './databases.ts';
import { kannelMissing, type KannelRun, runKannel, SMSC_WINDOW, startSmsc } from './kannel.ts';
import { describeFailures, drive } from './load.ts';
import { type EndToEnd, endToEnd, startCompletionReceiver } from './receiver.ts';
import { type Cell, type Figure, int, ms, NO_DATABASE, onEachDatabase, type Result } from './report.ts';
import { api, BENCH_ADMIN_KEY, benchTenant, progress, serverRssMb, startBenchServer } from './support.ts';

const MESSAGES = Number(process.env.BENCH_E2E_MESSAGES ?? 50_000);
const CONNECTIONS = 64;
const TARGET_TIMES_KANNEL = 1;
/** Tern's CPU a message (the server, and PostgreSQL's on PostgreSQL) ÷ Kannel's, end to end, at most. */
const TARGET_CPU_TIMES_KANNEL = 1.3;

interface TernRun extends EndToEnd {
  dialect: Dialect;
  note: string;
  cpu: CpuSpent;
}

type Operator = 'simulator' | 'smsc';

/** Routes every French number through one SMPP connection to `port`, and waits until the route can use it. */
async function routeToSmsc(url: string, port: number): Promise<void> {
  await api(url, 'POST', '/admin/v1/connectors', BENCH_ADMIN_KEY, {
    name: 'smsc',
    type: 'SMPP',
    host: '127.0.0.1',
    port,
    systemId: 'bench',
    password: 'bench',
    binds: 1,
    window: SMSC_WINDOW,
  });
  await api(url, 'POST', '/admin/v1/routes', BENCH_ADMIN_KEY, {
    name: 'all via the SMSC',
    priority: 1,
    match: { prefix: '33' },
    connectors: [{ connector: 'smsc' }],
  });
  for (let i = 0; ; i++) {
    const r = await api(url, 'POST', '/admin/v1/routes/test', BENCH_ADMIN_KEY, { to: '33650000005' });
    if (r.candidates?.[0]?.name === 'smsc') return;
    if (i > 150) throw new Error('the SMPP connection to the SMSC did not come up');
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function ternEndToEnd(dialect: Dialect, operator: Operator): Promise<TernRun> {
  // As many webhook requests at once to the receiver as the load keeps sends in flight.
  const server = await startBenchServer({ TERN_WEBHOOK_ALLOW_PRIVATE: 'true', TERN_WEBHOOK_CONNECTIONS: String(CONNECTIONS) }, { dialect });
  const smsc = operator === 'smsc' ? await startSmsc() : null;
  try {
    if (smsc) await routeToSmsc(server.url, smsc.port);
    const t = await benchTenant(server.url);
    const { secret } = await api(server.url, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, t.key);
    const signed = new Webhook(secret);
    const receiver = await startCompletionReceiver(MESSAGES, (c) => {
      let payload: { status?: { value?: string } };
      try {
        payload = signed.verify(c.body, {
          'webhook-id': String(c.headers['webhook-id']),
          'webhook-timestamp': String(c.headers['webhook-timestamp']),
          'webhook-signature': String(c.headers['webhook-signature']),
        }) as typeof payload;
      } catch {
        return 'refused';
      }
      return payload.status?.value === 'DELIVERED' ? 'done' : 'other';
    });
    try {
      progress(
        `Tern end to end on ${dialect} through the ${operator === 'smsc' ? 'SMSC over SMPP' : 'simulator'}: ${MESSAGES} messages, REST → DELIVERED → signed status webhook`,
      );
      const cpu = cpuMeter({ server: [server.process.pid] }, { postgres: dialect === 'postgres' });
      const load = await drive(server.url, {
        total: MESSAGES,
        connections: CONNECTIONS,
        request: (i) => ({
          method: 'POST',
          path: '/sms/v1/messages',
          headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
          body: JSON.stringify({
            // French mobile numbers ending in 5: the simulator delivers all of them.
            recipient: { to: `336${50_000_005 + (i % 1_000_000) * 10}` },
            body: { text: 'Your verification code is 123456.' },
            callbackUrlStatus: `${receiver.url}/status?n=${i}`,
          }),
        }),
      });
      if (load.ok === 0) throw new Error(`no send accepted: ${describeFailures(load.failures)}`);
      await receiver.waitAll();
      const e = endToEnd(load.startedAt, receiver.doneAt);
      const spent = cpu.stop(e.done);
      const refused = load.failures.size > 0 ? `; sends refused: ${describeFailures(load.failures)}` : '';
      const badSignatures = receiver.refused > 0 ? `; ${receiver.refused} webhooks with a bad signature` : '';
      return {
        ...e,
        dialect,
        note: `accepting took ${(load.elapsedMs / 1000).toFixed(1)} s; ${e.done} of ${load.ok} DELIVERED webhooks (${receiver.callbacks} webhooks in all), RSS ${await serverRssMb(server.url)} MB${refused}${badSignatures}; ${spent.text}`,
        cpu: spent,
      };
    } finally {
      await receiver.close();
    }
  } finally {
    await server.stop();
    smsc?.close();
  }
}

/**
 * What the target leaves the server on this machine: at the target's multiple of Kannel's rate, the CPU a message that every core can give,
 * less what the bench's own process and the database spent a message in this run.
 */
function targetBudget(cpu: CpuSpent, anchor: number): string {
  const target = TARGET_TIMES_KANNEL * anchor;
  const machineMs = (cpus().length * 1000) / target;
  const others = cpu.perUnit.filter((p) => p.name !== 'server');
  const left = machineMs - others.reduce((sum, p) => sum + p.ms, 0);
  const spent = others.map((p) => p.name).join(' and ');
  return `at ${int(target)} msg/s the ${cpus().length} cores give ${machineMs.toFixed(3)} ms a message in all, ${
    left > 0 ? `${left.toFixed(3)} ms of it left to the server after ${spent}` : `${spent} alone spent more`
  }`;
}

const rateText = (e: EndToEnd) => `${int(e.rate)} msg/s, p50 ${ms(e.p50)} ms, p99 ${ms(e.p99)} ms`;

export async function runEndToEndBench(): Promise<Result[]> {
  const missing = kannelMissing();
  let kannel: KannelRun | string = missing ?? '';
  if (!missing) {
    try {
      kannel = await runKannel(MESSAGES, CONNECTIONS);
    } catch (err) {
      console.error('bench: Kannel failed:', err);
      kannel = `failed: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  const anchor = typeof kannel === 'string' || kannel.rate === 0 ? null : kannel.rate;
  const simulatorRuns = await onEachDatabase((dialect) => ternEndToEnd(dialect, 'simulator'));
  const smscRuns = await onEachDatabase((dialect) => ternEndToEnd(dialect, 'smsc'));
  const { cells } = simulatorRuns;
  const { cells: smscCells } = smscRuns;
  const tern = (r: TernRun): Figure => {
    const complete = r.done === MESSAGES;
    if (anchor === null) {
      return {
        text: `${rateText(r)} (no ratio: ${typeof kannel === 'string' ? 'no Kannel figure' : 'Kannel delivered nothing'})`,
        value: r.rate,
        note: r.note,
      };
    }
    const ratio = r.rate / anchor;
    return {
      text: `${ratio.toFixed(2)} × Kannel: ${rateText(r)}`,
      value: r.rate,
      met: complete && ratio >= TARGET_TIMES_KANNEL,
      note: `${r.note}; ${targetBudget(r.cpu, anchor)}`,
    };
  };
  return [
    {
      case: `end to end: REST send → DELIVERED → signed status webhook verified, ${MESSAGES} messages, ${CONNECTIONS} connections (and TERN_WEBHOOK_CONNECTIONS=${CONNECTIONS})`,
      target: `≥ ${TARGET_TIMES_KANNEL} × Kannel`,
      ...cells(tern),
    },
    {
      case: `the same like for like with Kannel: through one SMPP connection (window ${SMSC_WINDOW}) to the same kind of SMSC as Kannel's, instead of the simulator`,
      target: `≥ ${TARGET_TIMES_KANNEL} × Kannel`,
      ...smscCells(tern),
    },
    {
      case: `Tern's CPU a message ÷ Kannel's, end to end (the server's every thread, and PostgreSQL's; Tern also commits, signs and stores every step)`,
      target: `≤ ${TARGET_CPU_TIMES_KANNEL}`,
      ...smscCells((smsc) => cpuRatio(simulatorRuns.on(smsc.dialect), smsc, kannel)),
    },
    {
      case: `anchor: Kannel sendsms → SMPP (smpp package SMSC) → DLR to dlr-url, same load`,
      sqlite: typeof kannel === 'string' ? kannel : { text: rateText(kannel), note: kannel.note },
      postgres: NO_DATABASE,
    },
  ];
}

/** Tern's CPU a message in the server (every thread) and, on PostgreSQL, the database's. */
const ternCpuMs = (r: TernRun) => r.cpu.perUnit.filter((p) => p.name === 'server' || p.name === 'PostgreSQL').reduce((sum, p) => sum + p.ms, 0);

/** The CPU row's cell on one database: both of Tern's end-to-end runs against Kannel's, the like-for-like one judged. */
function cpuRatio(simulator: TernRun | undefined, smsc: TernRun, kannel: KannelRun | string): Cell {
  if (typeof kannel === 'string' || kannel.cpuMs === 0) return `no Kannel figure${typeof kannel === 'string' ? `: ${kannel}` : ''}`;
  const ratio = (r: TernRun) => ternCpuMs(r) / kannel.cpuMs;
  const viaSimulator = simulator === undefined ? '' : `; through the simulator ${ratio(simulator).toFixed(2)} (${ternCpuMs(simulator).toFixed(3)} ms)`;
  return {
    text: `${ratio(smsc).toFixed(2)}: ${ternCpuMs(smsc).toFixed(3)} ms a message through the SMSC, Kannel ${kannel.cpuMs.toFixed(3)} ms${viaSimulator}`,
    met: ratio(smsc) <= TARGET_CPU_TIMES_KANNEL,
  };
}
