import { spawn } from 'node:child_process';
import { readPcm16Mono, resamplePcm16, writeWav, WavFormatError } from './wav.ts';
import {
  DEFAULT_SPEECH_RATE,
  type RenderedSpeech,
  TELEPHONY_SAMPLE_RATE,
  type TextToSpeech,
  type TtsAvailability,
  TtsError,
  VOICE_LANGUAGES,
  type VoiceLanguage,
} from '../core/voice/tts.ts';
import { checkRenderInput, positiveInteger, speechRate } from './input.ts';

/** espeak-ng voice name for each supported language. */
export const ESPEAK_VOICES: Readonly<Record<VoiceLanguage, string>> = {
  'fr-FR': 'fr',
  'en-GB': 'en-gb',
  'de-DE': 'de',
  'es-ES': 'es',
  'it-IT': 'it',
  'pt-PT': 'pt',
  'nl-NL': 'nl',
};

export interface EspeakTtsOptions {
  /** Program to run; a bare name is looked up on PATH. Default `espeak-ng`. */
  binary?: string;
  /** Synthesiser processes allowed at once; further renders wait their turn. Default 2. */
  maxConcurrent?: number;
  /** A process still running after this long is killed. Default 30 000 ms. */
  timeoutMs?: number;
  /** Longest text accepted, in characters. Default 10 000. */
  maxTextLength?: number;
  /** Sample rate of the WAV produced. Default 8 000 Hz. */
  sampleRate?: number;
  /** Words a minute. Default 175. */
  rate?: number;
}

const DIAGNOSTIC_KEEP_CHARS = 4096;
/** About 12 minutes of 22 050 Hz 16-bit audio: far beyond any message, bounds memory if the program runs wild. */
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/** A counting semaphore: at most `limit` holders, the rest wait in arrival order. */
class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.active--;
    }
  }
}

/**
 * Text-to-speech with the espeak-ng program. The text goes to the program's standard input, never its
 * arguments (no option injection, no argument length limit); the WAV it streams to standard output is
 * resampled to telephony rate.
 */
export class EspeakTts implements TextToSpeech {
  private readonly binary: string;
  private readonly timeoutMs: number;
  private readonly maxTextLength: number;
  private readonly sampleRate: number;
  private readonly limit: ConcurrencyLimit;
  private readonly rate: number;

