import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWav, readPcm16Mono, resamplePcm16, writeWav, WavFormatError } from '../../src/speech/wav.ts';

function tone(frequency: number, sampleRate: number, seconds: number, amplitude = 10000): Int16Array {
  const out = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}

function zeroCrossings(samples: Int16Array, from = 0, to = samples.length): number {
  let count = 0;
  for (let i = from + 1; i < to; i++) {
    if ((samples[i - 1]! < 0 && samples[i]! >= 0) || (samples[i - 1]! >= 0 && samples[i]! < 0)) count++;
  }
  return count;
}

function rms(samples: Int16Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / (to - from));
}

function chunk(id: string, body: Buffer, declaredSize = body.length): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(declaredSize, 4);
  const pad = body.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0);
  return Buffer.concat([header, body, pad]);
}

function fmtBody(o: { format?: number; channels?: number; rate?: number; bits?: number; blockAlign?: number } = {}) {
  const channels = o.channels ?? 1;
  const bits = o.bits ?? 16;
  const rate = o.rate ?? 8000;
  const blockAlign = o.blockAlign ?? (channels * bits) / 8;
  const b = Buffer.alloc(16);
  b.writeUInt16LE(o.format ?? 1, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate, 4);
  b.writeUInt32LE(rate * blockAlign, 8);
  b.writeUInt16LE(blockAlign, 12);
  b.writeUInt16LE(bits, 14);
  return b;
}

function riff(chunks: Buffer[], declaredSize?: number): Buffer {
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), ...chunks]);
  const header = Buffer.alloc(8);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(declaredSize ?? body.length, 4);
  return Buffer.concat([header, body]);
}

test('writeWav then parseWav round-trips format, length and samples', () => {
  const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234, -4321]);
  const wav = writeWav(samples, 8000);
  assert.equal(wav.length, 44 + samples.length * 2);
  assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
  assert.equal(wav.readUInt32LE(4), wav.length - 8);
  assert.deepEqual(parseWav(wav), {
    sampleRate: 8000,
    channels: 1,
    bitsPerSample: 16,
    audioFormat: 1,
    dataOffset: 44,
    dataLength: samples.length * 2,
    durationMs: 1, // 7 samples at 8 kHz = 0.875 ms
  });
  const decoded = readPcm16Mono(wav);
  assert.deepEqual(Array.from(decoded.samples), Array.from(samples));
  assert.equal(decoded.sampleRate, 8000);
});

test('parseWav reports the duration of one second of audio', () => {
  const info = parseWav(writeWav(new Int16Array(22050), 22050));
  assert.equal(info.durationMs, 1000);
  assert.equal(info.sampleRate, 22050);
});

test('writeWav rejects a bad sample rate', () => {
  assert.throws(() => writeWav(new Int16Array(1), 0), RangeError);
  assert.throws(() => writeWav(new Int16Array(1), 8000.5), RangeError);
  assert.throws(() => writeWav(new Int16Array(1), -8000), RangeError);
});

test('parseWav takes a streamed data length (0x7ffff000 placeholder) as the bytes actually present', () => {
  // What espeak-ng --stdout writes: placeholder sizes in both the RIFF and the data header.
  const wav = writeWav(Int16Array.from([5, 6, 7, 8, 9]), 22050);
  wav.writeUInt32LE(0x7ffff024, 4);
  wav.writeUInt32LE(0x7ffff000, 40);
  const info = parseWav(wav);
  assert.equal(info.dataOffset, 44);
  assert.equal(info.dataLength, 10);
  assert.deepEqual(Array.from(readPcm16Mono(wav).samples), [5, 6, 7, 8, 9]);
});

test('parseWav trims a trailing partial frame', () => {
  const wav = Buffer.concat([riff([chunk('fmt ', fmtBody({ channels: 2 })), chunk('data', Buffer.alloc(10), 0x7fffffff)])]);
  // 10 bytes of stereo 16-bit = 2 whole frames (8 bytes) and 2 stray bytes.
  assert.equal(parseWav(wav).dataLength, 8);
});

test('parseWav walks chunks before and after fmt/data, honouring odd-size padding', () => {
  const samples = Buffer.alloc(8);
  samples.writeInt16LE(100, 0);
  samples.writeInt16LE(-100, 2);
  samples.writeInt16LE(300, 4);
  samples.writeInt16LE(-300, 6);
  const wav = riff([
    chunk('LIST', Buffer.from('odd', 'latin1')), // 3 bytes + 1 pad byte
    chunk('fmt ', fmtBody({ rate: 16000 })),
    chunk('fact', Buffer.alloc(4)),
    chunk('data', samples),
    chunk('LIST', Buffer.from('trailer!', 'latin1')),
  ]);
  const info = parseWav(wav);
  assert.equal(info.sampleRate, 16000);
  assert.equal(info.dataOffset, 12 + 12 + 24 + 12 + 8);
  assert.equal(info.dataLength, 8);
  assert.deepEqual(Array.from(readPcm16Mono(wav).samples), [100, -100, 300, -300]);
});

