import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SegmentedMessage } from 'sms-segments-calculator';
import {
  analyseText,
  decodeGsm7,
  decodeSmppText,
  decodeUcs2,
  encodeGsm7,
  encodeSmppText,
  encodeUcs2,
  exceedsPartLimit,
  gsm7Length,
  isGsm7,
  MAX_MESSAGE_PARTS,
  nonGsm7Characters,
  packSeptets,
  PART_LIMITS,
  TextError,
  unpackSeptets,
  type TextAnalysis,
} from '../../src/domain/text.ts';

const EMOJI = '😀';
const EXTENSION_CHARS = ['^', '{', '}', '\\', '[', ']', '~', '|', '€', '\f'];
const GSM_BASIC_CHARS = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** Checks what holds for every analysis: parts rebuild the text, fit their limit and split no pair. */
function assertWellFormed(text: string, a: TextAnalysis): void {
  assert.equal(a.parts.join(''), text, 'parts concatenate to the text');
  assert.equal(a.parts.length, a.messagePartCount);
  const limits = PART_LIMITS[a.encoding];
  const limit = a.messagePartCount === 1 ? limits.single : limits.multi;
  a.parts.forEach((part, i) => {
    const units = a.encoding === 'GSM7' ? gsm7Length(part) : part.length;
    assert.ok(units >= 0 && units <= limit, `part of ${units} units over ${limit}`);
    const last = part.charCodeAt(part.length - 1);
    const next = a.parts[i + 1]?.charCodeAt(0) ?? 0;
    const splitsPair = last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    assert.ok(!splitsPair, 'no part boundary falls inside a surrogate pair');
  });
}

function analyse(text: string, force?: 'GSM7' | 'UNICODE'): TextAnalysis {
  const a = analyseText(text, force);
  assertWellFormed(text, a);
  return a;
}

describe('analyseText: GSM-7', () => {
  it('counts 160 basic characters as one part', () => {
    const a = analyse('a'.repeat(160));
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['GSM7', 160, 1]);
  });

  it('splits 161 characters into 153 + 8', () => {
    const a = analyse('a'.repeat(161));
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['GSM7', 161, 2]);
    assert.deepEqual(
      a.parts.map((p) => p.length),
      [153, 8],
    );
  });

  it('fits 306 characters in 2 parts and needs 3 for 307', () => {
    assert.deepEqual(
      analyse('b'.repeat(306)).parts.map((p) => p.length),
      [153, 153],
    );
    const a = analyse('b'.repeat(307));
    assert.equal(a.messagePartCount, 3);
    assert.deepEqual(
      a.parts.map((p) => p.length),
      [153, 153, 1],
    );
  });

  it('counts each extension character as 2 septets', () => {
    for (const ch of EXTENSION_CHARS) {
      const a = analyse(`x${ch}y`);
      assert.equal(a.encoding, 'GSM7', `${JSON.stringify(ch)} is GSM-7`);
      assert.equal(a.length, 4, `${JSON.stringify(ch)} counts 2`);
    }
  });

  it('fits 80 × € in one part (160 septets) but not 81 (162 septets)', () => {
    const a80 = analyse('€'.repeat(80));
    assert.deepEqual([a80.encoding, a80.length, a80.messagePartCount], ['GSM7', 160, 1]);
    const a81 = analyse('€'.repeat(81));
    assert.deepEqual([a81.encoding, a81.length, a81.messagePartCount], ['GSM7', 162, 2]);
    // 76 € = 152 septets: a 77th would need 154.
    assert.deepEqual(
      a81.parts.map((p) => p.length),
      [76, 5],
    );
  });

  it('never splits an escape pair at a part boundary (152 a + € + 10 a)', () => {
    const text = 'a'.repeat(152) + '€' + 'a'.repeat(10);
    const a = analyse(text);
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['GSM7', 164, 2]);
    assert.equal(a.parts[0], 'a'.repeat(152));
    assert.equal(a.parts[1], '€' + 'a'.repeat(10));
  });

  it('takes the escape pair whole when it ends exactly on the boundary (151 a + €)', () => {
    const a = analyse('a'.repeat(151) + '€' + 'a'.repeat(10));
    assert.deepEqual(
      a.parts.map((p) => p.length),
      [152, 10],
    );
  });

  it('knows the Greek capitals of GSM 03.38 and not lowercase Greek', () => {
    const capitals = analyse('ΔΦΓΛΩΠΨΣΘΞ');
    assert.deepEqual([capitals.encoding, capitals.length], ['GSM7', 10]);
    for (const ch of ['α', 'β', 'δ', 'φ', 'ω', 'Α', 'Β']) {
      assert.equal(analyse(`x${ch}`).encoding, 'UNICODE', `${ch} is not GSM-7`);
    }
  });

  it('counts CR and LF as one septet each', () => {
    const a = analyse('line1\r\nline2\nline3\r');
    assert.deepEqual([a.encoding, a.length], ['GSM7', 19]);
  });

  it('knows Ç but not ç', () => {
    assert.equal(analyse('Ç'.repeat(70)).encoding, 'GSM7');
    const a = analyse('ç'.repeat(70));
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['UNICODE', 70, 1]);
    assert.deepEqual(
      analyse('ç'.repeat(71)).parts.map((p) => p.length),
      [67, 4],
    );
  });

  it('accepts every character of the basic table', () => {
    const a = analyse(GSM_BASIC_CHARS);
    assert.deepEqual([a.encoding, a.length], ['GSM7', 127]);
  });

  it('rejects characters that look like GSM but are not (backtick, NBSP, Latin-1 extras)', () => {
    for (const ch of ['`', '\u00a0', 'ê', 'â', 'í', 'ó', 'ú', 'ã', '\t', '\u001b']) {
      assert.equal(analyse(ch).encoding, 'UNICODE', `U+${ch.charCodeAt(0).toString(16)} is not GSM-7`);
    }
  });

  it('analyses the empty text as one empty GSM7 part', () => {
    assert.deepEqual(analyseText(''), { encoding: 'GSM7', length: 0, messagePartCount: 1, parts: [''] });
    assert.deepEqual(analyseText('', 'UNICODE'), { encoding: 'UNICODE', length: 0, messagePartCount: 1, parts: [''] });
  });
});

