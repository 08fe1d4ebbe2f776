import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  codeFromBytes,
  decideCheck,
  decideSend,
  DEFAULT_TEMPLATES,
  HOUR_MS,
  maskedText,
  normaliseCode,
  OTP_ALPHABETS,
  OTP_LOCALES,
  renderTemplate,
  spokenCode,
  spokenText,
  statusAt,
  templateProblem,
} from '../../src/domain/otp.ts';

/** A byte stream that gives `bytes` in turn, then fails the test if asked for more. */
function stream(bytes: number[]): () => number {
  let i = 0;
  return () => {
    assert.ok(i < bytes.length, 'asked for more bytes than given');
    return bytes[i++]!;
  };
}

describe('one-time password codes', () => {
  it('are drawn from the alphabet without bias: bytes past the last whole multiple of its size are skipped', () => {
    // 256 % 10 = 6: 250…255 would favour 0…5, so they are skipped.
    assert.equal(codeFromBytes(stream([7, 250, 255, 13, 249]), 3, OTP_ALPHABETS.NUMERIC), '739');
    // 256 % 31 = 8: 248…255 are skipped.
    assert.equal(codeFromBytes(stream([0, 248, 30, 31]), 3, OTP_ALPHABETS.ALPHANUMERIC), '2Z2');
    const counts = new Map<string, number>();
    let b = 0;
    const code = codeFromBytes(() => b++ % 256, 2_480, OTP_ALPHABETS.ALPHANUMERIC);
    for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1);
    assert.equal(counts.size, 31);
    assert.deepEqual(new Set(counts.values()), new Set([80]), 'each character equally often over whole cycles');
  });

  it('leave out the characters people mistake for each other, and are compared as typed', () => {
    for (const c of '01ILO') assert.equal(OTP_ALPHABETS.ALPHANUMERIC.includes(c), false, c);
    assert.equal(normaliseCode(' 12 34-56 '), '123456');
    assert.equal(normaliseCode('ab-cd ef'), 'ABCDEF');
  });

  it('are written in their template, masked wherever the message is shown, and read out character by character', () => {
    assert.equal(renderTemplate('Code {code}. Again: {code}', '4821'), 'Code 4821. Again: 4821');
    assert.equal(maskedText('Your code is {code}', 6), 'Your code is ******');
    assert.equal(spokenCode('48A1'), '4, 8, A, 1');
    assert.equal(spokenText('Your code is {code}', '4821'), 'Your code is 4, 8, 2, 1');
    assert.equal(templateProblem('Hello'), 'must contain {code}, where the code goes');
    assert.equal(templateProblem('  '), 'must not be empty');
    assert.equal(templateProblem(`${'x'.repeat(480)}{code}`), 'at most 480 characters');
    assert.equal(templateProblem('{code} is your code'), null);
    for (const locale of OTP_LOCALES) assert.equal(templateProblem(DEFAULT_TEMPLATES[locale]), null, locale);
  });
});

describe('checking a code', () => {
  const pending = { status: 'PENDING' as const, attempts: 0, maxAttempts: 3, expiresAt: 10_000 };

  it('approves the right code while it is pending, counting the check', () => {
    assert.deepEqual(decideCheck(pending, true, 5_000), { kind: 'APPROVED', attempts: 1 });
  });

  it('counts wrong codes and cancels with the last one allowed', () => {
    assert.deepEqual(decideCheck(pending, false, 5_000), { kind: 'WRONG', attempts: 1, status: 'PENDING' });
    assert.deepEqual(decideCheck({ ...pending, attempts: 2 }, false, 5_000), { kind: 'WRONG', attempts: 3, status: 'CANCELLED' });
    assert.deepEqual(decideCheck({ ...pending, attempts: 2 }, true, 5_000), { kind: 'APPROVED', attempts: 3 });
  });

  it('never approves an expired, approved or cancelled code, and counts nothing then', () => {
    assert.deepEqual(decideCheck(pending, true, 10_000), { kind: 'EXPIRED' });
    for (const status of ['APPROVED', 'EXPIRED', 'CANCELLED'] as const) {
      assert.deepEqual(decideCheck({ ...pending, status }, true, 5_000), { kind: 'SETTLED', status });
    }
  });

  it('shows a pending code past its end as expired', () => {
    assert.equal(statusAt({ status: 'PENDING', expiresAt: 10_000 }, 9_999), 'PENDING');
    assert.equal(statusAt({ status: 'PENDING', expiresAt: 10_000 }, 10_000), 'EXPIRED');
    assert.equal(statusAt({ status: 'APPROVED', expiresAt: 10_000 }, 20_000), 'APPROVED');
  });
});

describe('sending a code to a number', () => {
  const rules = { cooldownMs: 30_000, maxPerHour: 3 };
  const now = 10 * HOUR_MS;

  it('is allowed with nothing pending and few sends in the hour', () => {
    assert.deepEqual(decideSend(null, [], rules, now), { ok: true });
    assert.deepEqual(decideSend(now - 30_000, [now - 30_000], rules, now), { ok: true }, 'the cooldown is over');
  });

  it('is refused inside the cooldown of a pending code, until it ends', () => {
    const d = decideSend(now - 12_000, [now - 12_000], rules, now);
    assert.deepEqual(d, { ok: false, reason: 'a code was sent to this number 12 s ago; it can be sent again in 18 s', retryAt: now + 18_000 });
  });

  it('is refused past the sends an hour, until the oldest that counts is an hour old', () => {
    const times = [now - HOUR_MS - 1, now - 50 * 60_000, now - 20 * 60_000, now - 60_000];
    const d = decideSend(null, times, rules, now);
    assert.deepEqual(d, { ok: false, reason: '3 codes were sent to this number in the last hour; at most 3', retryAt: now - 50 * 60_000 + HOUR_MS });
    assert.deepEqual(decideSend(null, times.slice(0, 3), rules, now), { ok: true });
  });
});
