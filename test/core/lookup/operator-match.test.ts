import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildOperatorIndex,
  findOperator,
  isFormerName,
  MATCH_CONTAINED,
  MATCH_EXACT,
  nameMatchScore,
  normaliseOperatorName,
} from '../../../src/core/lookup/operator-match.ts';
import type { OperatorRecord } from '../../../src/core/lookup/operator-match.ts';

function record(fields: Partial<OperatorRecord> & { mnc: string }): OperatorRecord {
  return {
    countryCode: 'FR',
    mcc: '208',
    brand: null,
    operator: null,
    status: 'Operational',
    bands: 'GSM 900 / LTE 800',
    notes: null,
    ...fields,
  };
}

const find = (records: OperatorRecord[], name: string, iso = 'FR', country = 'France') =>
  findOperator(buildOperatorIndex(records), iso, name, country)?.mnc ?? null;

describe('normaliseOperatorName', () => {
  it('drops case, accents, punctuation, company words and the country’s name', () => {
    assert.deepEqual(normaliseOperatorName('Orange France', 'France').key, ['orange']);
    assert.deepEqual(normaliseOperatorName('Orange S.A.').key, ['orange']);
    assert.deepEqual(normaliseOperatorName('Free Mobile').key, ['free']);
    assert.deepEqual(normaliseOperatorName('Bouygues Telecom').key, ['bouygues']);
    assert.deepEqual(normaliseOperatorName('Telefónica Móviles España', 'Spain').key, ['telefonica', 'espana']);
    assert.deepEqual(normaliseOperatorName('Vodafone UK', 'United Kingdom').key, ['vodafone']);
    assert.deepEqual(normaliseOperatorName('Orange S.A.').words, ['orange', 's', 'a']);
  });

  it('spells numbers as digits and keeps a name made only of common words', () => {
    assert.deepEqual(normaliseOperatorName('Three').key, ['3']);
    assert.deepEqual(normaliseOperatorName('Mobile Telecom').key, ['mobile', 'telecom']);
  });
});

describe('nameMatchScore', () => {
  const score = (a: string, b: string, country = '') => nameMatchScore(normaliseOperatorName(a, country), normaliseOperatorName(b, country));

  it('scores equal names, written differently, as exact', () => {
    assert.equal(score('Orange France', 'Orange', 'France'), MATCH_EXACT);
    assert.equal(score('SFR', 'SFR'), MATCH_EXACT);
    assert.equal(score('Euroinformation Telecom', 'Euro-Information Telecom'), MATCH_EXACT);
    assert.equal(score('1&1 Mobilfunk', '1&1'), MATCH_EXACT);
    assert.equal(score('Cell C', 'Cell C (Pty) Ltd'), MATCH_EXACT);
    assert.equal(score('Three', '3'), MATCH_EXACT);
  });

  it('scores a leading run of words as contained', () => {
    assert.equal(score('Vodafone', 'Vodafone Italia S.p.A.'), MATCH_CONTAINED);
    assert.equal(score('Vodafone/Lycamobile', 'Vodafone'), MATCH_CONTAINED);
  });

  it('does not match on a shared trailing word or a short fragment', () => {
    assert.equal(score('3 Italia', 'Telecom Italia S.p.A.'), 0);
    assert.equal(score('BT', 'BT OnePhone'), 0);
    assert.equal(score('Orange', 'Bouygues Telecom'), 0);
  });
});

describe('isFormerName', () => {
  const former = (name: string, notes: string | null) => isFormerName(normaliseOperatorName(name), notes);

  it('finds a name given after Former, Formerly or Previously, ignoring spaces and hyphens', () => {
    assert.equal(former('Eplus', 'Former E-Plus until 2014; UMTS shut down Dec 2021'), true);
    assert.equal(former('T-Mobile', 'Formerly D1 - DeTeMobil, D1-Telekom, T-D1, T-Mobile'), true);
    assert.equal(former('Orange', 'Previously owned by Orange S.A.'), true);
    assert.equal(former('3 Italia', 'Former 3 Italia'), true);
  });

  it('ignores names mentioned for other reasons, and partial words', () => {
    assert.equal(former('Orange', 'Using Orange Network'), false);
    assert.equal(former('SFR', 'Uses SFR or RED'), false);
    assert.equal(former('Wind', 'Former Windstream'), false);
    assert.equal(former('Wind', null), false);
  });
});

