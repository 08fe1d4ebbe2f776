/**
 * SMPP case of `npm run bench` (also runnable alone: `node --import tsx bench/smpp.ts`): one transceiver with a
 * window of 100 submits BENCH_SMPP_MESSAGES (50,000) messages asking for receipts to a fresh Tern; it reports
 * submits/s with p50/p99 from submit_sm to submit_sm_resp, and receipts/s as they come back as deliver_sm on the
 * same session. As a baseline, the same client and window against the `smpp` package's own server, which answers
 * every submit_sm at once without doing anything.
 */
import { once } from 'node:events';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import smpp from 'smpp';
import { encodeGsm7 } from '../src/core/domain/text.ts';
import { api as adminApi, printTable, type Row, serverRssMb, startBenchServer } from './support.ts';

const MESSAGES = Number(process.env.BENCH_SMPP_MESSAGES ?? 50_000);
const WINDOW = 100;
const ADMIN_KEY = 'bench-smpp-admin-key-0123456789';
const RECEIPT_WAIT_MS = 600_000;

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
  const resp = await new Promise<smpp.PDU>((resolve) =>
    session.send(new smpp.PDU('bind_transceiver', { system_id: systemId, password }), resolve),
  );
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

async function ternCase(): Promise<Row[]> {
  const server = await startBenchServer({ TERN_ADMIN_KEY: ADMIN_KEY });
  try {
    const org = await api(server.url, 'POST', '/admin/v1/organisations', { name: 'SMPP bench' });
    const channel = await api(server.url, 'POST', `/admin/v1/organisations/${org.organisationId}/channels`, {
      name: 'SMPP bench',
      type: 'SMS',
      flow: 'TRANSACTIONAL',
    });
    await api(server.url, 'POST', `/admin/v1/organisations/${org.organisationId}/credit`, { amount: 1_000_000 });
    await api(server.url, 'POST', `/admin/v1/channels/${channel.channelId}/smpp-credentials`, { systemId: 'bench', password: 'bench' });
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
    const started = performance.now();
    const result = await pump(session, MESSAGES, WINDOW, submitFields(encodeGsm7('Your verification code is 123456.')));
    const submitted = performance.now();
    const accepted = MESSAGES - [...result.errors.values()].reduce((a, n) => a + n, 0);
    const rssAfterSubmits = await serverRssMb(server.url);
    while (receipts < accepted && performance.now() - started < RECEIPT_WAIT_MS) await new Promise((r) => setTimeout(r, 100));
    const s = summary(result, MESSAGES);
    const receiptSpan = (lastReceiptAt - started) / 1000;
    const rows: Row[] = [
      {
        case: `SMPP submit_sm → submit_sm_resp, 1 transceiver, window ${WINDOW}, ${MESSAGES} messages`,
        'req/s': s.rate,
        'p50 ms': s.p50,
        'p99 ms': s.p99,
        'RSS MB': rssAfterSubmits,
        note: `${s.errors}; all answered after ${((submitted - started) / 1000).toFixed(1)} s`,
      },
      {
        case: 'SMPP receipts: deliver_sm to the same transceiver (submit → DELIVERED → receipt)',
        'req/s': receiptSpan > 0 ? Math.round(receipts / receiptSpan) : 0,
        'p50 ms': '-',
        'p99 ms': '-',
        'RSS MB': await serverRssMb(server.url),
        note: `${receipts} of ${accepted} receipts, last one ${receiptSpan.toFixed(1)} s after the first submit (first after ${((firstReceiptAt - started) / 1000).toFixed(1)} s)`,
      },
    ];
    session.close();
    return rows;
  } finally {
    await server.stop();
  }
}

/** The `smpp` package's server answering every submit_sm at once: the codec and loopback ceiling. */
async function baselineCase(): Promise<Row> {
  let ids = 0;
  const createServer = (smpp as unknown as { createServer(listener: (s: smpp.Session) => void): net.Server }).createServer;
  const server = createServer((s) => {
    s.on('error', () => {});
    s.on('bind_transceiver', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('enquire_link', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('unbind', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('submit_sm', (pdu: smpp.PDU) => s.send(pdu.response({ message_id: String(++ids) })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const session = await connectClient(port, 'bench', 'bench');
    const result = await pump(session, MESSAGES, WINDOW, submitFields(encodeGsm7('Your verification code is 123456.')));
    session.close();
    const s = summary(result, MESSAGES);
    return {
      case: `baseline: smpp package client ↔ smpp package server, window ${WINDOW}, ${MESSAGES} submits`,
      'req/s': s.rate,
      'p50 ms': s.p50,
      'p99 ms': s.p99,
      'RSS MB': '-',
      note: `${s.errors}; the server stores nothing`,
    };
  } finally {
    server.close();
  }
}

export async function runSmppBench(): Promise<Array<Record<string, string | number>>> {
  const baseline = await baselineCase();
  const tern = await ternCase();
  return [...tern, baseline];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSmppBench()
    .then((rows) => {
      console.log(`\nTern SMPP benchmark — ${new Date().toISOString()}, node ${process.version}\n`);
      printTable(rows);
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
