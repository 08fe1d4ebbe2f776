import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreError } from '../../../src/core/errors.ts';
import { MAX_BATCH_ROWS, parseBatchFile } from '../../../src/doors/legacy/csv.ts';
import { boundaryOf, headerParams, parseMultipart } from '../../../src/doors/legacy/multipart.ts';

const isError = (field: string, reason: RegExp) => (e: unknown) => e instanceof CoreError && e.field === field && reason.test(e.reason);

test('batch file: ; separated, with a header, quoted fields with separators, quotes and line breaks', () => {
  const rows = parseBatchFile(
    'numero;message;emetteur;ref\r\n33612345678;Bonjour, ça va ?;SHOP;r1\r\n"0612345679";"Deux; lignes\r\nici, ""oui""";;\r\n\r\n33612345670;Sans émetteur\n',
  );
  assert.deepEqual(rows, [
    { line: 2, numero: '33612345678', message: 'Bonjour, ça va ?', emetteur: 'SHOP', ref: 'r1' },
    { line: 3, numero: '0612345679', message: 'Deux; lignes\r\nici, "oui"', emetteur: '', ref: '' },
    { line: 6, numero: '33612345670', message: 'Sans émetteur', emetteur: '', ref: '' },
  ]);
});

test('batch file: the manual’s comma-separated example, quoted header and all', () => {
  const rows = parseBatchFile(
    '"numero","message","emetteur"\n"33612345678","This is the body of the message 1, test fichier CSV","RDV","ref123"\n33612345679,"Body 2, test",""\n',
  );
  assert.deepEqual(rows, [
    { line: 2, numero: '33612345678', message: 'This is the body of the message 1, test fichier CSV', emetteur: 'RDV', ref: 'ref123' },
    { line: 3, numero: '33612345679', message: 'Body 2, test', emetteur: '', ref: '' },
  ]);
});

test('batch file: a byte order mark and no header; the separator the first row uses most', () => {
  assert.deepEqual(parseBatchFile('\uFEFF33612345678;a, b, c;X'), [{ line: 1, numero: '33612345678', message: 'a, b, c', emetteur: 'X', ref: '' }]);
  assert.deepEqual(parseBatchFile('33612345678,a; b,X'), [{ line: 1, numero: '33612345678', message: 'a; b', emetteur: 'X', ref: '' }]);
});

test('batch file errors name the line', () => {
  assert.throws(() => parseBatchFile(''), isError('fichier', /no row/));
  assert.throws(() => parseBatchFile('numero;message\n'), isError('fichier', /no row/));
  assert.throws(() => parseBatchFile('33612345678;ok\n;no number\n'), isError('fichier', /^line 2: numero is empty/));
  assert.throws(() => parseBatchFile('33612345678;ok\n33612345679\n'), isError('fichier', /^line 2: message is empty/));
  assert.throws(() => parseBatchFile('33612345678;a;b;c;d\n'), isError('fichier', /^line 1: 5 columns/));
  assert.throws(() => parseBatchFile('33612345678;"open\nstill open'), isError('fichier', /^line 1: a quoted field is not closed/));
  assert.throws(() => parseBatchFile('33612345678;"a"b;X'), isError('fichier', /^line 1: text after the closing quote/));
  assert.throws(() => parseBatchFile('33612345678;x\n'.repeat(MAX_BATCH_ROWS + 1)), isError('fichier', /at most 10000 rows/));
});

test('multipart: boundary, fields and files as bytes', () => {
  assert.equal(boundaryOf('multipart/form-data; boundary=----abc'), '----abc');
  assert.equal(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b"'), 'a b');
  assert.equal(boundaryOf('multipart/form-data'), null);
  assert.deepEqual(
    [...headerParams('form-data; name="fichier"; filename="a \\"b\\".csv"')],
    [
      ['name', 'fichier'],
      ['filename', 'a "b".csv'],
    ],
  );

  const body = Buffer.concat([
    Buffer.from('preamble\r\n--XyZ\r\nContent-Disposition: form-data; name="accessToken"\r\n\r\nkey\r\n--XyZ\r\n'),
    Buffer.from('Content-Disposition: form-data; name="fichier"; filename="f.csv"\r\nContent-Type: text/csv\r\n\r\n'),
    Buffer.from([0x33, 0x36, 0x3b, 0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a]),
    Buffer.from('\r\n--XyZ--\r\n'),
  ]);
  const parts = parseMultipart(body, 'XyZ');
  assert.equal(parts.length, 2);
  assert.deepEqual([parts[0]!.name, parts[0]!.filename, Buffer.from(parts[0]!.data).toString()], ['accessToken', null, 'key']);
  assert.deepEqual([parts[1]!.name, parts[1]!.filename, parts[1]!.contentType], ['fichier', 'f.csv', 'text/csv']);
  assert.deepEqual([...parts[1]!.data], [0x33, 0x36, 0x3b, 0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a]);
});

test('multipart: malformed bodies are errors of the request', () => {
  const malformed = (e: unknown) => e instanceof CoreError && e.kind === 'INVALID_REQUEST' && /multipart\/form-data body is malformed/.test(e.reason);
  assert.throws(() => parseMultipart(Buffer.from('no boundary here'), 'B'), malformed);
  assert.throws(() => parseMultipart(Buffer.from('--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever closed'), 'B'), malformed);
  assert.throws(() => parseMultipart(Buffer.from('--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--'), 'B'), malformed);
  assert.throws(() => parseMultipart(Buffer.from('--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--'), 'B'), malformed);
  assert.throws(() => parseMultipart(Buffer.from('--Bjunk'), 'B'), malformed);
  const many = Buffer.from(`${'--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n'.repeat(101)}--B--`);
  assert.throws(() => parseMultipart(many, 'B'), malformed);
});