describe('analyseText: UCS-2', () => {
  it('counts UTF-16 units: 35 × 😀 is one part, 36 × 😀 two', () => {
    const a35 = analyse(EMOJI.repeat(35));
    assert.deepEqual([a35.encoding, a35.length, a35.messagePartCount], ['UNICODE', 70, 1]);
    const a36 = analyse(EMOJI.repeat(36));
    assert.deepEqual([a36.encoding, a36.length, a36.messagePartCount], ['UNICODE', 72, 2]);
    assert.deepEqual(
      a36.parts.map((p) => p.length),
      [66, 6],
    );
  });

  it('needs 3 parts for 67 × 😀 (66 units per part since pairs are not split)', () => {
    const a = analyse(EMOJI.repeat(67));
    assert.deepEqual([a.length, a.messagePartCount], [134, 3]);
    assert.deepEqual(
      a.parts.map((p) => p.length),
      [66, 66, 2],
    );
  });

  it('never splits a surrogate pair at a part boundary (66 a + 😀 + 10 a)', () => {
    const a = analyse('a'.repeat(66) + EMOJI + 'a'.repeat(10));
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['UNICODE', 78, 2]);
    assert.equal(a.parts[0], 'a'.repeat(66));
    assert.equal(a.parts[1], EMOJI + 'a'.repeat(10));
  });

  it('puts 150 a + 😀 in UCS-2: 152 units, 3 parts', () => {
    const a = analyse('a'.repeat(150) + EMOJI);
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['UNICODE', 152, 3]);
    assert.deepEqual(
      a.parts.map((p) => p.length),
      [67, 67, 18],
    );
  });

  it('counts an extension character as one unit in UCS-2', () => {
    const a = analyse('€ж');
    assert.deepEqual([a.encoding, a.length], ['UNICODE', 2]);
  });

  it('treats a lone surrogate as one non-GSM unit', () => {
    const a = analyse('ab\ud83d');
    assert.deepEqual([a.encoding, a.length], ['UNICODE', 3]);
    assert.deepEqual(
      analyse('a'.repeat(66) + '\ud83d' + 'b'.repeat(10)).parts.map((p) => p.length),
      [67, 10],
    );
  });
});

