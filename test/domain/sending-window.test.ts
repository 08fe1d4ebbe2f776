import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  closingAfter,
  FRENCH_DEFAULT_WINDOW,
  nextOpening,
  rampCapacity,
  rampSendAt,
  type SendingWindow,
  windowProblem,
} from '../../src/domain/sending-window.ts';

const PARIS = 'Europe/Paris';
const at = (iso: string) => Date.parse(iso);
const fr = FRENCH_DEFAULT_WINDOW;

test('French default: a Saturday 21:00 in Paris waits for Monday 08:00', () => {
  // 16 January 2027 is a Saturday (winter: UTC+1).
  assert.equal(nextOpening(fr, PARIS, at('2027-01-16T20:00:00Z')), at('2027-01-18T07:00:00Z'));
});

test('French default: Easter Monday and Whit Monday push the opening to Tuesday', () => {
  // Easter 2027 is 28 March (summer time from that night: UTC+2); Whit Monday 2027 is 17 May.
  assert.equal(nextOpening(fr, PARIS, at('2027-03-27T20:00:00Z')), at('2027-03-30T06:00:00Z'));
  assert.equal(nextOpening(fr, PARIS, at('2027-05-15T19:00:00Z')), at('2027-05-18T06:00:00Z'));
});

test('French default: open hours answer the instant itself; before 8:00 answers 8:00 the same day', () => {
  const open = at('2027-01-18T10:30:00Z');
  assert.equal(nextOpening(fr, PARIS, open), open);
  assert.equal(nextOpening(fr, PARIS, at('2027-01-18T05:00:00Z')), at('2027-01-18T07:00:00Z'));
  // 20:00 itself is closed; 19:59:59 is open.
  assert.equal(nextOpening(fr, PARIS, at('2027-01-18T18:59:59Z')), at('2027-01-18T18:59:59Z'));
  assert.equal(nextOpening(fr, PARIS, at('2027-01-18T19:00:00Z')), at('2027-01-19T07:00:00Z'));
});

test('configured holidays and another time zone', () => {
  const w: SendingWindow = { ...fr, holidayCalendar: 'NONE', holidays: ['2027-07-05'] };
  // 3 July 2027 is a Saturday; 4 July a Sunday; 5 July is configured as a holiday.
  assert.equal(nextOpening(w, 'America/New_York', at('2027-07-04T01:00:00Z')), at('2027-07-06T12:00:00Z'));
});

test('a window that never opens answers null', () => {
  const closed: SendingWindow = { ...fr, hours: { ...fr.hours, monday: null, tuesday: null, wednesday: null, thursday: null, friday: null, saturday: null } };
  assert.equal(nextOpening(closed, PARIS, at('2027-01-18T10:00:00Z')), null);
});

test('hours to 24:00 run to midnight', () => {
  const w: SendingWindow = { ...fr, hours: { ...fr.hours, monday: { from: '22:00', to: '24:00' } } };
  const t = at('2027-01-18T22:59:00Z');
  assert.equal(nextOpening(w, PARIS, t), t);
  assert.equal(nextOpening(w, PARIS, at('2027-01-18T20:00:00Z')), at('2027-01-18T21:00:00Z'));
});

test('the opening is open, and the minute before a later opening is not', () => {
  fc.assert(
    fc.property(fc.integer({ min: at('2020-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }), (t) => {
      const o = nextOpening(fr, PARIS, t)!;
      assert.ok(o >= t);
      assert.equal(nextOpening(fr, PARIS, o), o, 'open at its opening');
      if (o > t) assert.notEqual(nextOpening(fr, PARIS, o - 60_000), o - 60_000, 'closed just before');
    }),
    { seed: 4601, numRuns: 300 },
  );
});

test('the ramp spreads messages at the rate, in order', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((k) => rampSendAt(1000, k, 2)),
    [1000, 1500, 2000, 2500],
  );
  assert.equal(rampSendAt(0, 25, 10), 2500);
});

test('window checks name the field', () => {
  assert.equal(windowProblem(fr), null);
  assert.deepEqual(windowProblem({ ...fr, hours: { ...fr.hours, monday: { from: '8:00', to: '20:00' } } })?.[0], 'hours.monday.from');
  assert.deepEqual(windowProblem({ ...fr, hours: { ...fr.hours, monday: { from: '20:00', to: '08:00' } } })?.[0], 'hours.monday.to');
  assert.deepEqual(windowProblem({ ...fr, holidays: ['2027-02-30'] })?.[0], 'holidays[0]');
  assert.deepEqual(windowProblem({ ...fr, rampPerSecond: 0 })?.[0], 'rampPerSecond');
  const none = { monday: null, tuesday: null, wednesday: null, thursday: null, friday: null, saturday: null, sunday: null };
  assert.deepEqual(windowProblem({ ...fr, hours: none })?.[0], 'hours');
  assert.equal(windowProblem({ ...fr, enabled: false, hours: none }), null);
});

test('the closing of the open hours an instant falls in; null outside them', () => {
  // Monday 18 January 2027, Paris (UTC+1): open 07:00Z to 19:00Z.
  assert.equal(closingAfter(fr, PARIS, at('2027-01-18T07:00:00Z')), at('2027-01-18T19:00:00Z'));
  assert.equal(closingAfter(fr, PARIS, at('2027-01-18T18:59:59Z')), at('2027-01-18T19:00:00Z'));
  assert.equal(closingAfter(fr, PARIS, at('2027-01-18T19:00:00Z')), null);
  assert.equal(closingAfter(fr, PARIS, at('2027-01-18T06:59:59Z')), null);
  assert.equal(closingAfter(fr, PARIS, at('2027-01-17T10:00:00Z')), null, 'Sunday');
  const late: SendingWindow = { ...fr, hours: { ...fr.hours, monday: { from: '22:00', to: '24:00' } } };
  assert.equal(closingAfter(late, PARIS, at('2027-01-18T21:00:00Z')), at('2027-01-18T23:00:00Z'), 'midnight');
});

test('a ramp has as many places as leave before the closing', () => {
  const o = at('2027-01-18T07:00:00Z');
  assert.equal(rampCapacity(o, o + 60_000, 1), 60);
  assert.equal(rampCapacity(o, o + 1_000, 3), 3);
  assert.equal(rampCapacity(o, o, 10), 0);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 86_400_000 }), (rate, span) => {
      const n = rampCapacity(o, o + span, rate);
      assert.ok(rampSendAt(o, n - 1, rate) < o + span, 'the last place leaves before the closing');
      assert.ok(rampSendAt(o, n, rate) >= o + span, 'the next one would not');
    }),
    { seed: 4604, numRuns: 300 },
  );
});
