/**
 * G.711 (ITU-T), the narrow-band telephone codecs every SIP trunk takes: 16-bit linear PCM at 8 kHz companded to
 * 8 bits a sample, A-law (PCMA, Europe) or µ-law (PCMU, North America and Japan).
 */
export type G711Codec = 'PCMA' | 'PCMU';

/** RTP static payload types (RFC 3551). */
export const PAYLOAD_TYPES: Readonly<Record<G711Codec, number>> = { PCMU: 0, PCMA: 8 };

/** Where each A-law segment ends, on the 13-bit magnitude. */
const SEGMENT_ENDS = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

function segment(value: number): number {
  for (let i = 0; i < SEGMENT_ENDS.length; i++) if (value <= SEGMENT_ENDS[i]!) return i;
  return SEGMENT_ENDS.length;
}

/** One 16-bit sample to A-law. */
export function linearToAlaw(sample: number): number {
  let pcm = sample >> 3; // 13 significant bits
  let mask: number;
  if (pcm >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  const seg = segment(pcm);
  if (seg >= 8) return 0x7f ^ mask;
  const aval = (seg << 4) | (seg < 2 ? (pcm >> 1) & 0x0f : (pcm >> seg) & 0x0f);
  return aval ^ mask;
}

/** One A-law byte back to 16-bit linear (for checks). */
export function alawToLinear(value: number): number {
  const a = value ^ 0x55;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

const BIAS = 0x84;
const CLIP = 32635;

/** One 16-bit sample to µ-law. */
export function linearToUlaw(sample: number): number {
  let pcm = sample;
  const sign = pcm < 0 ? 0x80 : 0;
  if (sign) pcm = -pcm;
  if (pcm > CLIP) pcm = CLIP;
  pcm += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (pcm >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** One µ-law byte back to 16-bit linear (for checks). */
export function ulawToLinear(value: number): number {
  const u = ~value & 0xff;
  const t = (((u & 0x0f) << 3) + BIAS) << ((u & 0x70) >> 4);
  return u & 0x80 ? BIAS - t : t - BIAS;
}

/** 16-bit linear PCM to the codec's bytes, one a sample. */
export function encodeG711(samples: Int16Array, codec: G711Codec): Buffer {
  const out = Buffer.alloc(samples.length);
  const encode = codec === 'PCMA' ? linearToAlaw : linearToUlaw;
  for (let i = 0; i < samples.length; i++) out[i] = encode(samples[i]!);
  return out;
}

/** The codec's bytes back to 16-bit linear PCM. */
export function decodeG711(bytes: Uint8Array, codec: G711Codec): Int16Array {
  const out = new Int16Array(bytes.length);
  const decode = codec === 'PCMA' ? alawToLinear : ulawToLinear;
  for (let i = 0; i < bytes.length; i++) out[i] = decode(bytes[i]!);
  return out;
}

/** The codec's silence byte (what a pause between repeats is made of). */
export function silenceByte(codec: G711Codec): number {
  return codec === 'PCMA' ? linearToAlaw(0) : linearToUlaw(0);
}