describe('analyseText: forced encoding', () => {
  it('forces UNICODE on plain GSM text', () => {
    const a = analyse('Hello €', 'UNICODE');
    assert.deepEqual([a.encoding, a.length, a.messagePartCount], ['UNICODE', 7, 1]);
    const long = analyse('a'.repeat(71), 'UNICODE');
    assert.deepEqual([long.encoding, long.messagePartCount], ['UNICODE', 2]);
  });

  it('accepts forced GSM7 on GSM text', () => {
    assert.deepEqual(analyseText('Hi {you}', 'GSM7'), analyseText('Hi {you}'));
  });

  it('rejects forced GSM7 on emoji with a TextError naming the characters', () => {
    assert.throws(
      () => analyseText(`ok ${EMOJI} ж ${EMOJI}`, 'GSM7'),
      (err: unknown) => {
        assert.ok(err instanceof TextError);
        assert.equal(err.code, 'NOT_GSM7');
        assert.match(err.message, /U\+1F600/);
        assert.match(err.message, /U\+0436/);
        return true;
      },
    );
  });

  it('rejects an unknown encoding name', () => {
    assert.throws(
      () => analyseText('x', 'UTF8' as 'GSM7'),
      (err: unknown) => err instanceof TextError && err.code === 'UNKNOWN_ENCODING',
    );
  });
});

describe('part limit', () => {
  it('exports 10 parts as the maximum', () => {
    assert.equal(MAX_MESSAGE_PARTS, 10);
  });

  it('accepts 10 parts and flags 11', () => {
    const ten = analyse('a'.repeat(153 * 10));
    assert.equal(ten.messagePartCount, 10);
    assert.equal(exceedsPartLimit(ten), false);
    const eleven = analyse('a'.repeat(153 * 10 + 1));
    assert.equal(eleven.messagePartCount, 11);
    assert.equal(exceedsPartLimit(eleven), true);
    const uTen = analyse('ж'.repeat(67 * 10));
    assert.equal(exceedsPartLimit(uTen), false);
    assert.equal(exceedsPartLimit(analyse('ж'.repeat(67 * 10 + 1))), true);
  });
});

describe('GSM-7 helpers', () => {
  it('measures septets or -1', () => {
    assert.equal(gsm7Length('a€'), 3);
    assert.equal(gsm7Length('aж'), -1);
    assert.equal(isGsm7('ΔÇ'), true);
    assert.equal(isGsm7('ç'), false);
  });

  it('lists distinct non-GSM characters, keeping surrogate pairs whole', () => {
    assert.deepEqual(nonGsm7Characters(`aç${EMOJI}bç${EMOJI}€`), ['ç', EMOJI]);
    assert.deepEqual(nonGsm7Characters('plain'), []);
  });
});

describe('GSM-7 bytes', () => {
  it('encodes basic characters by their 03.38 code and extension ones as ESC + code', () => {
    assert.deepEqual([...encodeGsm7('@£$Δ_ΩÇàaA')], [0x00, 0x01, 0x02, 0x10, 0x11, 0x15, 0x09, 0x7f, 0x61, 0x41]);
    assert.deepEqual(
      [...encodeGsm7('€[]{}~^|\\\f')],
      [0x1b, 0x65, 0x1b, 0x3c, 0x1b, 0x3e, 0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x3d, 0x1b, 0x14, 0x1b, 0x40, 0x1b, 0x2f, 0x1b, 0x0a],
    );
  });

  it('replaces non-GSM characters with ? (one per surrogate pair)', () => {
    assert.equal(encodeGsm7(`a${EMOJI}çb`).toString('latin1'), 'a??b');
  });

  it('round-trips every GSM character', () => {
    const all = GSM_BASIC_CHARS + EXTENSION_CHARS.join('');
    const bytes = encodeGsm7(all);
    assert.equal(bytes.length, 127 + 2 * EXTENSION_CHARS.length);
    assert.equal(decodeGsm7(bytes), all);
  });

  it('decodes unknown codes as ?, drops a lone trailing ESC', () => {
    assert.equal(decodeGsm7(Buffer.from([0x61, 0x80, 0xff, 0x62])), 'a??b');
    assert.equal(decodeGsm7(Buffer.from([0x61, 0x1b])), 'a');
    assert.equal(decodeGsm7(Buffer.from([0x1b, 0x90])), '?');
  });

  it('shows the basic character after ESC when the extension table has none (23.038)', () => {
    assert.equal(decodeGsm7(Buffer.from([0x1b, 0x41, 0x1b, 0x1b])), 'A ');
  });

  it('decodes the empty buffer', () => {
    assert.equal(decodeGsm7(Buffer.alloc(0)), '');
  });
});

