import { describe, it, test } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import parsePhoneNumber, { getCountries, getExampleNumber } from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { countryName, describeNumber, MAX_MSISDN_DIGITS, MIN_MSISDN_DIGITS, normaliseMsisdn, numberRange } from '../../src/domain/phone.ts';
import type { PhoneType } from '../../src/domain/phone.ts';

const ok = (msisdn: string) => ({ ok: true, msisdn });
const rejected = (reason: string) => ({ ok: false, reason });

describe('normaliseMsisdn', () => {
  it('accepts every international form of the same number', () => {
    for (const input of [
      '33612345678',
      '+33612345678',
      '0033612345678',
      '+33 6 12 34 56 78',
      '+33 (0)6 12-34-56-78',
      '+33(0)612345678',
      '0033 (0)6 12 34 56 78',
      '00 33 6 12 34 56 78',
      '+33.6.12.34.56.78',
      '+33/6/12/34/56/78',
      '  +33 6 12 34 56 78\t',
      '+33\u00a06\u00a012\u00a034\u00a056\u00a078',
    ]) {
      assert.deepEqual(normaliseMsisdn(input), ok('33612345678'), input);
      assert.deepEqual(normaliseMsisdn(input, { defaultCountry: 'DE' }), ok('33612345678'), `${input} (DE default)`);
    }
  });

  it('normalises numbers of many countries', () => {
    const cases: Array<[string, string]> = [
      ['+49 1512 3456789', '4915123456789'],
      ['+44 (0)7400 123456', '447400123456'],
      ['0044 20 7946 0018', '442079460018'],
      ['+34 612 34 56 78', '34612345678'],
      ['+39 06 1234 5678', '390612345678'],
      ['+1 (415) 555-0100', '14155550100'],
      ['+91 98123 45678', '919812345678'],
      ['+234 803 123 4567', '2348031234567'],
      ['+55 11 96123-4567', '5511961234567'],
      ['+81 90-1234-5678', '819012345678'],
      ['+61 412 345 678', '61412345678'],
      ['+27 82 123 4567', '27821234567'],
    ];
    for (const [input, msisdn] of cases) assert.deepEqual(normaliseMsisdn(input), ok(msisdn), input);
  });

  it('takes a national number only with a default country, using that country’s trunk rules', () => {
    assert.deepEqual(normaliseMsisdn('0612345678'), rejected('NATIONAL_WITHOUT_COUNTRY'));
    assert.deepEqual(normaliseMsisdn('06 12 34 56 78'), rejected('NATIONAL_WITHOUT_COUNTRY'));
    assert.deepEqual(normaliseMsisdn('(0)6 12 34 56 78'), rejected('NATIONAL_WITHOUT_COUNTRY'));
    assert.deepEqual(normaliseMsisdn('0612345678', { defaultCountry: 'FR' }), ok('33612345678'));
    assert.deepEqual(normaliseMsisdn('06 12 34 56 78', { defaultCountry: 'FR' }), ok('33612345678'));
    assert.deepEqual(normaliseMsisdn('07400 123456', { defaultCountry: 'GB' }), ok('447400123456'));
    assert.deepEqual(normaliseMsisdn('01512 3456789', { defaultCountry: 'DE' }), ok('4915123456789'));
    // Italy keeps the leading 0 of fixed numbers after the country code.
    assert.deepEqual(normaliseMsisdn('06 1234 5678', { defaultCountry: 'IT' }), ok('390612345678'));
    // An unknown default country is no default country.
    assert.deepEqual(normaliseMsisdn('0612345678', { defaultCountry: 'XX' as CountryCode }), rejected('NATIONAL_WITHOUT_COUNTRY'));
  });

  it('refuses an international prefix followed by a national number', () => {
    assert.deepEqual(normaliseMsisdn('+0612345678'), rejected('NATIONAL_WITHOUT_COUNTRY'));
    assert.deepEqual(normaliseMsisdn('000612345678', { defaultCountry: 'FR' }), rejected('NATIONAL_WITHOUT_COUNTRY'));
  });

  it('keeps digits without a prefix as international, even with a default country', () => {
    assert.deepEqual(normaliseMsisdn('612345678', { defaultCountry: 'FR' }), ok('612345678'));
  });

  it('says EMPTY for nothing at all', () => {
    for (const input of ['', '   ', '\t\n']) {
      assert.deepEqual(normaliseMsisdn(input), rejected('EMPTY'), JSON.stringify(input));
    }
  });

  it('says NOT_DIGITS for anything that is not a written number', () => {
    for (const input of [
      'abc',
      '33612345678x',
      '+33 6 12 AB 56 78',
      'tel:+33612345678',
      '+33+612345678',
      '33612345678+',
      '+33612345678;ext=1',
      '+33 6 12 34 56 78 #',
      '+',
      '()',
      '- . /',
      '٣٣٦١٢٣٤٥٦٧٨',
      '３３６１２３４５６７８',
      '33612345678\u0000',
    ]) {
      assert.deepEqual(normaliseMsisdn(input), rejected('NOT_DIGITS'), JSON.stringify(input));
    }
    assert.deepEqual(normaliseMsisdn(33612345678 as unknown as string), rejected('NOT_DIGITS'));
  });

  it('bounds the length: at least 8 and at most 15 digits in international form', () => {
    assert.equal(MIN_MSISDN_DIGITS, 8);
    assert.equal(MAX_MSISDN_DIGITS, 15);
    assert.deepEqual(normaliseMsisdn('1234567'), rejected('TOO_SHORT'));
    assert.deepEqual(normaliseMsisdn('+3361234'), rejected('TOO_SHORT'));
    assert.deepEqual(normaliseMsisdn('0033 6 12'), rejected('TOO_SHORT'));
    assert.deepEqual(normaliseMsisdn('06', { defaultCountry: 'FR' }), rejected('TOO_SHORT'));
    assert.deepEqual(normaliseMsisdn('0', { defaultCountry: 'FR' }), rejected('TOO_SHORT'));
    assert.deepEqual(normaliseMsisdn('12345678'), ok('12345678'));
    assert.deepEqual(normaliseMsisdn('123456789012345'), ok('123456789012345'));
    assert.deepEqual(normaliseMsisdn('+1234567890123456'), rejected('TOO_LONG'));
    assert.deepEqual(normaliseMsisdn('00 1234 5678 9012 3456'), rejected('TOO_LONG'));
    assert.deepEqual(normaliseMsisdn('0612345678901234', { defaultCountry: 'FR' }), rejected('TOO_LONG'));
    assert.deepEqual(normaliseMsisdn('9'.repeat(10_000)), rejected('TOO_LONG'));
  });
});