test('parseWav ignores bytes after the declared RIFF size', () => {
  const wav = writeWav(Int16Array.from([1, 2]), 8000);
  const withJunk = Buffer.concat([wav, Buffer.from('junkjunkjunk', 'latin1')]);
  assert.equal(parseWav(withJunk).dataLength, 4);
});

test('parseWav reads the sub-format of WAVE_FORMAT_EXTENSIBLE', () => {
  const fmt = Buffer.alloc(40);
  fmtBody({ channels: 2 }).copy(fmt);
  fmt.writeUInt16LE(0xfffe, 0);
  fmt.writeUInt16LE(22, 16);
  fmt.writeUInt16LE(16, 18);
  fmt.writeUInt16LE(1, 24); // KSDATAFORMAT_SUBTYPE_PCM starts with 0x0001
  const data = Buffer.alloc(8);
  data.writeInt16LE(1000, 0);
  data.writeInt16LE(3000, 2);
  data.writeInt16LE(-10, 4);
  data.writeInt16LE(-20, 6);
  const wav = riff([chunk('fmt ', fmt), chunk('data', data)]);
  const info = parseWav(wav);
  assert.equal(info.audioFormat, 1);
  assert.equal(info.channels, 2);
  // readPcm16Mono averages the two channels.
  assert.deepEqual(Array.from(readPcm16Mono(wav).samples), [2000, -15]);
});

test('parseWav rejects malformed buffers with a clear error', () => {
  const good = writeWav(Int16Array.from([1, 2, 3]), 8000);
  const cases: Array<[string, Buffer, RegExp]> = [
    ['empty', Buffer.alloc(0), /too short/],
    ['short', Buffer.from('RIFF', 'latin1'), /too short/],
    ['not RIFF', Buffer.concat([Buffer.from('JUNK', 'latin1'), good.subarray(4)]), /missing RIFF signature/],
    ['big-endian RIFX', Buffer.concat([Buffer.from('RIFX', 'latin1'), good.subarray(4)]), /RIFX files are not supported/],
    ['not WAVE', Buffer.concat([good.subarray(0, 8), Buffer.from('AVI ', 'latin1'), good.subarray(12)]), /not WAVE/],
    ['no fmt', riff([chunk('data', Buffer.alloc(4))]), /no fmt chunk/],
    ['no data', riff([chunk('fmt ', fmtBody())]), /no data chunk/],
    ['header only', good.subarray(0, 12), /no fmt chunk/],
    ['fmt too small', riff([chunk('fmt ', Buffer.alloc(12)), chunk('data', Buffer.alloc(4))]), /at least 16/],
    ['truncated fmt', good.subarray(0, 30), /"fmt " declares 16 bytes but only 10 remain/],
    ['zero channels', riff([chunk('fmt ', fmtBody({ channels: 0, blockAlign: 2 })), chunk('data', Buffer.alloc(4))]), /0 channels/],
    ['zero rate', riff([chunk('fmt ', fmtBody({ rate: 0 })), chunk('data', Buffer.alloc(4))]), /sample rate of 0/],
    ['zero bits', riff([chunk('fmt ', fmtBody({ bits: 0, blockAlign: 2 })), chunk('data', Buffer.alloc(4))]), /0 bits/],
    ['zero block align', riff([chunk('fmt ', fmtBody({ blockAlign: 0 })), chunk('data', Buffer.alloc(4))]), /block alignment of 0/],
    ['inconsistent block align', riff([chunk('fmt ', fmtBody({ blockAlign: 4 })), chunk('data', Buffer.alloc(4))]), /does not match/],
    ['two data chunks', riff([chunk('fmt ', fmtBody()), chunk('data', Buffer.alloc(2)), chunk('data', Buffer.alloc(2))]), /more than one data/],
    ['two fmt chunks', riff([chunk('fmt ', fmtBody()), chunk('fmt ', fmtBody()), chunk('data', Buffer.alloc(2))]), /more than one fmt/],
    ['fmt after streamed data', riff([chunk('data', Buffer.alloc(4), 0x7ffff000), chunk('fmt ', fmtBody())]), /no fmt chunk/],
    ['extensible too small', riff([chunk('fmt ', fmtBody({ format: 0xfffe })), chunk('data', Buffer.alloc(2))]), /extensible/],
  ];
  for (const [name, buf, message] of cases) {
    assert.throws(
      () => parseWav(buf),
      (err: unknown) => {
        assert.ok(err instanceof WavFormatError, `${name}: ${String(err)}`);
        assert.match(err.message, /^invalid WAV: /, name);
        assert.match(err.message, message, name);
        return true;
      },
    );
  }
  assert.throws(() => parseWav('RIFF' as unknown as Buffer), /not a Buffer/);
});

