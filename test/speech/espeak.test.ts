import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav, readPcm16Mono, writeWav } from '../../src/speech/wav.ts';
import { DEFAULT_VOICE_LANGUAGE, isVoiceLanguage, TtsError, VOICE_LANGUAGES, type VoiceLanguage } from '../../src/core/voice/tts.ts';
import { checkTtsAvailable, ESPEAK_VOICES, EspeakTts } from '../../src/speech/espeak.ts';
import { SENTENCES } from './sentences.ts';

const availability = await checkTtsAvailable();
if (!availability.ok) {
  console.warn(`\n*** espeak-ng is not usable (${availability.reason}): the speech rendering tests are SKIPPED ***\n`);
}
const soxiPresent = spawnSync('soxi', ['-V0'], { stdio: 'ignore' }).error === undefined;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tern-tts-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for espeak-ng: a shell script with the given body, run with espeak-ng's arguments. */
function fakeBinary(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** What espeak-ng --stdout writes: 22 050 Hz mono 16-bit with placeholder sizes it cannot go back to fix. */
function streamedWavFile(name: string, seconds: number): string {
  const samples = new Int16Array(Math.round(22050 * seconds));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 22050));
  const wav = writeWav(samples, 22050);
  wav.writeUInt32LE(0x7ffff024, 4);
  wav.writeUInt32LE(0x7ffff000, 40);
  const path = join(dir, name);
  writeFileSync(path, wav);
  return path;
}

function assertTelephonyWav(wav: Buffer, durationMs: number): void {
  const info = parseWav(wav);
  assert.equal(info.sampleRate, 8000);
  assert.equal(info.channels, 1);
  assert.equal(info.bitsPerSample, 16);
  assert.equal(info.audioFormat, 1);
  assert.equal(info.dataOffset + info.dataLength, wav.length, 'the data chunk fills the file');
  assert.equal(wav.readUInt32LE(4), wav.length - 8, 'the RIFF size is the real one');
  assert.equal(info.durationMs, durationMs);
}

test('VOICE_LANGUAGES, the default and the type guard', () => {
  assert.deepEqual([...VOICE_LANGUAGES], ['fr-FR', 'en-GB', 'de-DE', 'es-ES', 'it-IT', 'pt-PT', 'nl-NL']);
  assert.equal(DEFAULT_VOICE_LANGUAGE, 'fr-FR');
  for (const l of VOICE_LANGUAGES) assert.equal(isVoiceLanguage(l), true, l);
  for (const l of ['fr', 'FR-fr', 'fr-fr', 'en-US', 'ja-JP', 'pt-BR', '', ' fr-FR', null, undefined, 33, ['fr-FR']]) {
    assert.equal(isVoiceLanguage(l), false, String(l));
  }
  assert.deepEqual(ESPEAK_VOICES, { 'fr-FR': 'fr', 'en-GB': 'en-gb', 'de-DE': 'de', 'es-ES': 'es', 'it-IT': 'it', 'pt-PT': 'pt', 'nl-NL': 'nl' });
});

test('a missing espeak-ng binary is reported, not thrown', async () => {
  const result = await checkTtsAvailable(join(dir, 'no-such-espeak-ng'));
  assert.equal(result.ok, false);
  assert.ok(!result.ok && /not found/.test(result.reason) && result.reason.includes('espeak-ng'), JSON.stringify(result));

  const tts = new EspeakTts({ binary: join(dir, 'no-such-espeak-ng') });
  await assert.rejects(tts.render('Bonjour', 'fr-FR'), (err: unknown) => {
    assert.ok(err instanceof TtsError);
    assert.equal(err.code, 'UNAVAILABLE');
    assert.match(err.message, /espeak-ng/);
    return true;
  });
});

test('checkTtsAvailable reports a program that fails or lacks a voice', async () => {
  const broken = fakeBinary('broken', 'echo "cannot load data" >&2; exit 3');
  const r1 = await checkTtsAvailable(broken);
  assert.deepEqual(r1, { ok: false, reason: `${broken} --version failed: cannot load data` });

  const noGerman = fakeBinary(
    'no-german',
    `if [ "$1" = "--version" ]; then echo "eSpeak NG text-to-speech: 9.99  Data at: /x"; exit 0; fi
     if [ "$3" = "de" ]; then echo "Error: The specified espeak-ng voice does not exist." >&2; exit 1; fi
     exit 0`,
  );
  const r2 = await checkTtsAvailable(noGerman);
  assert.deepEqual(r2, { ok: false, reason: `${noGerman} has no voice for de-DE (voice de)` });

  const fine = fakeBinary('fine', `if [ "$1" = "--version" ]; then echo "eSpeak NG text-to-speech: 9.99  Data at: /x"; fi; exit 0`);
  assert.deepEqual(await checkTtsAvailable(fine), { ok: true, version: '9.99' });

  const hung = fakeBinary('hung-version', 'exec sleep 30');
  assert.deepEqual(await checkTtsAvailable(hung, 300), { ok: false, reason: `${hung} --version did not answer within 300 ms` });
});