// What our description must be, computed from libphonenumber-js/max itself rather than written by hand.
function expectedFromLibrary(msisdn: string) {
  const parsed = parsePhoneNumber(`+${msisdn}`);
  assert.ok(parsed, `libphonenumber parses +${msisdn}`);
  assert.equal(parsed.number, `+${msisdn}`, 'sample numbers are written canonically');
  const type = parsed.getType();
  const mapped: PhoneType = type === undefined ? 'UNKNOWN' : type === 'FIXED_LINE_OR_MOBILE' ? 'MOBILE' : type;
  return {
    valid: parsed.isValid(),
    possible: parsed.isPossible(),
    type: mapped,
    isoCountryCode: parsed.country ?? null,
    countryPrefix: parsed.countryCallingCode,
    formats: { e164: parsed.number, international: parsed.formatInternational(), national: parsed.formatNational() },
  };
}

// Mobile, fixed, toll-free, shared-cost and invalid numbers in a dozen countries.
const SAMPLE = [
  '33612345678',
  '33142685300',
  '33800123456',
  '33899123456',
  '3361234567',
  '4915123456789',
  '49301234567',
  '498001234567',
  '491234',
  '447400123456',
  '442079460018',
  '448001234567',
  '447911123456',
  '44740012345',
  '34612345678',
  '34912345678',
  '34900123456',
  '34512345678',
  '393123456789',
  '390612345678',
  '39800123456',
  '39612345678',
  '14155550100',
  '12015550123',
  '18002345678',
  '11234567890',
  '919812345678',
  '911123456789',
  '911800123456',
  '91981234567',
  '2348031234567',
  '23412345678',
  '2348001234567',
  '5511961234567',
  '551123456789',
  '55800123456',
  '5511861234567',
  '819012345678',
  '81312345678',
  '81120123456',
  '81901234567',
  '61412345678',
  '61212345678',
  '611800123456',
  '61412345',
  '27821234567',
  '27211234567',
  '27800123456',
  '27121234',
  '80012345678',
  '88213123456',
];

