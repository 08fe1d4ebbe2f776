/**
 * RIFF/WAVE reading and writing, and PCM resampling. Pure: buffers in, buffers out.
 */

export const WAVE_FORMAT_PCM = 1;
export const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** 1 = integer PCM; WAVE_FORMAT_EXTENSIBLE files report their sub-format here. */
  audioFormat: number;
  /** Byte offset of the first sample in the buffer. */
  dataOffset: number;
  /** Bytes of sample data actually present, a whole number of frames. */
  dataLength: number;
  durationMs: number;
}

export class WavFormatError extends Error {
  constructor(message: string) {
    super(`invalid WAV: ${message}`);
    this.name = 'WavFormatError';
  }
}

const RIFF_HEADER_BYTES = 12;
const CHUNK_HEADER_BYTES = 8;

function fourCc(buf: Buffer, offset: number): string {
  return buf.toString('latin1', offset, offset + 4);
}

interface FmtChunk {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  blockAlign: number;
  bitsPerSample: number;
}

function parseFmt(buf: Buffer, offset: number, size: number): FmtChunk {
  if (size < 16) throw new WavFormatError(`fmt chunk is ${size} bytes, at least 16 expected`);
  let audioFormat = buf.readUInt16LE(offset);
  const channels = buf.readUInt16LE(offset + 2);
  const sampleRate = buf.readUInt32LE(offset + 4);
  const blockAlign = buf.readUInt16LE(offset + 12);
  const bitsPerSample = buf.readUInt16LE(offset + 14);
  if (audioFormat === WAVE_FORMAT_EXTENSIBLE) {
    // cbSize(2) validBits(2) channelMask(4) then a GUID whose first two bytes are the real format code.
    if (size < 40) throw new WavFormatError(`extensible fmt chunk is ${size} bytes, 40 expected`);
    audioFormat = buf.readUInt16LE(offset + 24);
  }
  if (channels === 0) throw new WavFormatError('fmt chunk declares 0 channels');
  if (sampleRate === 0) throw new WavFormatError('fmt chunk declares a sample rate of 0');
  if (bitsPerSample === 0) throw new WavFormatError('fmt chunk declares 0 bits per sample');
  if (blockAlign === 0) throw new WavFormatError('fmt chunk declares a block alignment of 0');
  if (audioFormat === WAVE_FORMAT_PCM && blockAlign !== channels * Math.ceil(bitsPerSample / 8)) {
    throw new WavFormatError(`block alignment ${blockAlign} does not match ${channels} channel(s) of ${bitsPerSample} bits`);
  }
  return { audioFormat, channels, sampleRate, blockAlign, bitsPerSample };
}

/**
 * Walks the RIFF chunks of a WAVE file. A `data` chunk whose declared size runs past the end of the buffer is
 * taken to end with the buffer: programs writing to a pipe (espeak-ng --stdout) cannot seek back to fix the
 * sizes and leave a placeholder such as 0x7ffff000. Any other chunk that runs past the end is an error.
 */
export function parseWav(buf: Buffer): WavInfo {
  if (!Buffer.isBuffer(buf)) throw new WavFormatError('input is not a Buffer');
  if (buf.length < RIFF_HEADER_BYTES) throw new WavFormatError(`${buf.length} bytes is too short for a RIFF header`);
  const riffId = fourCc(buf, 0);
  if (riffId !== 'RIFF') {
    throw new WavFormatError(riffId === 'RIFX' || riffId === 'RF64' ? `${riffId} files are not supported, only little-endian RIFF` : 'missing RIFF signature');
  }
  if (fourCc(buf, 8) !== 'WAVE') throw new WavFormatError('RIFF form type is not WAVE');
  const riffEnd = Math.min(buf.length, CHUNK_HEADER_BYTES + buf.readUInt32LE(4));

  let fmt: FmtChunk | undefined;
  let data: { offset: number; length: number } | undefined;
  let offset = RIFF_HEADER_BYTES;
  while (offset + CHUNK_HEADER_BYTES <= riffEnd) {
    const id = fourCc(buf, offset);
    const declared = buf.readUInt32LE(offset + 4);
    const bodyStart = offset + CHUNK_HEADER_BYTES;
    const available = riffEnd - bodyStart;
    if (id === 'data') {
      if (data) throw new WavFormatError('more than one data chunk');
      data = { offset: bodyStart, length: Math.min(declared, available) };
      if (declared > available) break;
    } else {
      if (declared > available) {
        throw new WavFormatError(`chunk "${id}" declares ${declared} bytes but only ${available} remain`);
      }
      if (id === 'fmt ') {
        if (fmt) throw new WavFormatError('more than one fmt chunk');
        fmt = parseFmt(buf, bodyStart, declared);
      }
    }
    offset = bodyStart + declared + (declared & 1);
  }
  if (!fmt) throw new WavFormatError('no fmt chunk');
  if (!data) throw new WavFormatError('no data chunk');

  const frames = Math.floor(data.length / fmt.blockAlign);
  return {
    sampleRate: fmt.sampleRate,
    channels: fmt.channels,
    bitsPerSample: fmt.bitsPerSample,
    audioFormat: fmt.audioFormat,
    dataOffset: data.offset,
    dataLength: frames * fmt.blockAlign,
    durationMs: Math.round((frames * 1000) / fmt.sampleRate),
  };
}

