/**
 * SMPP cases of `npm run bench` (`npm run bench smpp`, or `node --import tsx bench/smpp.ts` alone). On each database,
 * Tern is started on a database already holding BENCH_RSS_STORED_MESSAGES (1,000,000) messages (fill.ts) and a
 * credential whose deliver_sm window is 100, as its client's; one transceiver with a window of 100 submits BENCH_SMPP_MESSAGES (50,000) messages asking for receipts: submits/s with
 * p50/p99 from submit_sm to submit_sm_resp, receipts/s as they come back as deliver_sm on the same session, and the
 * server's CPU time per message from the first submit to the last receipt (every thread). Then
 * the server is left idle BENCH_IDLE_SECONDS (600) and its resident memory read at the start and the end of it.
 * As a baseline, the same client and window against the `smpp` package's own server, which answers every
 * submit_sm at once without doing anything.
 */
import { once } from 'node:events';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import smpp from 'smpp';
import { encodeGsm7 } from '../src/domain/text.ts';
import type { Dialect } from './databases.ts';
import { freshFill } from './fill.ts';
import { type Figure, int, ms, NO_DATABASE, onEachDatabase, printResults, type Result } from './report.ts';
import { boundsText, type CpuSpent, cpuMeter } from './cpu.ts';
import { api as adminApi, processRssMb, progress, serverRssMb, startBenchServer } from './support.ts';

const MESSAGES = Number(process.env.BENCH_SMPP_MESSAGES ?? 50_000);
const STORED = Number(process.env.BENCH_RSS_STORED_MESSAGES ?? 1_000_000);
const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 600);
const WINDOW = 100;
const ADMIN_KEY = 'bench-smpp-admin-key-0123456789';
const RECEIPT_WAIT_MS = 600_000;
const TARGET_SUBMIT_RATIO = 0.25;
const TARGET_RECEIPT_RATIO = 0.9;
const TARGET_RSS_MB = 300;
/** Flat: the resident memory at the end of the idle time is at most this much above the start. */
const FLAT_GROWTH = 0.05;

interface PumpResult {
  elapsedMs: number;
  latencies: Float64Array;
  errors: Map<number, number>;
}