test('render passes the text on stdin, never as an argument, and resamples the streamed WAV', async () => {
  const source = streamedWavFile('speech.wav', 1.5);
  const argsLog = join(dir, 'args.log');
  const stdinLog = join(dir, 'stdin.log');
  const binary = fakeBinary('recording', `for a in "$@"; do printf '%s\\n' "$a"; done > '${argsLog}'; cat > '${stdinLog}'; cat '${source}'`);
  const text = `--help"; rm -rf / #\n$(reboot) 'quoted' ünïcødé €`;
  const tts = new EspeakTts({ binary });
  const { wav, durationMs } = await tts.render(text, 'de-DE');

  assert.equal(readFileSync(stdinLog, 'utf8'), text);
  const args = readFileSync(argsLog, 'utf8').trimEnd().split('\n');
  assert.deepEqual(args, ['--stdout', '-b', '1', '-s', '175', '-v', 'de']);

  assert.equal(durationMs, 1500);
  assertTelephonyWav(wav, 1500);
  assert.equal(readPcm16Mono(wav).samples.length, 12000);
});

test('render rejects empty, too long and unsupported input before running anything', async () => {
  const marker = join(dir, 'ran');
  const binary = fakeBinary('must-not-run', `touch '${marker}'`);
  const tts = new EspeakTts({ binary, maxTextLength: 20 });
  const expect = async (p: Promise<unknown>, code: string, message: RegExp) =>
    assert.rejects(p, (err: unknown) => {
      assert.ok(err instanceof TtsError, String(err));
      assert.equal(err.code, code);
      assert.match(err.message, message);
      return true;
    });
  await expect(tts.render('', 'fr-FR'), 'EMPTY_TEXT', /empty/);
  await expect(tts.render(' \n\t ', 'fr-FR'), 'EMPTY_TEXT', /empty/);
  await expect(tts.render('x'.repeat(21), 'fr-FR'), 'TEXT_TOO_LONG', /21 characters, at most 20/);
  await expect(tts.render('Hola', 'es-MX' as VoiceLanguage), 'UNSUPPORTED_LANGUAGE', /es-MX/);
  assert.equal(existsSync(marker), false, 'the program was not run');
});

test('render reports a failing program with its error output', async () => {
  const binary = fakeBinary('failing', 'cat > /dev/null; echo "Error: The specified espeak-ng voice does not exist." >&2; exit 1');
  await assert.rejects(new EspeakTts({ binary }).render('Hello', 'en-GB'), (err: unknown) => {
    assert.ok(err instanceof TtsError);
    assert.equal(err.code, 'FAILED');
    assert.match(err.message, /-v en-gb failed: Error: The specified espeak-ng voice does not exist\./);
    return true;
  });
});

test('render rejects output that is not a usable WAV', async () => {
  const garbage = fakeBinary('garbage', 'cat > /dev/null; echo "this is not audio at all"');
  await assert.rejects(new EspeakTts({ binary: garbage }).render('Hello', 'en-GB'), (err: unknown) => {
    assert.ok(err instanceof TtsError);
    assert.equal(err.code, 'BAD_OUTPUT');
    assert.match(err.message, /invalid WAV: missing RIFF signature/);
    return true;
  });
  const silent = fakeBinary('silent', 'cat > /dev/null');
  await assert.rejects(new EspeakTts({ binary: silent }).render('Hello', 'en-GB'), /too short for a RIFF header/);
  const emptyWav = join(dir, 'empty.wav');
  writeFileSync(emptyWav, writeWav(new Int16Array(0), 22050));
  const noAudio = fakeBinary('no-audio', `cat > /dev/null; cat '${emptyWav}'`);
  await assert.rejects(new EspeakTts({ binary: noAudio }).render('Hello', 'en-GB'), /produced no audio/);
});

test('render kills a program that runs past the timeout', async () => {
  const pidFile = join(dir, 'hung.pid');
  const binary = fakeBinary('hung', `echo $$ > '${pidFile}'; exec sleep 30`);
  await assert.rejects(new EspeakTts({ binary, timeoutMs: 300 }).render('Hello', 'en-GB'), (err: unknown) => {
    assert.ok(err instanceof TtsError);
    assert.equal(err.code, 'TIMEOUT');
    assert.match(err.message, /did not finish within 300 ms/);
    return true;
  });
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the hung process is gone');
});