/**
 * Decodes 16-bit integer PCM to mono samples, averaging the channels of a multi-channel file.
 */
export function readPcm16Mono(buf: Buffer): { samples: Int16Array; sampleRate: number; info: WavInfo } {
  const info = parseWav(buf);
  if (info.audioFormat !== WAVE_FORMAT_PCM) {
    throw new WavFormatError(`audio format ${info.audioFormat} is not integer PCM`);
  }
  if (info.bitsPerSample !== 16) throw new WavFormatError(`${info.bitsPerSample}-bit samples, 16-bit expected`);
  const { channels } = info;
  const frames = info.dataLength / (2 * channels);
  const samples = new Int16Array(frames);
  let p = info.dataOffset;
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++, p += 2) sum += buf.readInt16LE(p);
    samples[i] = Math.round(sum / channels);
  }
  return { samples, sampleRate: info.sampleRate, info };
}

const WAV_HEADER_BYTES = 44;
const MAX_DATA_BYTES = 0xffffffff - (WAV_HEADER_BYTES - CHUNK_HEADER_BYTES);

/** A canonical 44-byte-header WAVE file: 16-bit PCM, mono. */
export function writeWav(samples: Int16Array, sampleRate: number): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate > 0xffffffff) {
    throw new RangeError(`sample rate must be a positive integer, got ${sampleRate}`);
  }
  const dataBytes = samples.length * 2;
  if (dataBytes > MAX_DATA_BYTES) throw new RangeError(`${samples.length} samples do not fit in a WAV file`);
  const buf = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(WAV_HEADER_BYTES - CHUNK_HEADER_BYTES + dataBytes, 4);
  buf.write('WAVE', 8, 'latin1');
  buf.write('fmt ', 12, 'latin1');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'latin1');
  buf.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i++) buf.writeInt16LE(samples[i]!, WAV_HEADER_BYTES + i * 2);
  return buf;
}

// ---- resampling -------------------------------------------------------------------------------------------

/** Zero crossings of the sinc kept on each side of the centre tap: sets the transition band's width. */
const SINC_ZERO_CROSSINGS = 32;
/** Cut-off as a fraction of the lower Nyquist frequency, leaving room for the transition band below it. */
const CUTOFF_FRACTION = 0.9;
/** Kaiser window shape: about 80 dB of stop-band attenuation. */
const KAISER_BETA = 8;
/** Above this many phases the kernel is computed per output sample instead of tabulated. */
const MAX_TABULATED_PHASES = 1024;

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (power series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

/**
 * Converts the sample rate with a Kaiser-windowed sinc low-pass evaluated at each output instant (polyphase:
 * one set of taps per fractional position). The cut-off sits below the lower of the two Nyquist frequencies, so
 * downsampling (22 050 → 8 000 Hz) removes what would otherwise fold back as aliases.
 */
export function resamplePcm16(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  for (const [name, rate] of [
    ['fromRate', fromRate],
    ['toRate', toRate],
  ] as const) {
    if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`${name} must be a positive integer, got ${rate}`);
  }
  if (fromRate === toRate) return samples.slice();
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  const outLength = Math.round((samples.length * up) / down);
  const out = new Int16Array(outLength);
  if (samples.length === 0) return out;

  // Cut-off in cycles per input sample, and the kernel's half-width in input samples.
  const cutoff = 0.5 * Math.min(1, toRate / fromRate) * CUTOFF_FRACTION;
  const halfWidth = Math.ceil(SINC_ZERO_CROSSINGS / (2 * cutoff));
  const taps = 2 * halfWidth;
  const i0Beta = besselI0(KAISER_BETA);

  // Taps for input offsets j = -halfWidth+1 … halfWidth around floor(t), with frac = t - floor(t).
  const kernel = (frac: number, into: Float64Array): Float64Array => {
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      const x = k - halfWidth + 1 - frac;
      const r = x / halfWidth;
      if (r <= -1 || r >= 1) {
        into[k] = 0;
        continue;
      }
      const arg = 2 * cutoff * x;
      const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
      const w = besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta;
      into[k] = sinc * w;
      sum += into[k]!;
    }
    // Unit gain at DC for every phase, so a constant signal stays constant.
    for (let k = 0; k < taps; k++) into[k]! /= sum;
    return into;
  };

  let table: Float64Array[] | undefined;
  if (up <= MAX_TABULATED_PHASES) {
    table = [];
    for (let p = 0; p < up; p++) table.push(kernel(p / up, new Float64Array(taps)));
  }
  const scratch = new Float64Array(taps);
  const last = samples.length - 1;

  for (let n = 0; n < outLength; n++) {
    const pos = n * down; // output instant n, in units of 1/up input samples
    const base = Math.floor(pos / up);
    const phase = pos - base * up;
    const h = table ? table[phase]! : kernel(phase / up, scratch);
    const first = base - halfWidth + 1;
    const kFrom = Math.max(0, -first);
    const kTo = Math.min(taps, last - first + 1);
    let acc = 0;
    for (let k = kFrom; k < kTo; k++) acc += h[k]! * samples[first + k]!;
    const v = Math.round(acc);
    out[n] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}
