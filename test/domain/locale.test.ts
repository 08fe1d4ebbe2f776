import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instantOfRequestedDate, parseRequestedDate } from '../../src/domain/dates.ts';
import { checkCountry, checkTimeZone } from '../../src/domain/locale.ts';
import { normaliseMsisdn } from '../../src/domain/phone.ts';

const utc = (s: string) => Date.parse(s);

describe('checkCountry', () => {
  it('takes ISO 3166 alpha-2 codes of countries with a numbering plan, in any case', () => {
    assert.deepEqual(checkCountry('FR'), { ok: true, value: 'FR' });
    assert.deepEqual(checkCountry(' be '), { ok: true, value: 'BE' });
  });

  it('refuses anything else, saying why', () => {
    for (const bad of ['', 'F', 'FRA', '33', 'fr-FR']) {
      const c = checkCountry(bad);
      assert.equal(c.ok, false, bad);
      assert.match((c as { reason: string }).reason, /not an ISO 3166 alpha-2 country code/);
    }
    const unknown = checkCountry('ZZ');
    assert.equal(unknown.ok, false);
    assert.match((unknown as { reason: string }).reason, /not a country with a known numbering plan/);
  });
});

describe('checkTimeZone', () => {
  it('takes IANA names and answers their canonical spelling', () => {
    assert.deepEqual(checkTimeZone('America/New_York'), { ok: true, value: 'America/New_York' });
    assert.deepEqual(checkTimeZone('europe/paris'), { ok: true, value: 'Europe/Paris' });
    assert.deepEqual(checkTimeZone('UTC'), { ok: true, value: 'UTC' });
  });

  it('refuses names the runtime does not know and offsets', () => {
    for (const bad of ['', 'Mars/Olympus', '+02:00', 'Europe/Paris; drop', 'x'.repeat(70)]) {
      assert.equal(checkTimeZone(bad).ok, false, bad);
    }
  });
});

describe('national numbers in a default country', () => {
  it('are stored in international form with the country code; without a country they are refused', () => {
    assert.deepEqual(normaliseMsisdn('0611223344', { defaultCountry: 'FR' }), { ok: true, msisdn: '33611223344' });
    assert.deepEqual(normaliseMsisdn('0470 12 34 56', { defaultCountry: 'BE' }), { ok: true, msisdn: '32470123456' });
    assert.deepEqual(normaliseMsisdn('0611223344'), { ok: false, reason: 'NATIONAL_WITHOUT_COUNTRY' });
    // International forms stay what they are, whatever the country.
    assert.deepEqual(normaliseMsisdn('+32470123456', { defaultCountry: 'FR' }), { ok: true, msisdn: '32470123456' });
  });
});

describe('parseRequestedDate', () => {
  it('takes a date with an offset as an instant', () => {
    const d = parseRequestedDate('2031-01-15T10:30:00+01:00');
    assert.ok(d instanceof Date);
    assert.equal(instantOfRequestedDate(d, 'America/New_York'), utc('2031-01-15T09:30:00Z'));
    assert.equal(instantOfRequestedDate(parseRequestedDate('2031-01-15T10:30:00Z')!, 'Asia/Tokyo'), utc('2031-01-15T10:30:00Z'));
  });

  it('reads a date without an offset in the time zone it is given', () => {
    const d = parseRequestedDate('2031-01-15T10:30:00')!;
    assert.ok(!(d instanceof Date));
    assert.equal(instantOfRequestedDate(d, 'Europe/Paris'), utc('2031-01-15T09:30:00Z'));
    assert.equal(instantOfRequestedDate(d, 'America/New_York'), utc('2031-01-15T15:30:00Z'));
    assert.equal(instantOfRequestedDate(d, 'UTC'), utc('2031-01-15T10:30:00Z'));
    assert.equal(instantOfRequestedDate(parseRequestedDate('2031-07-15')!, 'Europe/Paris'), utc('2031-07-14T22:00:00Z'));
    assert.equal(instantOfRequestedDate(parseRequestedDate(' 2031-07-15T10:30:05.25 ')!, 'Europe/Paris'), utc('2031-07-15T08:30:05.250Z'));
  });

  it('reads the hour skipped and the hour repeated by a daylight saving change the same way the legacy dates are', () => {
    // New York, 9 March 2031: 02:00 EST becomes 03:00 EDT; 02:30 does not exist and lands just after the change.
    assert.equal(instantOfRequestedDate(parseRequestedDate('2031-03-09T02:30')!, 'America/New_York'), utc('2031-03-09T07:30:00Z'));
    // 2 November 2031: 01:30 happens twice (EDT, then EST); the first one is taken.
    assert.equal(instantOfRequestedDate(parseRequestedDate('2031-11-02T01:30')!, 'America/New_York'), utc('2031-11-02T05:30:00Z'));
  });

  it('refuses what is not a real date and time', () => {
    for (const bad of ['', 'tomorrow', '2031-02-30T10:00', '2031-13-01', '2031-01-15T24:00', '2031-01-15T10:60', '2031-01-15T10', '15/01/2031']) {
      assert.equal(parseRequestedDate(bad), null, bad);
    }
  });
});