test('render runs at most maxConcurrent programs at once and queues the rest', async () => {
  const source = streamedWavFile('short.wav', 0.2);
  const running = join(dir, 'running');
  const peakLog = join(dir, 'peak.log');
  mkdirSync(running);
  const binary = fakeBinary(
    'slow',
    `cat > /dev/null; touch '${running}'/$$; ls '${running}' | wc -l >> '${peakLog}'; sleep 0.3; rm '${running}'/$$; cat '${source}'`,
  );
  const tts = new EspeakTts({ binary, maxConcurrent: 2 });
  const results = await Promise.all(['un', 'deux', 'trois', 'quatre', 'cinq'].map((t) => tts.render(t, 'fr-FR')));
  assert.equal(results.length, 5);
  for (const r of results) assert.equal(r.durationMs, 200);
  const counts = readFileSync(peakLog, 'utf8').trim().split('\n').map(Number);
  assert.equal(counts.length, 5, 'every render ran the program once');
  assert.ok(Math.max(...counts) <= 2, `up to ${Math.max(...counts)} programs ran at once`);
  assert.equal(readdirSync(running).length, 0);
});

test('EspeakTts rejects nonsensical options', () => {
  assert.throws(() => new EspeakTts({ maxConcurrent: 0 }), /maxConcurrent must be a positive integer/);
  assert.throws(() => new EspeakTts({ timeoutMs: -1 }), /timeoutMs/);
  assert.throws(() => new EspeakTts({ sampleRate: 8000.5 }), /sampleRate/);
  assert.throws(() => new EspeakTts({ maxTextLength: 0 }), /maxTextLength/);
  assert.throws(() => new EspeakTts({ rate: 20 }), /rate must be a whole number of words a minute from 80 to 450/);
});

// ---- with the real espeak-ng ------------------------------------------------------------------------------

test('checkTtsAvailable finds the installed espeak-ng', (t) => {
  if (!availability.ok) return t.skip('espeak-ng not installed');
  assert.match(availability.version, /^\d+\.\d+/);
});

for (const language of VOICE_LANGUAGES) {
  test(`espeak-ng renders ${language} to a valid 8 kHz mono WAV of plausible duration`, async (t) => {
    if (!availability.ok) return t.skip('espeak-ng not installed');
    const tts = new EspeakTts();
    const { short, long } = SENTENCES[language];
    const a = await tts.render(short, language);
    const b = await tts.render(long, language);
    for (const [text, speech] of [
      [short, a],
      [long, b],
    ] as const) {
      assertTelephonyWav(speech.wav, speech.durationMs);
      const perChar = speech.durationMs / 1000 / text.length;
      assert.ok(perChar >= 0.04 && perChar <= 0.2, `${speech.durationMs} ms for ${text.length} characters`);
      // Speech, not silence: a reasonable level across the message.
      const samples = readPcm16Mono(speech.wav).samples;
      let sum = 0;
      for (const s of samples) sum += s * s;
      assert.ok(Math.sqrt(sum / samples.length) > 300, 'the audio is not silent');
    }
    assert.ok(b.durationMs > a.durationMs * 2, `long text ${b.durationMs} ms vs short text ${a.durationMs} ms`);
  });
}

test('soxi agrees with parseWav on a rendered message', async (t) => {
  if (!availability.ok) return t.skip('espeak-ng not installed');
  if (!soxiPresent) return t.skip('soxi (sox) not installed');
  const { wav, durationMs } = await new EspeakTts().render('Votre rendez-vous est confirmé pour demain.', 'fr-FR');
  const path = join(dir, 'rendered.wav');
  writeFileSync(path, wav);
  const info = parseWav(wav);
  const soxi = (flag: string) => execFileSync('soxi', [flag, path], { encoding: 'utf8' }).trim();
  assert.equal(Number(soxi('-r')), info.sampleRate);
  assert.equal(Number(soxi('-c')), info.channels);
  assert.equal(Number(soxi('-b')), info.bitsPerSample);
  assert.equal(Number(soxi('-s')), info.dataLength / 2);
  assert.equal(soxi('-e'), 'Signed Integer PCM');
  assert.ok(Math.abs(Number(soxi('-D')) * 1000 - durationMs) <= 1, `soxi ${soxi('-D')} s vs ${durationMs} ms`);
});

test('espeak-ng renders concurrent requests independently', async (t) => {
  if (!availability.ok) return t.skip('espeak-ng not installed');
  const tts = new EspeakTts({ maxConcurrent: 2 });
  const texts = VOICE_LANGUAGES.map((l) => [SENTENCES[l].short, l] as const);
  const together = await Promise.all(texts.map(([text, l]) => tts.render(text, l)));
  for (const [i, [text, l]] of texts.entries()) {
    const alone = await tts.render(text, l);
    assert.deepEqual(together[i]!.wav, alone.wav, `${l}: same audio whether rendered alone or alongside others`);
  }
});
