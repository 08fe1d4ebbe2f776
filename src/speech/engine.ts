import type { TextToSpeech } from '../core/voice/tts.ts';
import { EspeakTts } from './espeak.ts';
import { WasmEspeakTts } from './wasm.ts';

export interface SpeechSettings {
  /** `wasm`: eSpeak NG built in (the default, no system package); `espeak-ng`: the program on PATH. */
  engine: 'wasm' | 'espeak-ng';
  /** Worker threads of the built-in engine; null: the cores less one, from 1 to 4. */
  workers: number | null;
}

/** The synthesiser the settings ask for. */
export function createTextToSpeech(settings: SpeechSettings): TextToSpeech {
  if (settings.engine === 'espeak-ng') return new EspeakTts();
  return new WasmEspeakTts(settings.workers === null ? {} : { workers: settings.workers });
}
