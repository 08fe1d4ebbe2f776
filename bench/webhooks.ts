/**
 * `npm run bench webhooks`: status webhooks to a receiver that answers, while another receiver, which never answers,
 * is BENCH_WEBHOOK_BACKLOG (30,000) deliveries behind. First that backlog: as many sends with a status callback to the
 * silent receiver, until none is still ENROUTE (every webhook written). Then BENCH_WEBHOOK_MESSAGES (4,000) sends at
 * BENCH_WEBHOOK_RATE (200) a second, every other one to each receiver (the silent one's keep coming, as a customer
 * with a slow endpoint keeps sending): each request → webhook time at the answering receiver, and the server's CPU
 * a message over that phase, where the claims that leave the silent receiver out are what the backlog can cost.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dialect } from './databases.ts';
import { describeFailures, drive } from './load.ts';
import { endToEnd, startCompletionReceiver } from './receiver.ts';
import { ms, onEachDatabase, type Result } from './report.ts';
import { api, benchTenant, processCpuMs, progress, startBenchServer } from './support.ts';

const BACKLOG = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 30_000);
const MESSAGES = Number(process.env.BENCH_WEBHOOK_MESSAGES ?? 4_000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 200);
/** The sends whose webhooks go to the answering receiver: every other one. */
const ANSWERED = Math.ceil(MESSAGES / 2);

/** A receiver that takes every request and never answers. */
async function silentReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const smsTo = (i: number) => `336${60_000_005 + (i % 1_000_000) * 10}`;

interface Measured {
  p50: number;
  p99: number;
  done: number;
  cpuMsPerMessage: number | null;
}

async function measure(dialect: Dialect): Promise<Measured> {
  const server = await startBenchServer({ TERN_WEBHOOK_ALLOW_PRIVATE: 'true' }, { dialect });
  const silent = await silentReceiver();
  const answering = await startCompletionReceiver(ANSWERED, (c) => (c.body.includes('"DELIVERED"') ? 'done' : 'other'));
  try {
    const t = await benchTenant(server.url);
    const send = (i: number, callback: string) => ({
      method: 'POST' as const,
      path: '/sms/v1/messages',
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
      body: JSON.stringify({ recipient: { to: smsTo(i) }, body: { text: 'Your code is 123456.' }, callbackUrlStatus: callback }),
    });
    progress(`webhooks on ${dialect}: ${BACKLOG} deliveries for a receiver that never answers`);
    const backlog = await drive(server.url, { total: BACKLOG, connections: 64, request: (i) => send(i, `${silent.url}/status`) });
    if (backlog.ok < BACKLOG) throw new Error(`backlog sends refused: ${describeFailures(backlog.failures)}`);
    // Every message DELIVERED: its webhook is written, and the pipeline is idle but for the webhooks.
    const enRoute = async () => ((await api(server.url, 'GET', '/sms/v1/messages?searchBy[status.value]=ENROUTE', t.key)).items as unknown[]).length;
    for (let waited = 0; (await enRoute()) > 0; waited += 500) {
      if (waited > 300_000) throw new Error('the backlog was not delivered to the operator within 5 minutes');
      await new Promise((r) => setTimeout(r, 500));
    }

    progress(`webhooks on ${dialect}: ${MESSAGES} sends at ${RATE}/s, every other one to each receiver`);
    const startedAt = new Float64Array(ANSWERED);
    const cpuBefore = processCpuMs(server.process.pid);
    const began = performance.now();
    await Promise.all(
      Array.from({ length: MESSAGES }, async (_, i) => {
        await new Promise((r) => setTimeout(r, Math.max(0, began + (i * 1000) / RATE - performance.now())));
        // Even sends go to the answering receiver (numbered i/2 there), odd ones to the silent one.
        const toAnswering = i % 2 === 0;
        const callback = toAnswering ? `${answering.url}/status?n=${i / 2}` : `${silent.url}/status`;
        if (toAnswering) startedAt[i / 2] = performance.now();
        const r = send(BACKLOG + 1 + i, callback);
        const res = await fetch(`${server.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`a send answered ${res.status}`);
      }),
    );
    const done = await answering.waitAll(30_000);
    const cpuAfter = processCpuMs(server.process.pid);
    const e = endToEnd(startedAt, answering.doneAt);
    return { p50: e.p50, p99: e.p99, done, cpuMsPerMessage: cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / MESSAGES : null };
  } finally {
    await answering.close();
    await silent.close();
    await server.stop();
  }
}

export async function runWebhooksBench(): Promise<Result[]> {
  const { cells } = await onEachDatabase(measure);
  return [
    {
      case: `status webhooks to an answering receiver while another, silent, is ${BACKLOG.toLocaleString('en-US')} behind: ${MESSAGES.toLocaleString('en-US')} sends at ${RATE}/s, every other one to each`,
      ...cells((m) => ({
        text: `request → webhook p50 ${ms(m.p50)} ms, p99 ${ms(m.p99)} ms`,
        note: [`${m.done} of ${ANSWERED} webhooks`, m.cpuMsPerMessage !== null && `server CPU ${m.cpuMsPerMessage.toFixed(3)} ms a message`]
          .filter(Boolean)
          .join(', '),
      })),
    },
  ];
}
