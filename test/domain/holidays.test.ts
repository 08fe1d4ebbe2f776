import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { easterSunday, frenchPublicHolidays, isComputedHoliday } from '../../src/domain/holidays.ts';

// Easter Sundays as the calendars print them (Gregorian), including the earliest and latest dates it can fall on.
const EASTER: Record<number, string> = {
  1818: '1818-03-22',
  1943: '1943-04-25',
  1954: '1954-04-18',
  1961: '1961-04-02',
  1981: '1981-04-19',
  1990: '1990-04-15',
  1999: '1999-04-04',
  2000: '2000-04-23',
  2001: '2001-04-15',
  2002: '2002-03-31',
  2003: '2003-04-20',
  2004: '2004-04-11',
  2005: '2005-03-27',
  2006: '2006-04-16',
  2007: '2007-04-08',
  2008: '2008-03-23',
  2009: '2009-04-12',
  2010: '2010-04-04',
  2011: '2011-04-24',
  2012: '2012-04-08',
  2013: '2013-03-31',
  2014: '2014-04-20',
  2015: '2015-04-05',
  2016: '2016-03-27',
  2017: '2017-04-16',
  2018: '2018-04-01',
  2019: '2019-04-21',
  2020: '2020-04-12',
  2021: '2021-04-04',
  2022: '2022-04-17',
  2023: '2023-04-09',
  2024: '2024-03-31',
  2025: '2025-04-20',
  2026: '2026-04-05',
  2027: '2027-03-28',
  2028: '2028-04-16',
  2029: '2029-04-01',
  2030: '2030-04-21',
  2031: '2031-04-13',
  2032: '2032-03-28',
  2033: '2033-04-17',
  2034: '2034-04-09',
  2035: '2035-03-25',
  2038: '2038-04-25',
  2285: '2285-03-22',
};

test('Easter Sunday matches the known dates of many years', () => {
  for (const [year, day] of Object.entries(EASTER)) assert.equal(easterSunday(Number(year)), day, `Easter ${year}`);
});

test('Easter is always a Sunday between 22 March and 25 April', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1583, max: 4099 }), (year) => {
      const day = easterSunday(year);
      assert.equal(new Date(`${day}T00:00:00Z`).getUTCDay(), 0, day);
      const md = day.slice(5);
      assert.ok(md >= '03-22' && md <= '04-25', day);
    }),
    { seed: 46, numRuns: 500 },
  );
});

test("France's movable holidays of known years: Easter Monday, Ascension, Whit Monday", () => {
  const known: Record<number, [string, string, string]> = {
    2023: ['2023-04-10', '2023-05-18', '2023-05-29'],
    2024: ['2024-04-01', '2024-05-09', '2024-05-20'],
    2025: ['2025-04-21', '2025-05-29', '2025-06-09'],
    2026: ['2026-04-06', '2026-05-14', '2026-05-25'],
    2027: ['2027-03-29', '2027-05-06', '2027-05-17'],
  };
  for (const [year, movable] of Object.entries(known)) {
    const all = frenchPublicHolidays(Number(year));
    assert.equal(all.length, 11);
    for (const d of movable) assert.ok(all.includes(d), `${d} in ${all.join(', ')}`);
    for (const fixed of ['01-01', '05-01', '05-08', '07-14', '08-15', '11-01', '11-11', '12-25']) assert.ok(all.includes(`${year}-${fixed}`));
    assert.deepEqual([...all].sort(), all, 'in date order');
  }
});

test('the calendars: FR knows its holidays, NONE has none', () => {
  assert.equal(isComputedHoliday('FR', '2027-03-29'), true);
  assert.equal(isComputedHoliday('FR', '2027-03-30'), false);
  assert.equal(isComputedHoliday('FR', '2026-07-14'), true);
  assert.equal(isComputedHoliday('NONE', '2026-07-14'), false);
});
