import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_WEBHOOK_SCHEDULE_MS, backoffDelay, nextRetryDelay, parseSchedule } from '../../src/domain/retry.ts';

describe('parseSchedule', () => {
  it('parses the smsmode schedule into the default', () => {
    assert.deepEqual(parseSchedule('30s,2m,10m,1h,5h,24h'), [...DEFAULT_WEBHOOK_SCHEDULE_MS]);
    assert.deepEqual(DEFAULT_WEBHOOK_SCHEDULE_MS, [30_000, 120_000, 600_000, 3_600_000, 18_000_000, 86_400_000]);
  });

  it('accepts every unit, spaces around entries and decimals', () => {
    assert.deepEqual(parseSchedule(' 250ms , 1s,1m, 1h ,1d'), [250, 1_000, 60_000, 3_600_000, 86_400_000]);
    assert.deepEqual(parseSchedule('1.5s,0.5m'), [1_500, 30_000]);
    assert.deepEqual(parseSchedule('0ms'), [0]);
  });

  it('rejects bad entries, naming them', () => {
    for (const [text, bad] of [
      ['30s,5x', '5x'],
      ['30', '30'],
      ['30s,,1m', ''],
      ['-1s', '-1s'],
      ['1 h', '1 h'],
      ['s', 's'],
      ['1e3ms', '1e3ms'],
      ['30S', '30S'],
    ] as const) {
      assert.throws(
        () => parseSchedule(text),
        (err: Error) => {
          assert.match(err.message, new RegExp(`entry "${bad}"`));
          return true;
        },
        text,
      );
    }
  });

  it('rejects an empty schedule', () => {
    assert.throws(() => parseSchedule(''), /empty/);
    assert.throws(() => parseSchedule('   '), /empty/);
  });
});

describe('nextRetryDelay', () => {
  const schedule = [1_000, 60_000, 3_600_000];

  it('follows the schedule without jitter when random is 0.5', () => {
    assert.equal(
      nextRetryDelay(1, schedule, () => 0.5),
      1_000,
    );
    assert.equal(
      nextRetryDelay(2, schedule, () => 0.5),
      60_000,
    );
    assert.equal(
      nextRetryDelay(3, schedule, () => 0.5),
      3_600_000,
    );
  });

  it('returns null once the schedule is exhausted', () => {
    assert.equal(
      nextRetryDelay(4, schedule, () => 0.5),
      null,
    );
    assert.equal(
      nextRetryDelay(100, schedule, () => 0.5),
      null,
    );
    assert.equal(nextRetryDelay(7, DEFAULT_WEBHOOK_SCHEDULE_MS), null);
    assert.notEqual(nextRetryDelay(6, DEFAULT_WEBHOOK_SCHEDULE_MS), null);
  });

  it('applies at most ±10 % jitter', () => {
    assert.equal(
      nextRetryDelay(2, schedule, () => 0),
      54_000,
    );
    assert.equal(
      nextRetryDelay(2, schedule, () => 0.999999),
      66_000,
    );
    assert.equal(
      nextRetryDelay(2, schedule, () => 0.75),
      63_000,
    );
    for (let i = 0; i < 1_000; i++) {
      const delay = nextRetryDelay(1, DEFAULT_WEBHOOK_SCHEDULE_MS)!;
      assert.ok(delay >= 27_000 && delay <= 33_000, String(delay));
      assert.ok(Number.isInteger(delay));
    }
  });

  it('rejects an attempt count below 1 or fractional', () => {
    assert.throws(() => nextRetryDelay(0, schedule), RangeError);
    assert.throws(() => nextRetryDelay(-1, schedule), RangeError);
    assert.throws(() => nextRetryDelay(1.5, schedule), RangeError);
    assert.throws(() => nextRetryDelay(Number.NaN, schedule), RangeError);
  });

  it('works with a parsed fast schedule', () => {
    const fast = parseSchedule('10ms,20ms');
    assert.equal(
      nextRetryDelay(1, fast, () => 0.5),
      10,
    );
    assert.equal(
      nextRetryDelay(2, fast, () => 0.5),
      20,
    );
    assert.equal(
      nextRetryDelay(3, fast, () => 0.5),
      null,
    );
  });
});

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt up to the maximum', () => {
    const almostOne = () => 0.999999;
    assert.equal(backoffDelay(1, 100, 10_000, almostOne), 99);
    assert.equal(backoffDelay(2, 100, 10_000, almostOne), 199);
    assert.equal(backoffDelay(3, 100, 10_000, almostOne), 399);
    assert.equal(backoffDelay(8, 100, 10_000, almostOne), 9_999);
    assert.equal(backoffDelay(50, 100, 10_000, almostOne), 9_999);
    assert.equal(backoffDelay(5_000, 100, 10_000, almostOne), 9_999);
  });

  it('uses full jitter between zero and the ceiling', () => {
    assert.equal(
      backoffDelay(3, 100, 10_000, () => 0),
      0,
    );
    assert.equal(
      backoffDelay(3, 100, 10_000, () => 0.5),
      200,
    );
    for (let i = 0; i < 1_000; i++) {
      const delay = backoffDelay(4, 100, 10_000);
      assert.ok(delay >= 0 && delay < 800, String(delay));
    }
  });

  it('rejects bad arguments', () => {
    assert.throws(() => backoffDelay(0, 100, 1_000), RangeError);
    assert.throws(() => backoffDelay(1.5, 100, 1_000), RangeError);
    assert.throws(() => backoffDelay(1, -1, 1_000), RangeError);
    assert.throws(() => backoffDelay(1, 100, Number.POSITIVE_INFINITY), RangeError);
    assert.throws(() => backoffDelay(1, Number.NaN, 1_000), RangeError);
  });
});