describe('describeNumber', () => {
  it('agrees with libphonenumber-js/max on every sample number', () => {
    for (const msisdn of SAMPLE) assert.deepEqual(describeNumber(msisdn), expectedFromLibrary(msisdn), msisdn);
  });

  it('sample covers the kinds of number it claims to (so the comparison means something)', () => {
    const described = SAMPLE.map(describeNumber);
    const count = (predicate: (d: ReturnType<typeof describeNumber>) => boolean) => described.filter(predicate).length;
    assert.ok(count((d) => d.valid && d.type === 'MOBILE') >= 12);
    assert.ok(count((d) => d.valid && d.type === 'FIXED_LINE') >= 8);
    assert.ok(count((d) => d.valid && d.type === 'TOLL_FREE') >= 8);
    assert.ok(count((d) => !d.valid) >= 8);
    assert.ok(count((d) => !d.valid && d.possible) >= 1, 'some numbers are possible but not valid');
    const countries = new Set(described.filter((d) => d.valid).map((d) => d.isoCountryCode));
    for (const iso of ['FR', 'DE', 'GB', 'ES', 'IT', 'US', 'IN', 'NG', 'BR', 'JP', 'AU', 'ZA']) {
      assert.ok(countries.has(iso), iso);
    }
  });

  it('describes libphonenumber’s own mobile example of every country as a valid mobile of that country', () => {
    let checked = 0;
    let sameCountry = 0;
    for (const country of getCountries()) {
      const example = getExampleNumber(country, examples);
      if (!example) continue;
      const msisdn = example.number.slice(1);
      const description = describeNumber(msisdn);
      assert.deepEqual(description, expectedFromLibrary(msisdn), `${country} ${msisdn}`);
      assert.equal(description.valid, true, `${country} ${msisdn}`);
      assert.equal(description.type, 'MOBILE', `${country} ${msisdn}`);
      // Some examples are shared by countries of one calling code (Åland's is Finland's), so not every one.
      if (description.isoCountryCode === country) sameCountry++;
      checked++;
    }
    assert.ok(checked > 200, `checked ${checked} countries`);
    assert.ok(sameCountry > checked - 15, `${sameCountry} of ${checked} resolve to their own country`);
  });

  it('gives a French mobile in full', () => {
    assert.deepEqual(describeNumber('33612345678'), {
      valid: true,
      possible: true,
      type: 'MOBILE',
      isoCountryCode: 'FR',
      countryPrefix: '33',
      formats: { e164: '+33612345678', international: '+33 6 12 34 56 78', national: '06 12 34 56 78' },
    });
  });

  it('calls a FIXED_LINE_OR_MOBILE range MOBILE', () => {
    assert.equal(parsePhoneNumber('+14155550100')?.getType(), 'FIXED_LINE_OR_MOBILE');
    assert.equal(describeNumber('14155550100').type, 'MOBILE');
    assert.equal(describeNumber('33142685300').type, 'FIXED_LINE');
    assert.equal(describeNumber('18002345678').type, 'TOLL_FREE');
  });

  it('reports a parsed number that matches no range as UNKNOWN, not null', () => {
    const d = describeNumber('3361234567');
    assert.equal(d.valid, false);
    assert.equal(d.type, 'UNKNOWN');
    assert.equal(d.countryPrefix, '33');
  });

  it('answers valid:false, possible:false and nulls for what cannot be parsed', () => {
    const nothing = {
      valid: false,
      possible: false,
      type: null,
      isoCountryCode: null,
      countryPrefix: null,
      formats: null,
    };
    for (const msisdn of ['', 'abc', '+33612345678', '0612345678', '33 612345678', '9991234567', '1234567890123456', '3']) {
      assert.deepEqual(describeNumber(msisdn), nothing, JSON.stringify(msisdn));
    }
    assert.deepEqual(describeNumber(undefined as unknown as string), nothing);
  });

  it('does not call valid the digits libphonenumber would have to repair', () => {
    // "+33 06 12 34 56 78": libphonenumber drops the 0, but these digits are what we would send.
    assert.equal(parsePhoneNumber('+330612345678')?.isValid(), true);
    assert.deepEqual(describeNumber('330612345678'), {
      valid: false,
      possible: false,
      type: 'UNKNOWN',
      isoCountryCode: 'FR',
      countryPrefix: '33',
      formats: { e164: '+330612345678', international: '+33 0612345678', national: '0612345678' },
    });
  });

  it('describes whatever normaliseMsisdn accepts without a parse failure', () => {
    for (const input of ['+33 (0)6 12-34-56-78', '0044 20 7946 0018', '+1 (415) 555-0100']) {
      const normalised = normaliseMsisdn(input);
      assert.ok(normalised.ok);
      assert.equal(describeNumber(normalised.msisdn).valid, true, input);
    }
  });
});

