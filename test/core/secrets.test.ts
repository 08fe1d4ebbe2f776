import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreError } from '../../src/core/errors.ts';
import { SecretBox } from '../../src/core/secrets.ts';

const KEY = 'a-test-key-that-is-long-enough-0123456789';

test('sealed secrets open with the same key, never with another, and never show the secret', () => {
  const box = new SecretBox(KEY);
  const sealed = box.seal('pässwörd');
  assert.ok(SecretBox.isSealed(sealed));
  assert.ok(!sealed.includes('pässwörd'));
  assert.notEqual(box.seal('pässwörd'), sealed, 'a fresh IV each time');
  assert.equal(box.open(sealed), 'pässwörd');
  assert.throws(() => new SecretBox(`${KEY}!`).open(sealed), /cannot be decrypted/);
  const [v, iv, tag, ct] = sealed.split(':');
  // Another first character (the ciphertext starts with 'A' one time in 64).
  const tampered = `${ct![0] === 'A' ? 'B' : 'A'}${ct!.slice(1)}`;
  assert.throws(() => box.open([v, iv, tag, tampered].join(':')), /cannot be decrypted/, 'tampering is detected');
});

test('without a key nothing is sealed, and the refusal says how to fix it; values in clear open as they are', () => {
  const box = new SecretBox(null);
  assert.equal(box.available, false);
  assert.throws(
    () => box.seal('x', 'password'),
    (e: unknown) => e instanceof CoreError && e.field === 'password' && /TERN_SECRET_KEY/.test(e.reason),
  );
  assert.equal(box.open('whsec_clear'), 'whsec_clear');
  assert.throws(() => box.open(new SecretBox(KEY).seal('x')), /TERN_SECRET_KEY is not set/);
});
