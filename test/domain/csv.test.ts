import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CsvError, parseCsv, separatorOf, toCsv } from '../../src/domain/csv.ts';

const isCsvError = (line: number, reason: RegExp) => (e: unknown) =>
  e instanceof CsvError && e.line === line && reason.test(e.reason) && e.message.startsWith(`line ${line}: `);

test('csv records keep empty fields and count lines inside quoted fields', () => {
  assert.deepEqual(parseCsv('a;;c\r\n"x\ny";z\nlast', ';'), [
    { line: 1, fields: ['a', '', 'c'] },
    { line: 2, fields: ['x\ny', 'z'] },
    { line: 4, fields: ['last'] },
  ]);
});

test('the separator is the one the first record uses most outside quotes; the caller’s choice on a tie', () => {
  assert.equal(separatorOf('a;b,c;d\n1,2,3,4,5'), ';');
  assert.equal(separatorOf('a,b;c,d'), ',');
  assert.equal(separatorOf('"a;b;c",d\n'), ',');
  assert.equal(separatorOf('"x\ny;z;w",a,b;c'), ',', 'a quoted line break is still the first record');
  assert.equal(separatorOf('number\r1;2;3'), ',', 'a lone CR ends the first record');
  assert.equal(separatorOf('number\n1;2;3'), ',');
  assert.equal(separatorOf('number\n1;2;3', ';'), ';');
  assert.equal(separatorOf('a,b;c', ';'), ';');
  assert.equal(separatorOf(''), ',');
  assert.deepEqual(parseCsv('\uFEFFa;b,c;d\n1;2,3'), [
    { line: 1, fields: ['a', 'b,c', 'd'] },
    { line: 2, fields: ['1', '2,3'] },
  ]);
});

test('LF, CRLF and CR end records; blank records are left out but counted; a byte order mark is dropped', () => {
  assert.deepEqual(parseCsv('\uFEFFa,b\r\n\r\n  ,\t\rc,d\re\n,\n"",""\n"f\r\ng\rh",i'), [
    { line: 1, fields: ['a', 'b'] },
    { line: 4, fields: ['c', 'd'] },
    { line: 5, fields: ['e'] },
    { line: 8, fields: ['f\r\ng\rh', 'i'] },
  ]);
  assert.deepEqual(parseCsv(''), []);
  assert.deepEqual(parseCsv('\uFEFF'), []);
  assert.deepEqual(parseCsv('\n\r\n \n'), []);
  assert.deepEqual(parseCsv('a,\n,b'), [
    { line: 1, fields: ['a', ''] },
    { line: 2, fields: ['', 'b'] },
  ]);
});

test('a quote opens a field only at its start; "" inside a quoted field is one quote', () => {
  assert.deepEqual(parseCsv('He said "hi",x\n "a",b'), [
    { line: 1, fields: ['He said "hi"', 'x'] },
    { line: 2, fields: [' "a"', 'b'] },
  ]);
  assert.deepEqual(parseCsv('"say ""hi""","",""""'), [{ line: 1, fields: ['say "hi"', '', '"'] }]);
});

test('a malformed text is a CsvError naming the line it goes wrong on', () => {
  assert.throws(() => parseCsv('a,b\n1,"open\nstill open'), isCsvError(2, /^a quoted field is not closed$/));
  assert.throws(() => parseCsv('a;"x"y;z', ';'), isCsvError(1, /^text after the closing quote of a field$/));
  assert.throws(() => parseCsv('a,b\n"two\nlines"x,b'), isCsvError(3, /^text after the closing quote/));
  assert.throws(() => parseCsv('"""'), isCsvError(1, /not closed/));
  assert.throws(() => parseCsv('x\n"'), isCsvError(2, /not closed/));
});

test('the writer quotes what the reader would read otherwise, and ends each record with CRLF', () => {
  assert.equal(
    toCsv([
      ['a', 'b'],
      [1, null, undefined, 2.5],
    ]),
    'a,b\r\n1,,,2.5\r\n',
  );
  assert.equal(toCsv([['x,y', 'p;q', 'say "hi"', 'a\nb', 'c\rd', '\uFEFFe']]), '"x,y","p;q","say ""hi""","a\nb","c\rd","\uFEFFe"\r\n');
  assert.equal(toCsv([]), '');
});

/** Fields made of what CSV gets wrong most: separators, quotes, line breaks, blanks, byte order marks. */
const field = fc.string({ unit: fc.constantFrom('a', 'Z', '7', 'é', '☺', ' ', '\t', ',', ';', '"', '\r', '\n', '\uFEFF'), maxLength: 12 });
const notBlank = (fields: string[]) => fields.some((f) => f.trim() !== '');
const records = fc.array(fc.array(field, { minLength: 1, maxLength: 5 }).filter(notBlank), { maxLength: 8 });

test('what the writer writes, the reader reads back, with or without a byte order mark, each at its line (property)', () => {
  fc.assert(
    fc.property(records, fc.boolean(), (rows, bom) => {
      const text = toCsv(rows);
      const read = parseCsv(bom ? `\uFEFF${text}` : text);
      assert.deepEqual(
        read.map((r) => r.fields),
        rows,
      );
      // Each record starts on the line after every line break written before it.
      let before = 0;
      rows.forEach((row, i) => {
        assert.equal(read[i]!.line, 1 + before);
        before += (toCsv([row]).match(/\r\n|\r|\n/g) ?? []).length;
      });
    }),
    { seed: 20261207, numRuns: 2000 },
  );
});

test('blank records are left out of what is read back (property)', () => {
  const blank = fc.array(fc.constantFrom('', ' ', '\t'), { minLength: 1, maxLength: 3 });
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.array(field, { minLength: 1, maxLength: 4 }), blank), { maxLength: 8 }), (rows) => {
      assert.deepEqual(
        parseCsv(toCsv(rows)).map((r) => r.fields),
        rows.filter(notBlank),
      );
    }),
    { seed: 20261207, numRuns: 1000 },
  );
});

test('any text is read, or refused with a CsvError on one of its lines (property)', () => {
  const text = fc.string({ unit: fc.constantFrom('a', ' ', ',', ';', '"', '\r', '\n', '\uFEFF'), maxLength: 40 });
  fc.assert(
    fc.property(text, fc.constantFrom<',' | ';' | undefined>(',', ';', undefined), (t, sep) => {
      const lines = t.split(/\r\n|\r|\n/).length;
      try {
        const read = parseCsv(t, sep);
        for (const r of read) assert.ok(r.line >= 1 && r.line <= lines && r.fields.some((f) => f.trim() !== ''));
        assert.deepEqual(
          read.map((r) => r.line),
          [...new Set(read.map((r) => r.line))].sort((a, b) => a - b),
        );
      } catch (e) {
        assert.ok(e instanceof CsvError, String(e));
        assert.ok(e.line >= 1 && e.line <= lines, `line ${e.line} of ${lines}`);
      }
    }),
    { seed: 20261207, numRuns: 3000 },
  );
});