describe('findOperator', () => {
  it('prefers an exact name over a contained one over a former name', () => {
    const records = [
      record({ mnc: '01', brand: 'Nextco', notes: 'Former Acme' }),
      record({ mnc: '02', brand: 'Acme Group Holdings Extra' }),
      record({ mnc: '03', operator: 'Acme' }),
    ];
    assert.equal(find(records, 'Acme'), '03');
    assert.equal(find(records.slice(0, 2), 'Acme'), '02');
    assert.equal(find(records.slice(0, 1), 'Acme'), '01');
  });

  it('prefers an operational code, then a main one, then a radio network with more bands, then the lowest', () => {
    assert.equal(find([record({ mnc: '01', brand: 'Acme', status: 'Unknown' }), record({ mnc: '09', brand: 'Acme' })], 'Acme'), '09');
    assert.equal(
      find([record({ mnc: '09', brand: 'Acme', notes: 'launched for Acme outbound roaming services' }), record({ mnc: '10', brand: 'Acme' })], 'Acme'),
      '10',
    );
    assert.equal(find([record({ mnc: '02', brand: 'Acme', notes: 'Zones Blanches' }), record({ mnc: '20', brand: 'Acme' })], 'Acme'), '20');
    assert.equal(find([record({ mnc: '08', brand: 'Acme', bands: 'MVNO' }), record({ mnc: '11', brand: 'Acme' })], 'Acme'), '11');
    assert.equal(
      find([record({ mnc: '16', brand: 'Acme', bands: 'LTE 700' }), record({ mnc: '15', brand: 'Acme', bands: 'LTE 700 / LTE 1800' })], 'Acme'),
      '15',
    );
    assert.equal(find([record({ mnc: '11', brand: 'Acme' }), record({ mnc: '10', brand: 'Acme' })], 'Acme'), '10');
    assert.equal(find([record({ mnc: '100', brand: 'Acme' }), record({ mnc: '99', brand: 'Acme' })], 'Acme'), '99');
  });

  it('never answers with a network that is gone', () => {
    assert.equal(find([record({ mnc: '01', brand: 'Acme', status: 'Not operational' })], 'Acme'), null);
    assert.equal(find([record({ mnc: '01', brand: 'Acme', status: 'Returned spare' })], 'Acme'), null);
  });

  it('looks only in the number’s country, counting rows shared by several countries for each', () => {
    const records = [
      record({ mnc: '01', brand: 'Acme', countryCode: 'BE', mcc: '206' }),
      record({ mnc: '02', brand: 'Acme', countryCode: 'AU/CC/CX', mcc: '505' }),
      record({ mnc: '03', brand: 'Acme', countryCode: null, mcc: '901' }),
    ];
    assert.equal(find(records, 'Acme'), null);
    assert.equal(find(records, 'Acme', 'BE', 'Belgium'), '01');
    assert.equal(find(records, 'Acme', 'CX', 'Christmas Island'), '02');
    assert.equal(find(records, 'Acme', 'AU', 'Australia'), '02');
  });

  it('answers null when nothing is named alike', () => {
    assert.equal(find([record({ mnc: '01', brand: 'Orange', operator: 'Orange S.A.' })], 'Prixtel'), null);
  });
});

describe('findOperator on the real mcc-mnc-list', async () => {
  const { all } = await import('mcc-mnc-list');
  const index = buildOperatorIndex(all() as OperatorRecord[]);
  const code = (iso: string, country: string, name: string) => {
    const found = findOperator(index, iso, name, country);
    return found ? found.mcc + found.mnc : null;
  };

  it('finds the main code of well-known networks named as Google names them', () => {
    assert.equal(code('FR', 'France', 'Orange France'), '20801');
    assert.equal(code('FR', 'France', 'SFR'), '20810');
    assert.equal(code('FR', 'France', 'Bouygues'), '20820');
    assert.equal(code('FR', 'France', 'Free Mobile'), '20815');
    assert.equal(code('GB', 'United Kingdom', 'Vodafone'), '23415');
    assert.equal(code('GB', 'United Kingdom', 'EE'), '23430');
    assert.equal(code('GB', 'United Kingdom', 'Three'), '23420');
    assert.equal(code('DE', 'Germany', 'T-Mobile'), '26201');
    assert.equal(code('DE', 'Germany', 'Eplus'), '26203');
    assert.equal(code('IT', 'Italy', '3 Italia'), '22299');
    assert.equal(code('ES', 'Spain', 'Movistar'), '21407');
    assert.equal(code('NG', 'Nigeria', 'MTN'), '62130');
    assert.equal(code('ZA', 'South Africa', 'Vodacom'), '65501');
    assert.equal(code('JP', 'Japan', 'NTT Docomo'), '44010');
    assert.equal(code('AU', 'Australia', 'Telstra'), '50501');
  });
});
