import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { generateApiKey, hashApiKey, hashesEqual } from '../../../src/core/tenancy/keys.ts';

test('an API key hashes to the SHA-256 of its UTF-8 bytes, in hex: the hashes stored by every release stay valid', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (key) => {
      assert.equal(hashApiKey(key), createHash('sha256').update(key, 'utf8').digest('hex'));
    }),
    { seed: 20261128, numRuns: 500 },
  );
  const key = generateApiKey();
  assert.ok(hashesEqual(hashApiKey(key), createHash('sha256').update(key, 'utf8').digest('hex')));
  assert.ok(!hashesEqual(hashApiKey(key), hashApiKey(`${key}x`)));
});
