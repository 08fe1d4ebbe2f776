import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreError } from '../../../src/core/errors.ts';
import {
  answerCharset,
  charsetNamed,
  decodeIso885915,
  decodeValue,
  encodeText,
  parseUrlEncoded,
  percentDecode,
  requestCharset,
} from '../../../src/doors/legacy/charset.ts';

const bytes = (...b: number[]) => Uint8Array.from(b);
const ascii = (s: string) => Buffer.from(s, 'latin1');

test('ISO-8859-15: Latin-1 except eight positions, and the manual’s %80 for €', () => {
  assert.equal(decodeIso885915(bytes(0x63, 0x61, 0x66, 0xe9)), 'café');
  assert.equal(decodeIso885915(bytes(0xa4, 0xa6, 0xa8, 0xb4, 0xb8, 0xbc, 0xbd, 0xbe)), '€ŠšŽžŒœŸ');
  assert.equal(decodeIso885915(bytes(0xa3, 0xa7, 0xbf, 0xc4, 0xdf, 0xff)), '£§¿Äßÿ');
  assert.equal(decodeIso885915(bytes(0x80)), '€');
});

test('percent-decoding: + is a space, %XX a byte, a broken escape stands for itself', () => {
  assert.deepEqual([...percentDecode(ascii('a+b%20c%e9%E9'))], [0x61, 0x20, 0x62, 0x20, 0x63, 0xe9, 0xe9]);
  assert.deepEqual([...percentDecode(ascii('%'))], [0x25]);
  assert.deepEqual([...percentDecode(ascii('%zz%4'))], [...ascii('%zz%4')]);
  assert.deepEqual([...percentDecode(ascii('%2B'))], [0x2b]);
});

test('url-encoded pairs keep their bytes, in order, with empty values and names', () => {
  const pairs = parseUrlEncoded(ascii('message=caf%E9&numero=336&&flag&=x&a=1=2'));
  assert.deepEqual(
    pairs.map((p) => [Buffer.from(p.name).toString('latin1'), Buffer.from(p.value).toString('latin1')]),
    [
      ['message', 'caf\u00e9'],
      ['numero', '336'],
      ['flag', ''],
      ['', 'x'],
      ['a', '1=2'],
    ],
  );
});

test('auto: UTF-8 when the bytes are UTF-8 with a multi-byte sequence, else ISO-8859-15', () => {
  assert.equal(decodeValue(bytes(0x63, 0x61, 0x66, 0xc3, 0xa9), 'auto', 'message'), 'café');
  assert.equal(decodeValue(bytes(0x63, 0x61, 0x66, 0xe9), 'auto', 'message'), 'café');
  assert.equal(decodeValue(bytes(0xe2, 0x82, 0xac), 'auto', 'message'), '€');
  assert.equal(decodeValue(bytes(0xa4), 'auto', 'message'), '€');
  // CESU-8 surrogates are not UTF-8: read as ISO-8859-15.
  assert.equal(decodeValue(bytes(0xed, 0xa0, 0x80), 'auto', 'message'), '\u00ed\u00a0€');
  assert.equal(decodeValue(ascii('plain'), 'auto', 'message'), 'plain');
});

test('declared charsets: UTF-8 refuses other bytes naming the parameter and why; ISO charsets read every byte', () => {
  assert.equal(decodeValue(bytes(0xe2, 0x98, 0xba), 'utf-8', 'message'), '☺');
  assert.throws(
    () => decodeValue(bytes(0xe9), 'utf-8', 'message', 'classe_msg=9'),
    (e: unknown) => e instanceof CoreError && e.kind === 'INVALID_REQUEST' && e.field === 'message' && /not valid UTF-8 \(classe_msg=9\)/.test(e.reason),
  );
  assert.equal(decodeValue(bytes(0xc3, 0xa9), 'iso-8859-15', 'message'), 'Ã©');
  assert.equal(decodeValue(bytes(0xa4), 'iso-8859-1', 'message'), '¤');
  assert.equal(decodeValue(bytes(0xa4), 'iso-8859-15', 'message'), '€');
});

test('a NUL character is refused, naming the parameter', () => {
  assert.throws(
    () => decodeValue(bytes(0x61, 0x00, 0x62), 'auto', 'emetteur'),
    (e: unknown) => e instanceof CoreError && e.field === 'emetteur' && /NUL/.test(e.reason),
  );
});

test('which charset a request says: charset wins, then classe_msg=9, then the Content-Type', () => {
  assert.equal(requestCharset({}).charset, 'auto');
  assert.equal(requestCharset({ classe_msg: '2' }).charset, 'auto');
  assert.equal(requestCharset({ classe_msg: '9' }).charset, 'utf-8');
  assert.equal(requestCharset({}, 'utf-8').charset, 'utf-8');
  assert.equal(requestCharset({ charset: 'ISO-8859-15', classe_msg: '9' }).charset, 'iso-8859-15');
  assert.equal(requestCharset({ charset: 'utf8' }, 'iso-8859-1').charset, 'utf-8');
  assert.equal(requestCharset({ charset: ' ' }).charset, 'auto');
  assert.throws(
    () => requestCharset({ charset: 'UTF-16' }),
    (e: unknown) => e instanceof CoreError && e.field === 'charset',
  );
  assert.equal(charsetNamed('"Latin1"'), 'iso-8859-1');
  assert.equal(charsetNamed('windows-1252'), null);
});

test('answers: ISO-8859-15 bytes round-trip its characters, and what it lacks is ?', () => {
  assert.deepEqual([...encodeText('café €ŠšŽžŒœŸ', 'iso-8859-15')], [0x63, 0x61, 0x66, 0xe9, 0x20, 0xa4, 0xa6, 0xa8, 0xb4, 0xb8, 0xbc, 0xbd, 0xbe]);
  // ¤ ¦ ¨ ´ ¸ ¼ ½ ¾ are Latin-1's, replaced in ISO-8859-15; an emoji is one character, one ?.
  assert.equal(encodeText('¤¦¨´¸¼½¾', 'iso-8859-15').toString('latin1'), '????????');
  assert.equal(encodeText('a🙂b', 'iso-8859-15').toString('latin1'), 'a?b');
  assert.equal(encodeText('€¤é', 'iso-8859-1').toString('latin1'), '?¤é');
  assert.equal(encodeText('€🙂', 'utf-8').toString('utf8'), '€🙂');
  for (let b = 0x20; b <= 0xff; b++) {
    if (b >= 0x7f && b < 0xa0) continue;
    const ch = decodeIso885915(Uint8Array.of(b));
    assert.deepEqual([...encodeText(ch, 'iso-8859-15')], [b], `byte ${b.toString(16)}`);
  }
});

test('the charset of an answer: the charset parameter, then the Content-Type’s, then the operation’s', () => {
  assert.equal(answerCharset(undefined, null, 'iso-8859-15'), 'iso-8859-15');
  assert.equal(answerCharset(' ', null, 'utf-8'), 'utf-8');
  assert.equal(answerCharset('utf8', 'iso-8859-1', 'iso-8859-15'), 'utf-8');
  assert.equal(answerCharset(undefined, 'utf-8', 'iso-8859-15'), 'utf-8');
  assert.equal(answerCharset('Latin-9', null, 'utf-8'), 'iso-8859-15');
  // An unknown charset is an error, answered in UTF-8.
  assert.equal(answerCharset('UTF-16', null, 'iso-8859-15'), 'utf-8');
});
