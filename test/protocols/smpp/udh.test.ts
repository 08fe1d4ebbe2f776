import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildConcatUdh, parseUdh, splitForSmpp, UdhError } from '../../../src/protocols/smpp/udh.ts';
import { decodeGsm7, decodeSmppText, TextError } from '../../../src/domain/text.ts';

describe('buildConcatUdh', () => {
  it('builds the 6-octet header with an 8-bit reference', () => {
    assert.equal(buildConcatUdh(0x42, 3, 2).toString('hex'), '050003420302');
  });

  it('builds the 7-octet header with a 16-bit reference', () => {
    assert.equal(buildConcatUdh(0x1234, 3, 1, true).toString('hex'), '06080412340301');
  });

  it('rejects out-of-range references, totals and sequences', () => {
    assert.throws(() => buildConcatUdh(256, 2, 1), RangeError);
    assert.throws(() => buildConcatUdh(-1, 2, 1), RangeError);
    assert.throws(() => buildConcatUdh(0x10000, 2, 1, true), RangeError);
    assert.throws(() => buildConcatUdh(1, 0, 1), RangeError);
    assert.throws(() => buildConcatUdh(1, 256, 1), RangeError);
    assert.throws(() => buildConcatUdh(1, 2, 0), RangeError);
    assert.throws(() => buildConcatUdh(1, 2, 3), RangeError);
    assert.throws(() => buildConcatUdh(1.5, 2, 1), RangeError);
    assert.equal(buildConcatUdh(0xffff, 255, 255, true).toString('hex'), '060804ffffffff');
  });
});

describe('parseUdh', () => {
  it('reads back an 8-bit and a 16-bit concatenation header', () => {
    assert.deepEqual(parseUdh(buildConcatUdh(200, 4, 3)), {
      headerLength: 6,
      concat: { ref: 200, total: 4, seq: 3, wide16bit: false },
    });
    assert.deepEqual(parseUdh(buildConcatUdh(0xabcd, 2, 2, true)), {
      headerLength: 7,
      concat: { ref: 0xabcd, total: 2, seq: 2, wide16bit: true },
    });
  });

  it('reads the header at the start of a whole short_message and says where the text starts', () => {
    const sm = Buffer.concat([buildConcatUdh(9, 2, 1), Buffer.from('hello', 'latin1')]);
    const udh = parseUdh(sm);
    assert.equal(udh.headerLength, 6);
    assert.equal(sm.subarray(udh.headerLength).toString('latin1'), 'hello');
  });

  it('skips other information elements around the concatenation one', () => {
    // Port addressing (0x05, 4 octets), then concat, then an unknown IE 0x70 of 1 octet.
    const buf = Buffer.from('0e' + '050400000000' + '000307' + '0201' + '7001ff', 'hex');
    assert.equal(buf.length, 15);
    assert.deepEqual(parseUdh(buf), { headerLength: 15, concat: { ref: 7, total: 2, seq: 1, wide16bit: false } });
  });

  it('returns no concat when the header has none', () => {
    assert.deepEqual(parseUdh(Buffer.from('0405020b84', 'hex')), { headerLength: 5 });
    assert.deepEqual(parseUdh(Buffer.from([0x00])), { headerLength: 1 });
  });

  it('ignores a concatenation IE with a zero or impossible sequence, and says so', () => {
    assert.deepEqual(parseUdh(Buffer.from('050003010200', 'hex')), { headerLength: 6, invalidConcat: true });
    assert.deepEqual(parseUdh(Buffer.from('050003010203', 'hex')), { headerLength: 6, invalidConcat: true });
    assert.deepEqual(parseUdh(Buffer.from('050003010001', 'hex')), { headerLength: 6, invalidConcat: true });
  });

  it('throws on a malformed header', () => {
    const malformed: Array<[string, string]> = [
      ['', 'empty'],
      ['0500030102', 'header length past the buffer'],
      ['06000301020300', 'a stray octet too short to be an IE'],
      ['0400050102', 'IE data past the header'],
      ['0400020102', 'concat IE of the wrong length'],
      ['050803010203', 'wide concat IE of the wrong length'],
      ['050804010203', 'wide concat IE past the header'],
    ];
    for (const [hex, why] of malformed) {
      assert.throws(() => parseUdh(Buffer.from(hex, 'hex')), UdhError, why);
    }
  });
});

describe('splitForSmpp', () => {
  it('sends a text that fits one part without UDH', () => {
    const parts = splitForSmpp('Hello €', undefined, 1);
    assert.equal(parts.length, 1);
    assert.equal(parts[0]!.udh, undefined);
    assert.equal(parts[0]!.dataCoding, 0);
    assert.equal(parts[0]!.bytes.toString('hex'), '48656c6c6f201b65');
  });

  it('splits long GSM text with one concat UDH per part', () => {
    const text = 'a'.repeat(152) + '€' + 'b'.repeat(200);
    const parts = splitForSmpp(text, undefined, 0x1ff);
    assert.equal(parts.length, 3);
    parts.forEach((part, i) => {
      assert.equal(part.dataCoding, 0);
      assert.deepEqual(parseUdh(part.udh!).concat, { ref: 0xff, total: 3, seq: i + 1, wide16bit: false });
      assert.ok(part.bytes.length <= 153, 'a part holds at most 153 septets');
    });
    assert.equal(parts[0]!.bytes.length, 152);
    assert.deepEqual([...parts[1]!.bytes.subarray(0, 2)], [0x1b, 0x65], 'the escape pair starts part 2 whole');
    assert.equal(parts.map((p) => decodeGsm7(p.bytes)).join(''), text);
  });

  it('splits long UCS-2 text without breaking surrogate pairs', () => {
    const text = 'ж'.repeat(66) + '😀' + 'x'.repeat(10);
    const parts = splitForSmpp(text, undefined, 5);
    assert.equal(parts.length, 2);
    assert.deepEqual(
      parts.map((p) => [p.dataCoding, p.bytes.length]),
      [
        [8, 132],
        [8, 24],
      ],
    );
    assert.equal(parts.map((p) => decodeSmppText(p.bytes, 8)).join(''), text);
  });

  it('forces UCS-2 when asked', () => {
    const [only] = splitForSmpp('Hi', 'UNICODE', 0);
    assert.equal(only!.dataCoding, 8);
    assert.equal(only!.bytes.toString('hex'), '00480069');
  });

  it('rejects forced GSM7 on non-GSM text and texts beyond 255 parts', () => {
    assert.throws(
      () => splitForSmpp('😀', 'GSM7', 0),
      (e: unknown) => e instanceof TextError && e.code === 'NOT_GSM7',
    );
    assert.throws(
      () => splitForSmpp('a'.repeat(153 * 255 + 1), undefined, 0),
      (e: unknown) => e instanceof TextError && e.code === 'TOO_MANY_PARTS',
    );
    assert.equal(splitForSmpp('a'.repeat(153 * 255), undefined, 0).length, 255);
  });
});