test('readPcm16Mono refuses audio that is not 16-bit integer PCM', () => {
  const float = riff([chunk('fmt ', fmtBody({ format: 3, bits: 32 })), chunk('data', Buffer.alloc(8))]);
  assert.throws(() => readPcm16Mono(float), /format 3 is not integer PCM/);
  const eightBit = riff([chunk('fmt ', fmtBody({ bits: 8 })), chunk('data', Buffer.alloc(8))]);
  assert.throws(() => readPcm16Mono(eightBit), /8-bit samples/);
});

test('resampling 22 050 → 8 000 Hz keeps a 440 Hz tone, its level and its duration', () => {
  const input = tone(440, 22050, 2);
  const output = resamplePcm16(input, 22050, 8000);
  assert.equal(output.length, 16000);
  // Away from the edges (where the filter sees zeros beyond the signal): 440 Hz = 880 crossings per second.
  const crossings = zeroCrossings(output, 4000, 12000);
  assert.ok(Math.abs(crossings - 880) <= 2, `${crossings} zero crossings in 1 s`);
  const level = rms(output, 4000, 12000);
  const expected = 10000 / Math.SQRT2;
  assert.ok(Math.abs(level - expected) / expected < 0.02, `RMS ${level}, expected ≈ ${expected}`);
});

test('resampling 22 050 → 8 000 Hz removes content above 4 kHz instead of aliasing it', () => {
  // A naive decimator would fold 6 kHz back to 2 kHz at full level.
  const output = resamplePcm16(tone(6000, 22050, 1), 22050, 8000);
  const level = rms(output, 1000, 7000);
  assert.ok(level < 10000 / Math.SQRT2 / 1000, `6 kHz leaked through at RMS ${level}`);
  // Just above the new Nyquist frequency is still strongly attenuated.
  const near = rms(resamplePcm16(tone(4300, 22050, 1), 22050, 8000), 1000, 7000);
  assert.ok(near < 10000 / Math.SQRT2 / 100, `4.3 kHz leaked through at RMS ${near}`);
  // While a 3 kHz tone, inside the telephone band, passes.
  const passband = rms(resamplePcm16(tone(3000, 22050, 1), 22050, 8000), 1000, 7000);
  assert.ok(passband > 0.95 * (10000 / Math.SQRT2), `3 kHz attenuated to RMS ${passband}`);
});

test('upsampling 8 000 → 16 000 Hz keeps a 440 Hz tone', () => {
  const output = resamplePcm16(tone(440, 8000, 1), 8000, 16000);
  assert.equal(output.length, 16000);
  const crossings = zeroCrossings(output, 4000, 12000);
  assert.ok(Math.abs(crossings - 440) <= 2, `${crossings} zero crossings in 0.5 s`);
  const level = rms(output, 4000, 12000);
  assert.ok(Math.abs(level - 10000 / Math.SQRT2) / (10000 / Math.SQRT2) < 0.02, `RMS ${level}`);
});

test('resampling a constant signal keeps it constant, and full scale does not wrap around', () => {
  const dc = resamplePcm16(new Int16Array(22050).fill(1000), 22050, 8000);
  for (let i = 200; i < dc.length - 200; i++) assert.equal(dc[i], 1000, `sample ${i}`);
  // A full-scale square wave overshoots (Gibbs); the output must clip, not wrap to the opposite sign.
  const square = new Int16Array(22050);
  for (let i = 0; i < square.length; i++) square[i] = Math.floor(i / 50) % 2 === 0 ? 32767 : -32768;
  const out = resamplePcm16(square, 22050, 8000);
  let max = -Infinity;
  let min = Infinity;
  for (const v of out) {
    max = Math.max(max, v);
    min = Math.min(min, v);
  }
  assert.equal(max, 32767);
  assert.equal(min, -32768);
});

test('resampling handles an odd rate pair, same rate, empty input and rejects bad rates', () => {
  // 44 100 / 7 919 share no factor: thousands of phases, kernel computed per sample.
  const odd = resamplePcm16(tone(440, 44100, 0.5), 44100, 7919);
  assert.equal(odd.length, Math.round(0.5 * 7919));
  assert.ok(Math.abs(zeroCrossings(odd, 1000, 1000 + 7919 / 4) - 220) <= 2);

  const same = Int16Array.from([1, 2, 3]);
  const copy = resamplePcm16(same, 8000, 8000);
  assert.deepEqual(Array.from(copy), [1, 2, 3]);
  assert.notEqual(copy, same);

  assert.equal(resamplePcm16(new Int16Array(0), 22050, 8000).length, 0);
  assert.throws(() => resamplePcm16(same, 0, 8000), /fromRate must be a positive integer/);
  assert.throws(() => resamplePcm16(same, 22050, 8000.5), /toRate must be a positive integer/);
  assert.throws(() => resamplePcm16(same, 22050, -1), RangeError);
});
