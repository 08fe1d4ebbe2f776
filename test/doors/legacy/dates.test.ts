import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatLegacyReplyDate, formatLegacyReportDate, parseLegacySendDate } from '../../../src/doors/legacy/dates.ts';

const utc = (iso: string) => new Date(iso).getTime();

describe('legacy send date (date_envoi)', () => {
  it('reads ddMMyyyy-HH:mm as Paris time, winter (UTC+1) and summer (UTC+2)', () => {
    assert.equal(parseLegacySendDate('15012030-10:30'), utc('2030-01-15T09:30:00Z'));
    assert.equal(parseLegacySendDate('15072030-10:30'), utc('2030-07-15T08:30:00Z'));
  });

  it('reads ddMMyyyy as midnight in Paris', () => {
    assert.equal(parseLegacySendDate('01032031'), utc('2031-02-28T23:00:00Z'));
    assert.equal(parseLegacySendDate(' 24122030 '), utc('2030-12-23T23:00:00Z'));
  });

  it('handles the daylight saving changes', () => {
    // 30 March 2031: 02:00 → 03:00. 02:30 does not exist; it lands just after the change.
    assert.equal(parseLegacySendDate('30032031-01:30'), utc('2031-03-30T00:30:00Z'));
    assert.equal(parseLegacySendDate('30032031-03:30'), utc('2031-03-30T01:30:00Z'));
    assert.equal(parseLegacySendDate('30032031-02:30'), utc('2031-03-30T01:30:00Z'));
    // 26 October 2031: 03:00 → 02:00. 02:30 happens twice; the first one is taken.
    assert.equal(parseLegacySendDate('26102031-02:30'), utc('2031-10-26T00:30:00Z'));
    assert.equal(parseLegacySendDate('26102031-03:30'), utc('2031-10-26T02:30:00Z'));
  });

  it('refuses other forms and impossible dates', () => {
    for (const bad of [
      '',
      '2030-01-15',
      '15/01/2030',
      '1501203',
      '15012030-1030',
      '15012030-10:3',
      '32012030',
      '29022031',
      '15132030',
      '15012030-24:00',
      '15012030-10:60',
      'abcdefgh',
    ]) {
      assert.equal(parseLegacySendDate(bad), null, bad);
    }
    assert.equal(parseLegacySendDate('29022032'), utc('2032-02-28T23:00:00Z'), 'a leap day exists in 2032');
  });
});

describe('legacy callback dates', () => {
  it('formats the delivery report date as yyyy-MM-dd HH:mm:ss in Paris', () => {
    assert.equal(formatLegacyReportDate(utc('2030-01-15T09:30:05Z')), '2030-01-15 10:30:05');
    assert.equal(formatLegacyReportDate(utc('2030-07-15T22:00:00Z')), '2030-07-16 00:00:00');
  });

  it('formats the reply date as ddMMyyyy-HHmmss in Paris', () => {
    assert.equal(formatLegacyReplyDate(utc('2030-01-15T09:30:05Z')), '15012030-103005');
    assert.equal(formatLegacyReplyDate(utc('2030-07-05T06:07:08Z')), '05072030-080708');
  });
});