  constructor(options: EspeakTtsOptions = {}) {
    this.rate = speechRate(options.rate ?? DEFAULT_SPEECH_RATE);
    this.binary = options.binary ?? 'espeak-ng';
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? 30_000);
    this.maxTextLength = positiveInteger('maxTextLength', options.maxTextLength ?? 10_000);
    this.sampleRate = positiveInteger('sampleRate', options.sampleRate ?? TELEPHONY_SAMPLE_RATE);
    this.limit = new ConcurrencyLimit(positiveInteger('maxConcurrent', options.maxConcurrent ?? 2));
  }

  get name(): string {
    return 'espeak-ng';
  }

  readonly checkAtStart = true;

  availability(): Promise<TtsAvailability> {
    return checkTtsAvailable(this.binary);
  }

  async close(): Promise<void> {}

  async render(text: string, language: VoiceLanguage): Promise<RenderedSpeech> {
    checkRenderInput(text, language, this.maxTextLength);
    const raw = await this.limit.run(() => this.synthesise(text, ESPEAK_VOICES[language]));
    let decoded;
    try {
      decoded = readPcm16Mono(raw);
    } catch (err) {
      if (!(err instanceof WavFormatError)) throw err;
      throw new TtsError('BAD_OUTPUT', `${this.binary} output: ${err.message}`, { cause: err });
    }
    if (decoded.samples.length === 0) throw new TtsError('BAD_OUTPUT', `${this.binary} produced no audio`);
    const samples = resamplePcm16(decoded.samples, decoded.sampleRate, this.sampleRate);
    const durationMs = Math.round((samples.length * 1000) / this.sampleRate);
    return { wav: writeWav(samples, this.sampleRate), durationMs };
  }

  private synthesise(text: string, voice: string): Promise<Buffer> {
    // -b 1: the input is UTF-8.
    const args = ['--stdout', '-b', '1', '-s', String(this.rate), '-v', voice];
    return new Promise<Buffer>((resolve, reject) => {
      const child = spawn(this.binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const chunks: Buffer[] = [];
      let outputBytes = 0;
      let stderr = '';
      let failure: TtsError | undefined;
      let settled = false;

      const fail = (error: TtsError) => {
        failure ??= error;
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      };
      const timer = setTimeout(() => fail(new TtsError('TIMEOUT', `${this.binary} did not finish within ${this.timeoutMs} ms`)), this.timeoutMs);

      child.on('error', (err: NodeJS.ErrnoException) => {
        // A program that cannot be started (ENOENT, EACCES) emits 'error' before 'close'.
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(
          err.code === 'ENOENT' || err.code === 'EACCES'
            ? new TtsError('UNAVAILABLE', `cannot run ${this.binary} (${err.code}): is espeak-ng installed?`, {
                cause: err,
              })
            : new TtsError('FAILED', `${this.binary}: ${err.message}`, { cause: err }),
        );
      });
      child.stdout.on('data', (chunk: Buffer) => {
        outputBytes += chunk.length;
        if (outputBytes > MAX_OUTPUT_BYTES) {
          fail(new TtsError('BAD_OUTPUT', `${this.binary} wrote more than ${MAX_OUTPUT_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < DIAGNOSTIC_KEEP_CHARS) stderr += chunk.slice(0, DIAGNOSTIC_KEEP_CHARS - stderr.length);
      });
      // A program that exits without reading all of its input breaks the pipe; its exit status tells why.
      child.stdin.on('error', () => {});
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        if (failure) return reject(failure);
        if (code !== 0) {
          const why = stderr.trim() || (signal ? `killed by ${signal}` : `exit status ${code}`);
          return reject(new TtsError('FAILED', `${this.binary} -v ${voice} failed: ${why}`));
        }
        resolve(Buffer.concat(chunks));
      });
      child.stdin.end(text, 'utf8');
    });
  }
}

function runQuietly(
  binary: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; timedOut: boolean; stdout: string; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    // Not spawn's own `timeout` option: its timer is only cleared on exit, so a binary that cannot be started
    // would keep the process alive until it fires.
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    let stdout = '';
    let stderr = '';
    const keep = (into: string, chunk: string) => (into.length < DIAGNOSTIC_KEEP_CHARS ? into + chunk : into);
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout = keep(stdout, c)));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = keep(stderr, c)));
    child.stdin.on('error', () => {});
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, timedOut, stdout, stderr, error });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, stdout, stderr });
    });
    child.stdin.end();
  });
}

/**
 * Tells whether espeak-ng can be run and has a voice for every supported language, so the server can say so
 * clearly at start rather than fail on the first voice message.
 */
export async function checkTtsAvailable(binary = 'espeak-ng', timeoutMs = 10_000): Promise<TtsAvailability> {
  const version = await runQuietly(binary, ['--version'], timeoutMs);
  if (version.error) {
    return {
      ok: false,
      reason:
        version.error.code === 'ENOENT'
          ? `${binary} not found: install the Debian package espeak-ng to send voice messages`
          : `cannot run ${binary}: ${version.error.message}`,
    };
  }
  if (version.timedOut) return { ok: false, reason: `${binary} --version did not answer within ${timeoutMs} ms` };
  if (version.code !== 0) {
    const why = (version.stderr || version.stdout).trim() || `exit status ${version.code}`;
    return { ok: false, reason: `${binary} --version failed: ${why}` };
  }
  const versionText = version.stdout.trim();
  const match = /text-to-speech:\s*(\S+)/.exec(versionText);

  const missing: string[] = [];
  for (const language of VOICE_LANGUAGES) {
    // -q: no audio output; an unknown voice makes espeak-ng exit non-zero.
    const probe = await runQuietly(binary, ['-q', '-v', ESPEAK_VOICES[language]], timeoutMs);
    if (probe.error || probe.code !== 0) missing.push(`${language} (voice ${ESPEAK_VOICES[language]})`);
  }
  if (missing.length > 0) return { ok: false, reason: `${binary} has no voice for ${missing.join(', ')}` };
  return { ok: true, version: match?.[1] ?? versionText.split('\n')[0] ?? 'unknown' };
}