describe('countryName', () => {
  it('names countries in English', () => {
    assert.equal(countryName('FR'), 'France');
    assert.equal(countryName('DE'), 'Germany');
    assert.equal(countryName('GB'), 'United Kingdom');
    assert.equal(countryName('US'), 'United States');
    assert.equal(countryName('JP'), 'Japan');
    assert.equal(countryName('ZA'), 'South Africa');
    assert.equal(countryName('NG'), 'Nigeria');
  });

  it('ignores case and surrounding space', () => {
    assert.equal(countryName('fr'), 'France');
    assert.equal(countryName(' es '), 'Spain');
  });

  it('gives back a code it cannot name', () => {
    assert.equal(countryName('X1'), 'X1');
    assert.equal(countryName('FRA'), 'FRA');
    assert.equal(countryName(''), '');
  });
});

it('checkNumber agrees with describeNumber on validity and country', async () => {
  const { checkNumber, describeNumber } = await import('../../src/domain/phone.ts');
  const samples = [
    '33612345678',
    '330612345678',
    '33123',
    '4915123456789',
    '14155550100',
    '447911123456',
    '8001234567',
    '999',
    '0',
    'abc',
    '919876543210',
    '2348031234567',
  ];
  for (const n of samples) {
    const d = describeNumber(n);
    assert.deepEqual(checkNumber(n), { valid: d.valid, isoCountryCode: d.valid || d.isoCountryCode ? d.isoCountryCode : null }, n);
  }
});

test('numberRange agrees with libphonenumber asked the long way (validity, type, country) on any digits', () => {
  const longWay = (msisdn: string) => {
    const parsed = parsePhoneNumber(`+${msisdn}`);
    if (!parsed) return { valid: false, type: null, isoCountryCode: null, countryPrefix: null };
    const exact = parsed.number === `+${msisdn}`;
    const t = parsed.getType();
    return {
      valid: exact && parsed.isValid(),
      type: !exact ? 'UNKNOWN' : t === undefined ? 'UNKNOWN' : t === 'FIXED_LINE_OR_MOBILE' ? 'MOBILE' : t,
      isoCountryCode: parsed.country ?? null,
      countryPrefix: parsed.countryCallingCode,
    };
  };
  // Calling codes from every continent and three non-geographic plans, then any digits: draws land in real plans.
  const prefix = fc.constantFrom('1', '7', '20', '33', '34', '44', '49', '55', '61', '86', '91', '212', '225', '351', '852', '880', '971', '800', '882', '979');
  fc.assert(
    fc.property(prefix, fc.string({ unit: fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9'), minLength: 4, maxLength: 12 }), (cc, rest) => {
      const msisdn = cc + rest;
      if (msisdn.length > 15) return;
      assert.deepEqual(numberRange(msisdn), longWay(msisdn), msisdn);
    }),
    { seed: 20261128, numRuns: 3000 },
  );
});