describe('septet packing', () => {
  it('packs "hellohello" to the known vector', () => {
    const packed = packSeptets(encodeGsm7('hellohello'));
    assert.equal(packed.toString('hex'), 'e8329bfd4697d9ec37');
    assert.equal(decodeGsm7(unpackSeptets(packed, 10)), 'hellohello');
  });

  it('packs 8 septets into 7 octets', () => {
    const septets = Buffer.from([0x7f, 0x00, 0x7f, 0x00, 0x7f, 0x00, 0x7f, 0x00]);
    const packed = packSeptets(septets);
    assert.equal(packed.length, 7);
    assert.deepEqual(unpackSeptets(packed, 8), septets);
  });

  it('packs one septet after 1 fill bit (UDH alignment)', () => {
    // 'h' = 0x68 shifted by one bit = 0xd0.
    assert.equal(packSeptets(Buffer.from([0x68]), 1).toString('hex'), 'd0');
    assert.equal(unpackSeptets(Buffer.from([0xd0]), 1, 1)[0], 0x68);
  });

  it('round-trips random septets with every fill bit count', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0x7f;
    for (let fill = 0; fill <= 6; fill++) {
      for (let n = 0; n < 40; n++) {
        const septets = Buffer.from(Array.from({ length: n }, rand));
        const packed = packSeptets(septets, fill);
        assert.equal(packed.length, Math.ceil((fill + 7 * n) / 8));
        if (fill > 0 && packed.length > 0) assert.equal(packed[0]! & ((1 << fill) - 1), 0, 'fill bits are zero');
        assert.deepEqual(unpackSeptets(packed, n, fill), septets);
      }
    }
  });

  it('rejects impossible counts and fill bits', () => {
    assert.throws(() => unpackSeptets(Buffer.alloc(7), 9), RangeError);
    assert.throws(() => unpackSeptets(Buffer.alloc(1), 1, 2), RangeError);
    assert.throws(() => unpackSeptets(Buffer.alloc(1), -1), RangeError);
    assert.throws(() => packSeptets(Buffer.alloc(1), 7), RangeError);
    assert.throws(() => packSeptets(Buffer.alloc(1), 1.5), RangeError);
    assert.equal(unpackSeptets(Buffer.alloc(7), 8).length, 8);
  });
});

