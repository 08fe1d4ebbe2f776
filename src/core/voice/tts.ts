/** Text-to-speech as the core sees it: the languages voice messages are spoken in, and the synthesiser's port. */
export const VOICE_LANGUAGES = ['fr-FR', 'en-GB', 'de-DE', 'es-ES', 'it-IT', 'pt-PT', 'nl-NL'] as const;
export type VoiceLanguage = (typeof VOICE_LANGUAGES)[number];
export const DEFAULT_VOICE_LANGUAGE: VoiceLanguage = 'fr-FR';

export function isVoiceLanguage(value: unknown): value is VoiceLanguage {
  return typeof value === 'string' && (VOICE_LANGUAGES as readonly string[]).includes(value);
}

/** Narrow-band telephony: 8 kHz, mono, 16-bit PCM. */
export const TELEPHONY_SAMPLE_RATE = 8000;

/** Speaking rate in words a minute, for every engine: eSpeak NG's own default, and the range it accepts. */
export const DEFAULT_SPEECH_RATE = 175;
export const MIN_SPEECH_RATE = 80;
export const MAX_SPEECH_RATE = 450;

export interface RenderedSpeech {
  /** A complete WAVE file. */
  wav: Buffer;
  durationMs: number;
}

/** A speech synthesiser: renders text as telephony WAV audio. */
export interface TextToSpeech {
  /** The engine, as the log names it. */
  readonly name: string;
  /**
   * Whether to check it as the node starts (a program that may be missing from the machine), rather than on the
   * first voice send (an engine shipped with Tern, whose check loads it: a node that sends no voice never does).
   */
  readonly checkAtStart: boolean;
  render(text: string, language: VoiceLanguage): Promise<RenderedSpeech>;
  /** Whether it can speak every supported language here, or why not. */
  availability(): Promise<TtsAvailability>;
  /** Releases what it holds (worker threads). */
  close(): Promise<void>;
}

export type TtsErrorCode =
  | 'EMPTY_TEXT' // nothing to say
  | 'TEXT_TOO_LONG'
  | 'UNSUPPORTED_LANGUAGE'
  | 'UNAVAILABLE' // the synthesiser could not be started or loaded
  | 'TIMEOUT'
  | 'FAILED' // the synthesiser ran and reported an error
  | 'BAD_OUTPUT'; // the synthesiser's output is not usable audio

export class TtsError extends Error {
  readonly code: TtsErrorCode;
  constructor(code: TtsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TtsError';
    this.code = code;
  }
}

export type TtsAvailability = { ok: true; version: string } | { ok: false; reason: string };
