/**
 * `npm run bench voice`: text-to-speech with the built-in engine — synthesis time per 100 characters (in this process,
 * one worker thread) — and what a burst of voice sends does to SMS sends: the latency of `POST /sms/v1/messages`
 * alone, then while `BENCH_VOICE_BURST` (50) voice messages are sent at once by another client (target: p99 ≤ 2 × alone).
 * Sizes: BENCH_VOICE_RENDERS (40 renderings), BENCH_VOICE_SMS (300 SMS per measure).
 */
import { Worker } from 'node:worker_threads';
import { WasmEspeakTts } from '../src/speech/wasm.ts';
import { api, BENCH_ADMIN_KEY, benchTenant, progress, type Row, startBenchServer } from './support.ts';

const RENDERS = Number(process.env.BENCH_VOICE_RENDERS ?? 40);
const BURST = Number(process.env.BENCH_VOICE_BURST ?? 50);
const SMS = Number(process.env.BENCH_VOICE_SMS ?? 300);
const SMS_CONCURRENCY = 4;

const TEXTS = [
  'Bonjour, votre rendez-vous de demain est confirmé pour neuf heures trente. Merci et à bientôt.',
  'Votre code de vérification est 482913. Il expire dans dix minutes. Ne le communiquez à personne.',
  'Votre colis sera livré le 15/03/2025 entre 14h00 et 18h00. Répondez STOP pour ne plus être appelé.',
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

async function synthesis(): Promise<Row> {
  const tts = new WasmEspeakTts({ workers: 1 });
  try {
    await tts.render('Bonjour.', 'fr-FR'); // loads the engine in its worker
    let chars = 0;
    let audioMs = 0;
    const started = performance.now();
    for (let i = 0; i < RENDERS; i++) {
      const text = TEXTS[i % TEXTS.length]!;
      const speech = await tts.render(text, 'fr-FR');
      chars += text.length;
      audioMs += speech.durationMs;
    }
    const elapsed = performance.now() - started;
    return {
      case: `text-to-speech (built-in eSpeak NG, 1 worker), ${RENDERS} renderings`,
      'req/s': Math.round((RENDERS / elapsed) * 1000),
      'p50 ms': '-',
      'p99 ms': '-',
      'RSS MB': '-',
      note: `${((elapsed / chars) * 100).toFixed(1)} ms per 100 characters; ${(audioMs / elapsed).toFixed(0)}× real time`,
    };
  } finally {
    await tts.close();
  }
}

/** SMS_CONCURRENCY clients sending `count` SMS one after the other; each send's latency in ms, sorted. */
async function smsLatencies(url: string, key: string, count: number, series: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SMS_CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const started = performance.now();
        const res = await fetch(`${url}/sms/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ recipient: { to: `336${series}${String(i).padStart(6, '0')}5` }, body: { text: 'Your code is 123456' } }),
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`SMS send answered ${res.status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

async function smsUnderVoiceBurst(): Promise<Row[]> {
  const server = await startBenchServer();
  try {
    const t = await benchTenant(server.url);
    const channel = await api(server.url, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, BENCH_ADMIN_KEY, {
      name: 'Bench voice',
      type: 'VOICE',
      flow: 'TRANSACTIONAL',
    });
    const voiceKey = (
      await api(server.url, 'POST', `/admin/v1/channels/${channel.channelId}/credentials`, BENCH_ADMIN_KEY, { name: 'bench', roles: ['ADMIN'] })
    ).value as string;
    // The voice sends come from another client, in a thread of its own: 50 requests started at once keep a client's
    // event loop busy for tens of milliseconds, which would otherwise be counted in the SMS latencies measured here.
    const voices = new VoiceClient(server.url, voiceKey);
    try {
      await voices.send(0, 1); // the engine is loaded
      await smsLatencies(server.url, t.key, Math.min(50, SMS), 1); // warm-up
      progress('SMS sends alone');
      const alone = await smsLatencies(server.url, t.key, SMS, 2);
      progress(`SMS sends during a burst of ${BURST} voice sends`);
      const burstStarted = performance.now();
      let burstMs = 0;
      const burst = voices.send(1, BURST).then(() => (burstMs = performance.now() - burstStarted));
      const during = await smsLatencies(server.url, t.key, SMS, 3);
      await burst;
      const row = (what: string, l: number[], note: string): Row => ({
        case: what,
        'req/s': '-',
        'p50 ms': percentile(l, 50).toFixed(1),
        'p99 ms': percentile(l, 99).toFixed(1),
        'RSS MB': '-',
        note,
      });
      const ratio = percentile(during, 99) / percentile(alone, 99);
      return [
        row(`POST /sms/v1/messages alone, ${SMS_CONCURRENCY} clients`, alone, `${SMS} sends`),
        row(
          `the same during ${BURST} voice sends at once`,
          during,
          `p50 ${(percentile(during, 50) / percentile(alone, 50)).toFixed(2)}×, p99 ${ratio.toFixed(2)}× alone (target ≤ 2: ${ratio <= 2 ? 'met' : 'not met'}); the voice burst took ${(burstMs / 1000).toFixed(1)} s`,
        ),
      ];
    } finally {
      await voices.close();
    }
  } finally {
    await server.stop();
  }
}

/** A client of the voice API in a worker thread: sends voice messages, `count` at once, and says when all are answered. */
class VoiceClient {
  private readonly worker: Worker;

  constructor(url: string, key: string) {
    const code = `
      const { parentPort, workerData: { url, key, texts } } = require('node:worker_threads');
      const send = (i) => fetch(url + '/voice/v1/messages', {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ recipient: { to: '33699' + String(i).padStart(6, '0') + '5' }, body: { text: texts[i % texts.length] } }),
      }).then(async (r) => {
        await r.arrayBuffer();
        if (r.status !== 201) throw new Error('voice send answered ' + r.status);
      });
      parentPort.on('message', ({ from, count }) => {
        Promise.all(Array.from({ length: count }, (_, i) => send(from + i))).then(
          () => parentPort.postMessage({ ok: true }),
          (err) => parentPort.postMessage({ ok: false, error: err.message }),
        );
      });`;
    this.worker = new Worker(code, { eval: true, workerData: { url, key, texts: TEXTS } });
  }

  send(from: number, count: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.worker.once('message', (m: { ok: boolean; error?: string }) => (m.ok ? resolve() : reject(new Error(m.error))));
      this.worker.postMessage({ from, count });
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

export async function runVoiceBench(): Promise<Row[]> {
  progress('text-to-speech');
  const rows = [await synthesis()];
  rows.push(...(await smsUnderVoiceBurst()));
  return rows;
}