/** Keeps `window` submit_sm in flight until `total` were answered. */
function pump(session: smpp.Session, total: number, window: number, fields: (i: number) => Record<string, unknown>): Promise<PumpResult> {
  return new Promise((resolve) => {
    const latencies = new Float64Array(total);
    const errors = new Map<number, number>();
    let sent = 0;
    let done = 0;
    const started = performance.now();
    const sendOne = (): void => {
      const i = sent++;
      const t0 = performance.now();
      session.send(new smpp.PDU('submit_sm', fields(i)), (resp) => {
        latencies[i] = performance.now() - t0;
        if (resp.command_status !== 0) errors.set(resp.command_status, (errors.get(resp.command_status) ?? 0) + 1);
        done++;
        if (sent < total) sendOne();
        else if (done === total) resolve({ elapsedMs: performance.now() - started, latencies, errors });
      });
    };
    for (let k = 0; k < window && sent < total; k++) sendOne();
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(r: PumpResult, total: number) {
  const sorted = Float64Array.from(r.latencies).sort();
  return {
    rate: Math.round((total / r.elapsedMs) * 1000),
    p50: Number(percentile(sorted, 50).toFixed(2)),
    p99: Number(percentile(sorted, 99).toFixed(2)),
    errors: [...r.errors].map(([s, n]) => `${n}× 0x${s.toString(16)}`).join(', ') || 'no errors',
  };
}

async function connectClient(port: number, systemId: string, password: string): Promise<smpp.Session> {
  const session = smpp.connect({ host: '127.0.0.1', port });
  session.on('error', (err: Error) => console.error('smpp client:', err.message));
  session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
  session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response()));
  await once(session, 'connect');
  const resp = await new Promise<smpp.PDU>((resolve) => session.send(new smpp.PDU('bind_transceiver', { system_id: systemId, password }), resolve));
  if (resp.command_status !== 0) throw new Error(`bind refused: 0x${resp.command_status.toString(16)}`);
  return session;
}

const api = (url: string, method: string, path: string, body?: unknown) => adminApi(url, method, path, ADMIN_KEY, body);

// Numbers ending in 5: the simulator gives DELIVERED to all of them (0001–0004 are its failure and silence cases).
const submitFields = (text: Buffer) => (i: number) => ({
  source_addr: 'BENCH',
  destination_addr: `336${String(30_000_005 + i * 10)}`,
  data_coding: 0,
  registered_delivery: 1,
  short_message: text,
});

interface TernSmpp {
  submit: ReturnType<typeof summary>;
  submitMs: number;
  accepted: number;
  receipts: number;
  receiptRate: number;
  firstReceiptS: number;
  lastReceiptS: number;
  rssAfterSubmits: number;
  /** CPU from the first submit to the last receipt, per accepted message: the server's (every thread), the client's. */
  cpu: CpuSpent;
  idle: { startMb: number; endMb: number; maxMb: number; seconds: number };
}

async function ternCase(dialect: Dialect): Promise<TernSmpp> {
  const filled = await freshFill(dialect, STORED);
  try {
    // The same window both ways: Tern keeps as many deliver_sm in flight to the client as the client keeps submits.
    const server = await startBenchServer({ TERN_ADMIN_KEY: ADMIN_KEY, TERN_RETENTION_DAYS: '36500' }, { dialect, databaseUrl: filled.databaseUrl });
    try {
      return await submitAndIdle(server, dialect);
    } finally {
      await server.stop();
    }
  } finally {
    await filled.discard();
  }
}

async function submitAndIdle(server: Awaited<ReturnType<typeof startBenchServer>>, dialect: Dialect): Promise<TernSmpp> {
  const org = await api(server.url, 'POST', '/admin/v1/organisations', { name: 'SMPP bench' });
  const channel = await api(server.url, 'POST', `/admin/v1/organisations/${org.organisationId}/channels`, {
    name: 'SMPP bench',
    type: 'SMS',
    flow: 'TRANSACTIONAL',
  });
  await api(server.url, 'POST', `/admin/v1/organisations/${org.organisationId}/credit`, { amount: 1_000_000 });
  await api(server.url, 'POST', `/admin/v1/channels/${channel.channelId}/smpp-credentials`, { systemId: 'bench', password: 'bench', window: WINDOW });
  const session = await connectClient(server.smppPort, 'bench', 'bench');
  let receipts = 0;
  let firstReceiptAt = 0;
  let lastReceiptAt = 0;
  session.on('deliver_sm', (pdu: smpp.PDU) => {
    session.send(pdu.response());
    if ((Number(pdu['esm_class']) & 0x04) === 0) return;
    const now = performance.now();
    if (receipts === 0) firstReceiptAt = now;
    lastReceiptAt = now;
    receipts++;
  });
  progress(`SMPP on ${dialect}: ${MESSAGES} submits, window ${WINDOW}, ${STORED.toLocaleString('en-US')} messages stored`);
  const meter = cpuMeter({ server: [server.process.pid] }, { postgres: dialect === 'postgres' });
  const started = performance.now();
  const result = await pump(session, MESSAGES, WINDOW, submitFields(encodeGsm7('Your verification code is 123456.')));
  const accepted = MESSAGES - [...result.errors.values()].reduce((a, n) => a + n, 0);
  const rssAfterSubmits = await serverRssMb(server.url);
  while (receipts < accepted && performance.now() - started < RECEIPT_WAIT_MS) await new Promise((r) => setTimeout(r, 100));
  const cpu = meter.stop(accepted);
  await new Promise<void>((resolve) => session.close(() => resolve()));
  const receiptSpan = (lastReceiptAt - started) / 1000;

  progress(`idle for ${IDLE_S} s on ${dialect}`);
  const rss = () => processRssMb(server.process.pid) ?? 0;
  const startMb = rss();
  let maxMb = startMb;
  const idleStart = performance.now();
  while (performance.now() - idleStart < IDLE_S * 1000) {
    await new Promise((r) => setTimeout(r, Math.min(5_000, IDLE_S * 1000 - (performance.now() - idleStart))));
    maxMb = Math.max(maxMb, rss());
  }
  const endMb = rss();
  return {
    submit: summary(result, MESSAGES),
    submitMs: result.elapsedMs,
    accepted,
    receipts,
    receiptRate: receiptSpan > 0 ? receipts / receiptSpan : 0,
    firstReceiptS: (firstReceiptAt - started) / 1000,
    lastReceiptS: receiptSpan,
    rssAfterSubmits,
    cpu,
    idle: { startMb, endMb, maxMb: Math.max(maxMb, endMb), seconds: IDLE_S },
  };
}

/** The `smpp` package's server answering every submit_sm at once: the codec and loopback ceiling. */
async function baselineCase(): Promise<{ submit: ReturnType<typeof summary>; cpu: CpuSpent }> {
  let ids = 0;
  const server = smpp.createServer({}, (s) => {
    s.on('error', () => {});
    s.on('bind_transceiver', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('enquire_link', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('unbind', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('submit_sm', (pdu: smpp.PDU) => s.send(pdu.response({ message_id: String(++ids) })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    progress(`SMPP baseline: smpp package client ↔ server, ${MESSAGES} submits`);
    const session = await connectClient(port, 'bench', 'bench');
    const meter = cpuMeter({});
    const result = await pump(session, MESSAGES, WINDOW, submitFields(encodeGsm7('Your verification code is 123456.')));
    const cpu = meter.stop(MESSAGES, 'submit');
    session.close();
    return { submit: summary(result, MESSAGES), cpu };
  } finally {
    server.close();
  }
}

const submitText = (s: ReturnType<typeof summary>) => `${int(s.rate)} submits/s, p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms`;

export async function runSmppBench(): Promise<Result[]> {
  const baseline = await baselineCase();
  const { cells } = await onEachDatabase(ternCase);
  const stored = STORED.toLocaleString('en-US');
  const idleFigure = (t: TernSmpp): Figure => {
    const { startMb, endMb, maxMb, seconds } = t.idle;
    const flat = endMb <= startMb * (1 + FLAT_GROWTH);
    const shortened = seconds < 600 ? `; idle ${seconds} s instead of 600 s` : '';
    return {
      text: `${startMb} MB at the start of idle → ${endMb} MB after ${seconds} s (max ${maxMb} MB)`,
      met: maxMb < TARGET_RSS_MB && flat,
      note: `${flat ? 'flat' : 'grew'} (≤ ${FLAT_GROWTH * 100} % counts as flat)${shortened}`,
    };
  };
  return [
    {
      case: `SMPP submit_sm ÷ smpp package loopback, 1 transceiver, window ${WINDOW} (and a credential window of ${WINDOW} for deliver_sm), ${MESSAGES} messages, ${stored} stored`,
      target: `≥ ${TARGET_SUBMIT_RATIO}`,
      ...cells((t) => {
        const ratio = t.submit.rate / baseline.submit.rate;
        return {
          text: `${ratio.toFixed(2)}: ${submitText(t.submit)}`,
          value: t.submit.rate,
          met: t.accepted === MESSAGES && ratio >= TARGET_SUBMIT_RATIO,
          note: `${t.submit.errors}; all answered after ${(t.submitMs / 1000).toFixed(1)} s, RSS ${t.rssAfterSubmits} MB; submit to receipt ${t.cpu.text}; ${boundsText(t.cpu, 'message', 'submits', { rate: baseline.submit.rate, name: 'the loopback' })}`,
        };
      }),
    },
    {
      case: 'SMPP receipts (deliver_sm on the same transceiver) ÷ submits',
      target: `≥ ${TARGET_RECEIPT_RATIO}`,
      ...cells((t) => {
        const ratio = t.receiptRate / t.submit.rate;
        return {
          text: `${ratio.toFixed(2)}: ${int(t.receiptRate)} receipts/s`,
          value: t.receiptRate,
          met: t.receipts === t.accepted && ratio >= TARGET_RECEIPT_RATIO,
          note: `${t.receipts} of ${t.accepted} receipts, first after ${t.firstReceiptS.toFixed(1)} s, last after ${t.lastReceiptS.toFixed(1)} s`,
        };
      }),
    },
    {
      case: `baseline: smpp package client ↔ smpp package server, window ${WINDOW}, ${MESSAGES} submits`,
      sqlite: { text: submitText(baseline.submit), note: `${baseline.submit.errors}; the server stores nothing; ${baseline.cpu.text} (client and server)` },
      postgres: NO_DATABASE,
    },
    {
      case: `server RSS after the SMPP case, ${stored} messages stored, then idle`,
      target: `< ${TARGET_RSS_MB} MB and flat over 10 min`,
      ...cells(idleFigure),
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSmppBench()
    .then((results) => {
      console.log(`\nTern SMPP benchmark — ${new Date().toISOString()}, node ${process.version}\n`);
      printResults(results);
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
