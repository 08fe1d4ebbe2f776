import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callingCodeOf } from '../../src/domain/phone.ts';
import { erasedBody, erasedBodyJson, erasedMessageObjectJson, erasedNumber, maskMsisdn } from '../../src/domain/privacy.ts';

test('a masked number keeps its country code and last 2 digits, one star a hidden digit', () => {
  assert.equal(maskMsisdn('+33612345678'), '+33*******78');
  assert.equal(maskMsisdn('33612345678'), '33*******78');
  assert.equal(maskMsisdn('14155552671'), '1********71');
  assert.equal(maskMsisdn('447700900123'), '44********23');
  assert.equal(maskMsisdn('35312345678'), '353******78');
});

test('what is not a number is not masked', () => {
  for (const v of ['', 'ACME', '36180', '+33 6 12 34 56 78', '0192f0c4-0000-7000-8000-000000000001', '1234567890123456789']) assert.equal(maskMsisdn(v), v);
});

test('calling codes are found by their length', () => {
  assert.equal(callingCodeOf('33612345678'), '33');
  assert.equal(callingCodeOf('12025550123'), '1');
  assert.equal(callingCodeOf('35312345678'), '353');
  assert.equal(callingCodeOf('x33'), null);
});

test('an erased body keeps how it was sent, not what it said', () => {
  assert.deepEqual(erasedBody({ text: 'Your code is 1234', encoding: 'GSM7', stop: true }), { text: '', encoding: 'GSM7', stop: true });
  assert.deepEqual(erasedBody({ type: 'CARD', card: { title: 'Hi', media: { url: 'https://x' } }, suggestions: [{ text: 'Yes' }] }), {
    type: 'CARD',
  });
  assert.deepEqual(erasedBody({ templateId: 't1', variables: { name: 'Ann' }, text: 'Hello Ann' }), { templateId: 't1', text: '' });
  assert.deepEqual(erasedBody({ encoding: { nested: 'no' } }), { text: '' });
  assert.equal(erasedBodyJson('not json'), '{"text":""}');
  assert.equal(erasedBodyJson('[1]'), '{"text":""}');
  assert.equal(erasedBodyJson('{"text":"hi","encoding":"UNICODE"}'), '{"text":"","encoding":"UNICODE"}');
});

test('the stand-in of a number is stable per organisation and secret, and tells nothing of the number', () => {
  const a = erasedNumber('s', 'org-1', '33612345678');
  assert.equal(a, erasedNumber('s', 'org-1', '33612345678'));
  assert.match(a, /^erased:[0-9a-f]{24}$/);
  assert.notEqual(a, erasedNumber('s', 'org-2', '33612345678'));
  assert.notEqual(a, erasedNumber('t', 'org-1', '33612345678'));
  assert.notEqual(a, erasedNumber('s', 'org-1', '33612345679'));
});

test('a webhook body loses its content, and the erased number where it appears', () => {
  const json = JSON.stringify({
    messageId: 'm',
    recipient: { to: '33612345678' },
    from: 'ACME',
    body: { text: 'secret', encoding: 'GSM7' },
    price: { amount: 0.05 },
  });
  const out = JSON.parse(erasedMessageObjectJson(json, '2026-01-01T00:00:00.000Z', { msisdn: '33612345678', standIn: 'erased:x' }));
  assert.deepEqual(out, {
    messageId: 'm',
    recipient: { to: 'erased:x' },
    from: 'ACME',
    body: { text: '', encoding: 'GSM7' },
    price: { amount: 0.05 },
    contentErasedAt: '2026-01-01T00:00:00.000Z',
  });
  const mo = JSON.parse(
    erasedMessageObjectJson(JSON.stringify({ recipient: { to: '36180' }, from: '33612345678', body: { text: 'STOP' } }), 'T', {
      msisdn: '33612345678',
      standIn: 'erased:x',
    }),
  );
  assert.equal(mo.from, 'erased:x');
  assert.equal(mo.recipient.to, '36180');
  assert.equal(erasedMessageObjectJson('garbage', 'T'), 'garbage');
});
