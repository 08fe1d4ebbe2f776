import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseWav, readPcm16Mono } from '../../src/speech/wav.ts';
import { TtsError, VOICE_LANGUAGES, type VoiceLanguage } from '../../src/core/voice/tts.ts';
import { WASM_VOICES, WasmEspeakTts } from '../../src/speech/wasm.ts';
import { SENTENCES } from './sentences.ts';

const tts = new WasmEspeakTts({ workers: 2 });
after(() => tts.close());

function rms(wav: Buffer): number {
  const samples = readPcm16Mono(wav).samples;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

test('the built-in engine has a voice for every language', async () => {
  assert.deepEqual(Object.keys(WASM_VOICES).sort(), [...VOICE_LANGUAGES].sort());
  const availability = await tts.availability();
  assert.deepEqual(availability, { ok: true, version: '@echogarden/espeak-ng-emscripten 0.3.5' });
});

for (const language of VOICE_LANGUAGES) {
  test(`renders ${language} as an 8 kHz mono 16-bit WAV of plausible duration, not silence`, async () => {
    const { short, long } = SENTENCES[language];
    const [a, b] = await Promise.all([tts.render(short, language), tts.render(long, language)]);
    for (const [text, speech] of [
      [short, a],
      [long, b],
    ] as const) {
      const info = parseWav(speech.wav);
      assert.deepEqual([info.sampleRate, info.channels, info.bitsPerSample, info.audioFormat], [8000, 1, 16, 1]);
      assert.equal(info.dataOffset + info.dataLength, speech.wav.length);
      assert.equal(info.durationMs, speech.durationMs);
      const perChar = speech.durationMs / 1000 / text.length;
      assert.ok(perChar >= 0.04 && perChar <= 0.2, `${speech.durationMs} ms for ${text.length} characters`);
      assert.ok(rms(speech.wav) > 300, 'the audio is not silent');
    }
    assert.ok(b.durationMs > a.durationMs * 2, `long ${b.durationMs} ms vs short ${a.durationMs} ms`);
  });
}

test('the same text gives the same speech, alone or among concurrent renders; languages sound different', async () => {
  const texts = VOICE_LANGUAGES.map((l) => [SENTENCES[l].short, l] as const);
  const together = await Promise.all(texts.map(([text, l]) => tts.render(text, l)));
  for (const [i, [text, l]] of texts.entries()) {
    // eSpeak NG's output varies by a few samples from one call to the next, never more.
    const alone = await tts.render(text, l);
    assert.ok(Math.abs(alone.durationMs - together[i]!.durationMs) <= 20, `${l}: ${alone.durationMs} ms alone, ${together[i]!.durationMs} ms together`);
    assert.ok(Math.abs(rms(alone.wav) - rms(together[i]!.wav)) < rms(alone.wav) * 0.05, `${l}: same loudness`);
  }
  const fr = await tts.render('Bonjour', 'fr-FR');
  const en = await tts.render('Bonjour', 'en-GB');
  assert.notDeepEqual(fr.wav, en.wav);
});

test('a slower rate speaks longer', async () => {
  const slow = new WasmEspeakTts({ workers: 1, rate: 100 });
  try {
    const text = SENTENCES['fr-FR'].long;
    const [normal, slower] = await Promise.all([tts.render(text, 'fr-FR'), slow.render(text, 'fr-FR')]);
    assert.ok(slower.durationMs > normal.durationMs * 1.4, `${slower.durationMs} ms at 100 wpm vs ${normal.durationMs} ms at 175`);
  } finally {
    await slow.close();
  }
});

test('refusals: unknown language, empty or too long text; nonsensical options', async () => {
  const refused = async (text: string, language: string, code: string) =>
    assert.rejects(tts.render(text, language as VoiceLanguage), (err: unknown) => err instanceof TtsError && err.code === code);
  await refused('Hello', 'ja-JP', 'UNSUPPORTED_LANGUAGE');
  await refused('  ', 'fr-FR', 'EMPTY_TEXT');
  const short = new WasmEspeakTts({ workers: 1, maxTextLength: 10 });
  await assert.rejects(short.render('x'.repeat(11), 'fr-FR'), (err: unknown) => err instanceof TtsError && err.code === 'TEXT_TOO_LONG');
  await short.close();
  assert.throws(() => new WasmEspeakTts({ workers: 0 }), /workers must be a positive integer/);
  assert.throws(() => new WasmEspeakTts({ rate: 1000 }), /rate must be a whole number of words a minute from 80 to 450/);
  assert.throws(() => new WasmEspeakTts({ sampleRate: 0 }), /sampleRate/);
});

test('a rendering that overruns its time limit fails with TIMEOUT, and the engine keeps working', async () => {
  const hasty = new WasmEspeakTts({ workers: 1, timeoutMs: 1 });
  try {
    await assert.rejects(hasty.render(SENTENCES['de-DE'].long, 'de-DE'), (err: unknown) => err instanceof TtsError && err.code === 'TIMEOUT');
  } finally {
    await hasty.close();
  }
  assert.ok((await tts.render('Encore là.', 'fr-FR')).durationMs > 0);
});
