import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { instantOfWallClock, iso, isoOrNull, parseApiDate, parseDateBound, parseDay, utcDay, utcMonthStart, wallClockAt } from '../../src/domain/dates.ts';

const utc = (text: string) => Date.parse(text);

describe('formatting', () => {
  test('iso writes UTC with milliseconds; isoOrNull passes null and undefined through', () => {
    assert.equal(iso(utc('2024-05-01T10:00:00+02:00')), '2024-05-01T08:00:00.000Z');
    assert.equal(iso(0), '1970-01-01T00:00:00.000Z');
    assert.equal(isoOrNull(utc('2024-05-01T10:00:00.123Z')), '2024-05-01T10:00:00.123Z');
    assert.equal(isoOrNull(0), '1970-01-01T00:00:00.000Z');
    assert.equal(isoOrNull(null), null);
    assert.equal(isoOrNull(undefined), null);
  });

  test('utcDay is the day of toISOString, whatever instants it is asked in turn (it keeps the last day)', () => {
    const instant = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      // Around midnights, where the kept day must change.
      fc.tuple(fc.integer({ min: -40_000, max: 40_000 }), fc.integer({ min: -2, max: 1 })).map(([d, o]) => d * 86_400_000 + o),
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 20 }), (instants) => {
        for (const ms of instants) assert.equal(utcDay(ms), new Date(ms).toISOString().slice(0, 10), String(ms));
      }),
      { seed: 20261128, numRuns: 500 },
    );
    assert.throws(() => utcDay(Number.NaN), RangeError);
  });

  test('utcDay is the UTC calendar day of an instant', () => {
    assert.equal(utcDay(utc('2024-05-01T00:00:00.000Z')), '2024-05-01');
    assert.equal(utcDay(utc('2024-05-01T23:59:59.999Z')), '2024-05-01');
    assert.equal(utcDay(utc('2024-05-02T01:00:00+02:00')), '2024-05-01');
    assert.equal(utcDay(utc('2024-02-29T12:00:00Z')), '2024-02-29');
  });

  test('utcMonthStart is the first day of the UTC month of an instant', () => {
    assert.equal(utcMonthStart(utc('2024-05-17T10:00:00Z')), '2024-05-01');
    assert.equal(utcMonthStart(utc('2024-05-01T00:00:00Z')), '2024-05-01');
    assert.equal(utcMonthStart(utc('2024-04-30T23:59:59.999Z')), '2024-04-01');
    assert.equal(utcMonthStart(utc('2025-01-01T00:30:00+01:00')), '2024-12-01');
  });
});

describe('parseApiDate', () => {
  test('ISO 8601 with an offset as written, without one in UTC', () => {
    assert.equal(parseApiDate('2024-05-01T12:00:00+02:00')?.getTime(), utc('2024-05-01T10:00:00Z'));
    assert.equal(parseApiDate(' 2024-05-01T10:00 ')?.getTime(), utc('2024-05-01T10:00:00Z'));
    assert.equal(parseApiDate('2024-05-01')?.getTime(), utc('2024-05-01T00:00:00Z'));
    for (const bad of ['', 'tomorrow', '2024/05/01', '1714557600000', '2024-05-01T10']) assert.equal(parseApiDate(bad), null, bad);
  });
});

test('parseDay accepts real calendar days only', () => {
  assert.equal(parseDay('2024-02-29'), '2024-02-29');
  assert.equal(parseDay('2023-02-29'), null);
  assert.equal(parseDay('2024-02-30'), null);
  assert.equal(parseDay('2024-13-01'), null);
  assert.equal(parseDay('2024-5-01'), null);
  assert.equal(parseDay('2024-05-01T00:00:00Z'), null);
  assert.equal(parseDay(''), null);
});

