/**
 * A speech worker: eSpeak NG compiled to WebAssembly, loaded once when the worker starts and reused for every job.
 * Renders text to telephony WAV (synthesis, resampling and the WAV file all happen here, off the HTTP thread), and
 * answers probes for the voices the engine has.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { resamplePcm16, writeWav } from './wav.ts';
import type { WorkerAnswer } from './pool.ts';

// Synthesis is batch work beside a latency-bound HTTP thread: on Linux a thread's niceness is its own, so lowering this
// worker's leaves the process's other threads (the API) first in line for the CPU during a burst of voice sends.
try {
  setPriority(0, 19);
} catch {
  // Not permitted here, or not per thread on this system: the worker runs at the process's priority.
}

export type WasmJob =
  | { kind: 'render'; text: string; voice: string; rate: number; sampleRate: number; maxSeconds: number }
  | { kind: 'probe'; voices: string[] };

export type WasmResult = { kind: 'render'; wav: ArrayBuffer; durationMs: number } | { kind: 'probe'; missing: string[] };

interface EspeakWorker {
  set_voice(name: string): number;
  set_rate(wpm: number): void;
  get_samplerate(): number;
  synthesize(text: string, onAudio: (samples: Int16Array | null, events: unknown) => boolean): void;
}

class Failure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let engine: Promise<EspeakWorker> | null = null;

function load(): Promise<EspeakWorker> {
  engine ??= (async () => {
    try {
      const { default: init } = (await import('@echogarden/espeak-ng-emscripten')) as { default: () => Promise<{ eSpeakNGWorker: new () => EspeakWorker }> };
      const m = await init();
      return new m.eSpeakNGWorker();
    } catch (err) {
      engine = null;
      throw new Failure('UNAVAILABLE', `eSpeak NG (WebAssembly) could not be loaded: ${(err as Error).message}`);
    }
  })();
  return engine;
}

function render(espeak: EspeakWorker, job: Extract<WasmJob, { kind: 'render' }>): WasmResult {
  if (espeak.set_voice(job.voice) !== 0) throw new Failure('FAILED', `eSpeak NG has no voice ${job.voice}`);
  espeak.set_rate(job.rate);
  const rate = espeak.get_samplerate();
  const limit = job.maxSeconds * rate;
  const chunks: Int16Array[] = [];
  let total = 0;
  let overflow = false;
  espeak.synthesize(job.text, (samples) => {
    if (!samples || samples.length === 0) return false;
    total += samples.length;
    if (total > limit) {
      overflow = true;
      return true; // stop
    }
    chunks.push(Int16Array.from(samples));
    return false;
  });
  if (overflow) throw new Failure('BAD_OUTPUT', `eSpeak NG produced more than ${job.maxSeconds} s of audio`);
  if (total === 0) throw new Failure('BAD_OUTPUT', 'eSpeak NG produced no audio');
  const pcm = new Int16Array(total);
  let at = 0;
  for (const c of chunks) {
    pcm.set(c, at);
    at += c.length;
  }
  const samples = resamplePcm16(pcm, rate, job.sampleRate);
  const wav = writeWav(samples, job.sampleRate);
  const out = new ArrayBuffer(wav.length);
  new Uint8Array(out).set(wav);
  return { kind: 'render', wav: out, durationMs: Math.round((samples.length * 1000) / job.sampleRate) };
}

const port = parentPort!;
port.on('message', (job: { id: number; payload: WasmJob }) => void answerJob(job));

async function answerJob({ id, payload }: { id: number; payload: WasmJob }): Promise<void> {
  let answer: WorkerAnswer<WasmResult>;
  try {
    const espeak = await load();
    const result: WasmResult =
      payload.kind === 'render' ? render(espeak, payload) : { kind: 'probe', missing: payload.voices.filter((v) => espeak.set_voice(v) !== 0) };
    answer = { id, ok: true, result };
  } catch (err) {
    answer = { id, ok: false, code: err instanceof Failure ? err.code : 'FAILED', message: (err as Error).message };
  }
  port.postMessage(answer, answer.ok && answer.result.kind === 'render' ? [answer.result.wav] : []);
}
