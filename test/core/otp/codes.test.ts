import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OTP_ALPHABETS } from '../../../src/domain/otp.ts';
import { OtpCodes } from '../../../src/core/otp/codes.ts';

const KEY = 'a-server-secret-key-of-32-characters-at-least';

describe('one-time password codes under the server key', () => {
  const codes = new OtpCodes(KEY);

  it('derive the same code from the same salt, and another from another salt or key', () => {
    const salt = codes.newSalt();
    const code = codes.code(salt, 6, OTP_ALPHABETS.NUMERIC);
    assert.match(code, /^\d{6}$/);
    assert.equal(codes.code(salt, 6, OTP_ALPHABETS.NUMERIC), code);
    assert.equal(new OtpCodes(KEY).code(salt, 6, OTP_ALPHABETS.NUMERIC), code, 'every node with the key finds it');
    const others = new Set(Array.from({ length: 20 }, () => codes.code(codes.newSalt(), 10, OTP_ALPHABETS.NUMERIC)));
    assert.equal(others.size, 20);
    assert.notEqual(new OtpCodes(`${KEY}!`).code(salt, 10, OTP_ALPHABETS.NUMERIC), codes.code(salt, 10, OTP_ALPHABETS.NUMERIC));
    assert.match(codes.code(salt, 10, OTP_ALPHABETS.ALPHANUMERIC), /^[2-9A-HJKMNP-Z]{10}$/);
  });

  it('keep the code only as an HMAC bound to its one-time password, matched as typed', () => {
    const hash = codes.hash('otp-1', 'a7k2');
    assert.equal(hash.includes('A7K2'), false);
    assert.equal(codes.matches('otp-1', 'A7K2', hash), true);
    assert.equal(codes.matches('otp-1', ' a7-k2 ', hash), true);
    assert.equal(codes.matches('otp-1', 'A7K3', hash), false);
    assert.equal(codes.matches('otp-2', 'A7K2', hash), false, 'another one-time password’s code');
    assert.equal(codes.matches('otp-1', 'A7K2', 'not-a-hash'), false);
    assert.equal(new OtpCodes(`${KEY}!`).matches('otp-1', 'A7K2', hash), false, 'another key');
  });

  it('are unavailable without a key', () => {
    const none = new OtpCodes(null);
    assert.equal(none.available, false);
    assert.throws(() => none.code('salt', 6, OTP_ALPHABETS.NUMERIC), /TERN_SECRET_KEY/);
  });
});