describe('parseDateBound', () => {
  test('a day is a UTC day: its first instant as a start, its last as an end', () => {
    assert.equal(parseDateBound('2024-05-01', 'start'), Date.parse('2024-05-01T00:00:00.000Z'));
    assert.equal(parseDateBound('2024-05-01', 'end'), Date.parse('2024-05-01T23:59:59.999Z'));
    assert.equal(parseDateBound('2024-02-30', 'start'), null);
  });

  test('date-times: with an offset as written, without one in UTC', () => {
    assert.equal(parseDateBound('2024-05-01T10:00:00', 'start'), Date.parse('2024-05-01T10:00:00Z'));
    assert.equal(parseDateBound('2024-05-01T10:00', 'end'), Date.parse('2024-05-01T10:00:00Z'));
    assert.equal(parseDateBound('2024-05-01T12:00:00+02:00', 'start'), Date.parse('2024-05-01T10:00:00Z'));
    assert.equal(parseDateBound('2024-05-01T12:00:00+0200', 'start'), Date.parse('2024-05-01T10:00:00Z'));
    assert.equal(parseDateBound('2024-05-01 10:00:00.123456Z', 'start'), Date.parse('2024-05-01T10:00:00.123Z'));
    assert.equal(parseDateBound('2024-05-01t10:00:00z', 'start'), Date.parse('2024-05-01T10:00:00Z'));
  });

  test('anything else is refused', () => {
    for (const bad of [
      '',
      'yesterday',
      '2024-05-01T25:00:00',
      '2024-05-01T10:60',
      '2024-05-32T10:00',
      '1714557600000',
      '2024/05/01',
      '2024-05-01T10:00:00+2',
    ]) {
      assert.equal(parseDateBound(bad, 'start'), null, bad);
    }
  });
});

describe('wall-clock time in a time zone', () => {
  const PARIS = 'Europe/Paris';
  const wall = (year: number, month: number, day: number, hour: number, minute: number, second = 0) => ({
    year,
    month,
    day,
    hour,
    minute,
    second,
  });

  test('reads an instant on the zone clock, winter (UTC+1) and summer (UTC+2)', () => {
    assert.deepEqual(wallClockAt(utc('2030-01-15T09:30:05Z'), PARIS), wall(2030, 1, 15, 10, 30, 5));
    assert.deepEqual(wallClockAt(utc('2030-07-15T22:00:00Z'), PARIS), wall(2030, 7, 16, 0, 0, 0));
    assert.deepEqual(wallClockAt(utc('2030-07-15T22:00:00Z'), 'UTC'), wall(2030, 7, 15, 22, 0, 0));
    assert.deepEqual(wallClockAt(utc('2030-07-15T22:00:00Z'), 'America/New_York'), wall(2030, 7, 15, 18, 0, 0));
  });

  test('finds the instant of a wall-clock time, and back', () => {
    assert.equal(instantOfWallClock(wall(2030, 1, 15, 10, 30), PARIS), utc('2030-01-15T09:30:00Z'));
    assert.equal(instantOfWallClock({ year: 2030, month: 7, day: 15, hour: 10, minute: 30 }, PARIS), utc('2030-07-15T08:30:00Z'));
    assert.equal(instantOfWallClock(wall(2030, 7, 15, 10, 30), 'Asia/Tokyo'), utc('2030-07-15T01:30:00Z'));
    for (const at of ['2030-01-15T09:30:05Z', '2030-07-15T22:00:00Z', '2031-12-31T23:59:59Z']) {
      assert.equal(instantOfWallClock(wallClockAt(utc(at), PARIS), PARIS), utc(at), at);
    }
  });

  test('the spring change day in Paris (30 March 2031, 02:00 → 03:00)', () => {
    // Around the change the clock jumps from 01:59:59 (UTC+1) to 03:00:00 (UTC+2).
    assert.deepEqual(wallClockAt(utc('2031-03-30T00:59:59Z'), PARIS), wall(2031, 3, 30, 1, 59, 59));
    assert.deepEqual(wallClockAt(utc('2031-03-30T01:00:00Z'), PARIS), wall(2031, 3, 30, 3, 0, 0));
    assert.equal(instantOfWallClock(wall(2031, 3, 30, 1, 30), PARIS), utc('2031-03-30T00:30:00Z'));
    assert.equal(instantOfWallClock(wall(2031, 3, 30, 3, 30), PARIS), utc('2031-03-30T01:30:00Z'));
    // 02:30 does not exist that day: it is read with the winter offset and lands just after the change.
    assert.equal(instantOfWallClock(wall(2031, 3, 30, 2, 30), PARIS), utc('2031-03-30T01:30:00Z'));
  });

  test('the autumn change day in Paris (26 October 2031, 03:00 → 02:00)', () => {
    // 02:30 happens twice, at UTC+2 then at UTC+1; the first one is taken.
    assert.deepEqual(wallClockAt(utc('2031-10-26T00:30:00Z'), PARIS), wall(2031, 10, 26, 2, 30, 0));
    assert.deepEqual(wallClockAt(utc('2031-10-26T01:30:00Z'), PARIS), wall(2031, 10, 26, 2, 30, 0));
    assert.equal(instantOfWallClock(wall(2031, 10, 26, 2, 30), PARIS), utc('2031-10-26T00:30:00Z'));
    assert.equal(instantOfWallClock(wall(2031, 10, 26, 3, 30), PARIS), utc('2031-10-26T02:30:00Z'));
  });
});
