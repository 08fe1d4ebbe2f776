import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_SPEECH_RATE,
  type RenderedSpeech,
  TELEPHONY_SAMPLE_RATE,
  type TextToSpeech,
  type TtsAvailability,
  TtsError,
  type TtsErrorCode,
  VOICE_LANGUAGES,
  type VoiceLanguage,
} from '../core/voice/tts.ts';
import { checkRenderInput, positiveInteger, speechRate } from './input.ts';
import { WorkerJobError, WorkerPool } from './pool.ts';
import type { WasmJob, WasmResult } from './wasm-worker.ts';

/** The WebAssembly build's voice for each supported language (its identifiers, e.g. `roa/fr`). */
export const WASM_VOICES: Readonly<Record<VoiceLanguage, string>> = {
  'fr-FR': 'roa/fr',
  'en-GB': 'gmw/en',
  'de-DE': 'gmw/de',
  'es-ES': 'roa/es',
  'it-IT': 'roa/it',
  'pt-PT': 'roa/pt',
  'nl-NL': 'gmw/nl',
};

const PACKAGE = '@echogarden/espeak-ng-emscripten';

export interface WasmTtsOptions {
  /** Worker threads synthesising at once. Default: the cores less one (for the HTTP thread), from 1 to 4. */
  workers?: number;
  /** Words a minute. Default 175. */
  rate?: number;
  /** A rendering still running after this long is given up (its worker is replaced). Default 30 000 ms. */
  timeoutMs?: number;
  /** A worker with nothing to render for this long is stopped (started again when needed). Default 60 000 ms. */
  idleMs?: number;
  /** Longest text accepted, in characters. Default 10 000. */
  maxTextLength?: number;
  /** Sample rate of the WAV produced. Default 8 000 Hz. */
  sampleRate?: number;
}

/** The default worker count: leave a core to the HTTP thread. */
export function defaultSpeechWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

function packageVersion(): string {
  try {
    const path = createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`);
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const KNOWN_CODES = new Set<TtsErrorCode>(['UNAVAILABLE', 'TIMEOUT', 'FAILED', 'BAD_OUTPUT']);

/**
 * Text-to-speech with eSpeak NG compiled to WebAssembly (the npm package, voices included): no system package
 * needed. Synthesis runs in a pool of worker threads, each loading the engine once, so a burst of voice messages
 * never holds up the HTTP thread; renders wait in arrival order for a free worker.
 */
export class WasmEspeakTts implements TextToSpeech {
  private readonly pool: WorkerPool<WasmJob, WasmResult>;
  private readonly rate: number;
  private readonly maxTextLength: number;
  private readonly sampleRate: number;
  private readonly timeoutMs: number;

  constructor(options: WasmTtsOptions = {}) {
    this.rate = speechRate(options.rate ?? DEFAULT_SPEECH_RATE);
    this.maxTextLength = positiveInteger('maxTextLength', options.maxTextLength ?? 10_000);
    this.sampleRate = positiveInteger('sampleRate', options.sampleRate ?? TELEPHONY_SAMPLE_RATE);
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? 30_000);
    this.pool = new WorkerPool({
      // The worker's module in the form this one runs in (TypeScript, or JavaScript written out by the tests' build).
      entry: new URL(`./wasm-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
      size: positiveInteger('workers', options.workers ?? defaultSpeechWorkers()),
      timeoutMs: this.timeoutMs,
      // A node that sent voice once would otherwise keep a loaded synthesiser (~50 MB) for its life.
      idleMs: positiveInteger('idleMs', options.idleMs ?? 60_000),
    });
  }

  get name(): string {
    return 'eSpeak NG (WebAssembly)';
  }

  readonly checkAtStart = false;

  async availability(): Promise<TtsAvailability> {
    let result: WasmResult;
    try {
      // Checked on the first voice send: the worker it loads renders that send, and is stopped once idle.
      result = await this.pool.run({ kind: 'probe', voices: VOICE_LANGUAGES.map((l) => WASM_VOICES[l]) });
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
    if (result.kind !== 'probe') return { ok: false, reason: 'unexpected answer from the speech worker' };
    if (result.missing.length > 0) {
      const missing = VOICE_LANGUAGES.filter((l) => result.missing.includes(WASM_VOICES[l])).map((l) => `${l} (voice ${WASM_VOICES[l]})`);
      return { ok: false, reason: `eSpeak NG (WebAssembly) has no voice for ${missing.join(', ')}` };
    }
    return { ok: true, version: `${PACKAGE} ${packageVersion()}` };
  }

  async render(text: string, language: VoiceLanguage): Promise<RenderedSpeech> {
    checkRenderInput(text, language, this.maxTextLength);
    let result: WasmResult;
    try {
      result = await this.pool.run({
        kind: 'render',
        text,
        voice: WASM_VOICES[language],
        rate: this.rate,
        sampleRate: this.sampleRate,
        // Even the slowest rate reads 10 000 characters in well under this.
        maxSeconds: 1_800,
      });
    } catch (err) {
      if (!(err instanceof WorkerJobError)) throw err;
      const code = KNOWN_CODES.has(err.code as TtsErrorCode) ? (err.code as TtsErrorCode) : 'FAILED';
      throw new TtsError(code, code === 'TIMEOUT' ? `eSpeak NG (WebAssembly) ${err.message}` : err.message, { cause: err });
    }
    if (result.kind !== 'render') throw new TtsError('BAD_OUTPUT', 'unexpected answer from the speech worker');
    return { wav: Buffer.from(result.wav), durationMs: result.durationMs };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
