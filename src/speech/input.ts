import { isVoiceLanguage, MAX_SPEECH_RATE, MIN_SPEECH_RATE, TtsError, VOICE_LANGUAGES, type VoiceLanguage } from '../core/voice/tts.ts';

/** What every engine refuses before it synthesises anything: an unknown language, no text, too much text. */
export function checkRenderInput(text: string, language: VoiceLanguage, maxTextLength: number): void {
  if (!isVoiceLanguage(language)) {
    const supported = VOICE_LANGUAGES.join(', ');
    throw new TtsError('UNSUPPORTED_LANGUAGE', `language ${JSON.stringify(language)} is not one of ${supported}`);
  }
  if (typeof text !== 'string' || text.trim() === '') throw new TtsError('EMPTY_TEXT', 'text to speak is empty');
  if (text.length > maxTextLength) {
    throw new TtsError('TEXT_TOO_LONG', `text is ${text.length} characters, at most ${maxTextLength} allowed`);
  }
}

export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** A speaking rate in words a minute, within what eSpeak NG accepts. */
export function speechRate(value: number): number {
  if (!Number.isInteger(value) || value < MIN_SPEECH_RATE || value > MAX_SPEECH_RATE) {
    throw new RangeError(`rate must be a whole number of words a minute from ${MIN_SPEECH_RATE} to ${MAX_SPEECH_RATE}, got ${value}`);
  }
  return value;
}