describe('SMPP text', () => {
  it('encodes GSM text as data_coding 0 and other text as UCS-2 big-endian data_coding 8', () => {
    assert.deepEqual(encodeSmppText('@€', 'GSM7'), { dataCoding: 0, bytes: Buffer.from([0x00, 0x1b, 0x65]) });
    const u = encodeSmppText(`ж${EMOJI}`, 'UNICODE');
    assert.equal(u.dataCoding, 8);
    assert.equal(u.bytes.toString('hex'), '0436d83dde00');
  });

  it('round-trips UCS-2 with surrogate pairs kept', () => {
    const text = `Grüße ж 中文 ${EMOJI}€`;
    assert.equal(decodeSmppText(encodeUcs2(text), 8), text);
    assert.equal(decodeUcs2(encodeUcs2(text)), text);
  });

  it('drops an odd trailing UCS-2 octet and leaves its input untouched', () => {
    const buf = Buffer.from([0x00, 0x41, 0x04, 0x36, 0x00]);
    assert.equal(decodeSmppText(buf, 8), 'Aж');
    assert.deepEqual([...buf], [0x00, 0x41, 0x04, 0x36, 0x00]);
  });

  it('round-trips GSM-7 and Latin-1', () => {
    const gsm = 'Hello @ {world} €5 ΔΩ ÇÅ';
    assert.equal(decodeSmppText(encodeGsm7(gsm), 0), gsm);
    const latin = 'çà ôê ÿ ±';
    assert.equal(decodeSmppText(Buffer.from(latin, 'latin1'), 3), latin);
  });

  it('decodes IA5, binary and unknown codings', () => {
    assert.equal(decodeSmppText(Buffer.from('Hi @ there', 'ascii'), 1), 'Hi @ there');
    assert.equal(decodeSmppText(Buffer.from([0x00, 0xe9, 0x41]), 4), '\u0000éA');
    // An unknown SMPP value falls back to GSM-7: 0x00 is '@', not NUL.
    assert.equal(decodeSmppText(Buffer.from([0x00, 0x41]), 0x0b), '@A');
  });

  it('reads the alphabet of 3GPP 23.038 coding groups', () => {
    assert.equal(decodeSmppText(Buffer.from([0x04, 0x36]), 0x18), 'ж', 'class 0 UCS-2 (flash)');
    assert.equal(decodeSmppText(Buffer.from([0x00, 0x41]), 0x10), '@A', 'class 0 GSM-7');
    assert.equal(decodeSmppText(Buffer.from([0xe9]), 0xf4), 'é', 'class 0 8-bit');
    assert.equal(decodeSmppText(Buffer.from([0x00]), 0xf0), '@', 'class 0 GSM-7');
  });

  it('decodes from a Buffer slice without reading outside it', () => {
    const whole = Buffer.from([0x05, 0x00, 0x03, 0x01, 0x02, 0x01, 0x61, 0x62, 0xe9]);
    assert.equal(decodeSmppText(whole.subarray(6, 8), 3), 'ab');
    assert.equal(decodeSmppText(whole.subarray(6, 8), 8), '慢');
  });
});

/** Deterministic PRNG so a failing case can be replayed from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('agreement with sms-segments-calculator', () => {
  // No combining marks, ZWJ, modifiers, regional indicators or Hangul: the oracle keeps grapheme clusters whole,
  // an SMS does not, so only single-code-point graphemes compare like for like.
  const NON_GSM = ['ç', 'á', 'ł', 'ж', 'Я', '中', '`', '«', 'α', '\u00a0', '–', '’'];
  const ASTRAL = [EMOJI, '🚀', '🎉', '𝄞', '🙂'];
  const GSM = [...GSM_BASIC_CHARS];

  function randomText(rand: () => number): string {
    const pNonGsm = rand() < 0.5 ? 0 : rand() * 0.05;
    const pAstral = rand() < 0.6 ? 0 : rand() * 0.05;
    const pExt = rand() * 0.2;
    const length = Math.floor(rand() * (rand() < 0.5 ? 400 : 1700));
    let text = '';
    for (let i = 0; i < length; i++) {
      const r = rand();
      const pool = r < pAstral ? ASTRAL : r < pAstral + pNonGsm ? NON_GSM : r < pAstral + pNonGsm + pExt ? EXTENSION_CHARS : GSM;
      text += pool[Math.floor(rand() * pool.length)]!;
    }
    return text;
  }

  it('agrees on encoding and part count for 400 random texts', () => {
    const seed = 20240611;
    const rand = mulberry32(seed);
    let multi = 0;
    for (let n = 0; n < 400; n++) {
      const text = randomText(rand);
      const ours = analyse(text);
      const oracle = new SegmentedMessage(text);
      const context = `seed ${seed} case ${n}: ${JSON.stringify(text.slice(0, 40))}… (${text.length} units)`;
      assert.equal(ours.encoding, oracle.encodingName === 'GSM-7' ? 'GSM7' : 'UNICODE', context);
      assert.equal(ours.messagePartCount, oracle.segmentsCount, context);
      if (ours.encoding === 'GSM7') assert.equal(ours.length, oracle.numberOfCharacters, context);
      if (ours.messagePartCount > 1) multi++;
    }
    assert.ok(multi > 100, `the sample exercises splitting (${multi} multipart texts)`);
  });

  it('agrees on part count when UCS-2 is forced', () => {
    const rand = mulberry32(99);
    for (let n = 0; n < 200; n++) {
      const text = randomText(rand);
      const ours = analyse(text, 'UNICODE');
      assert.equal(ours.messagePartCount, new SegmentedMessage(text, 'UCS-2').segmentsCount, `case ${n}`);
    }
  });
});
