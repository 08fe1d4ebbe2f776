import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { findUnstorableText, unstorableText } from '../../src/domain/text-safety.ts';

describe('unstorableText', () => {
  it('refuses NUL and half surrogate pairs, and takes whole pairs and any other character', () => {
    assert.match(unstorableText('a\u0000b')!, /NUL/);
    assert.match(unstorableText('\ud83d')!, /surrogate/);
    assert.match(unstorableText('x\ude00')!, /surrogate/);
    assert.equal(unstorableText('😀 é\t\n\u0001€'), null);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => assert.equal(unstorableText(s.replaceAll('\0', '')), null)),
      { seed: 3, numRuns: 500 },
    );
  });

  it('finds the first bad string with its path, keys included', () => {
    assert.deepEqual(findUnstorableText({ recipient: { to: '336' }, refClient: 'a\u0000' }, 'body'), {
      path: 'body.refClient',
      reason: 'must not contain the NUL character (U+0000)',
    });
    assert.deepEqual(findUnstorableText({ 'searchBy[refClient]': '\u0000' }, 'query'), {
      path: 'query[searchBy[refClient]]',
      reason: 'must not contain the NUL character (U+0000)',
    });
    assert.deepEqual(findUnstorableText({ recipients: [{ to: '1' }, { to: '\ud800' }] }, 'body')?.path, 'body.recipients[1].to');
    assert.equal(findUnstorableText({ a: [1, true, null, { b: 'ok' }] }, 'body'), null);
  });
});
