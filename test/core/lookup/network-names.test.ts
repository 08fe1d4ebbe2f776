import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexNetworkNames, networkByMccMnc } from '../../../src/core/lookup/network-names.ts';
import type { OperatorRecord } from '../../../src/core/lookup/operator-match.ts';

const record = (r: Partial<OperatorRecord>): OperatorRecord => ({
  countryCode: 'FR',
  mcc: '208',
  mnc: '01',
  brand: null,
  operator: null,
  status: 'Operational',
  bands: null,
  notes: null,
  ...r,
});

test('an MCC/MNC is named after its brand, else its operator, with the English country name', async () => {
  assert.deepEqual(await networkByMccMnc('20801'), { mccMnc: '20801', country: 'France', network: 'Orange' });
  assert.deepEqual(await networkByMccMnc('20810'), { mccMnc: '20810', country: 'France', network: 'SFR' });
  assert.deepEqual(await networkByMccMnc('26201'), { mccMnc: '26201', country: 'Germany', network: 'Telekom' });
});

test('unknown codes keep their mccMnc; an empty one is all nulls', async () => {
  assert.deepEqual(await networkByMccMnc('00000'), { mccMnc: '00000', country: null, network: null });
  assert.deepEqual(await networkByMccMnc(''), { mccMnc: null, country: null, network: null });
});

test('an operational entry wins over a withdrawn one listed under the same code; shared rows name the first country', () => {
  const index = indexNetworkNames([
    record({ mnc: '09', brand: 'Old', status: 'Not operational' }),
    record({ mnc: '09', brand: null, operator: 'New Networks SA' }),
    record({ mcc: '505', mnc: '01', countryCode: 'AU/CC/CX', brand: 'Telstra' }),
    record({ mnc: '77', countryCode: null, brand: 'Nowhere' }),
  ]);
  assert.deepEqual(index.get('20809'), { mccMnc: '20809', country: 'France', network: 'New Networks SA' });
  assert.deepEqual(index.get('50501'), { mccMnc: '50501', country: 'Australia', network: 'Telstra' });
  assert.deepEqual(index.get('20877'), { mccMnc: '20877', country: null, network: 'Nowhere' });
});
