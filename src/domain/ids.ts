import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// One call into the CSPRNG per 4 KiB instead of two per id: ids are made on every hot path.
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = POOL_SIZE;

function random(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

const HEX_CODES = Buffer.from('0123456789abcdef', 'latin1');
/** The text of one id as it is written, reused: the id is read out of it as a flat one-byte string. */
const text = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');
/** Where each of the 16 bytes' two hex digits go in the text. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

function put(i: number, byte: number): void {
  text[AT[i]!] = HEX_CODES[byte >>> 4]!;
  text[AT[i]! + 1] = HEX_CODES[byte & 0x0f]!;
}

/**
 * RFC 9562 UUIDv7: 48-bit Unix milliseconds, then a 12-bit counter seeded randomly each millisecond so ids made
 * in the same millisecond by this process still sort in creation order. Time-ordered keys keep B-tree inserts
 * local (random v4 keys made SQLite inserts 3–4× slower). Written as text straight into a reused buffer (eight
 * ids or more a message).
 */
export function uuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = random(2).readUInt16BE(0) & 0x7ff;
  } else {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
  }
  const ms = lastMs;
  const high = Math.floor(ms / 2 ** 24);
  const low = ms % 2 ** 24;
  put(0, (high >>> 16) & 0xff);
  put(1, (high >>> 8) & 0xff);
  put(2, high & 0xff);
  put(3, (low >>> 16) & 0xff);
  put(4, (low >>> 8) & 0xff);
  put(5, low & 0xff);
  put(6, 0x70 | ((seq >>> 8) & 0x0f));
  put(7, seq & 0xff);
  const r = random(8);
  put(8, 0x80 | (r[0]! & 0x3f));
  for (let i = 1; i < 8; i++) put(8 + i, r[i]!);
  return text.toString('latin1', 0, 36);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
