import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkCountryList,
  countryAllowed,
  countryPolicy,
  describeRange,
  formatVelocityLimit,
  parseCountryList,
  parseVelocityLimits,
  policyCountries,
  type VelocityLimit,
  velocityLimitProblem,
  velocityRange,
} from '../../src/domain/fraud-guards.ts';

describe('destination countries', () => {
  it('are the organisation list when it has one, else its country and the server list, else no guard', () => {
    const own = countryPolicy(['BE'], 'FR', ['LU']);
    assert.deepEqual(own && policyCountries(own), ['BE']);
    const byDefault = countryPolicy(null, 'FR', ['LU']);
    assert.deepEqual(byDefault && policyCountries(byDefault), ['FR', 'LU']);
    assert.equal(countryPolicy(null, null, ['LU']), null, 'no country and no list: existing traffic is not blocked');
    assert.deepEqual(countryPolicy(['*'], 'FR', []), { any: true });
  });

  it('let a message go to an allowed country only; no known country is not allowed under a guard', () => {
    const fr = countryPolicy(null, 'FR', []);
    assert.equal(countryAllowed(fr, 'FR'), true);
    assert.equal(countryAllowed(fr, 'BE'), false);
    assert.equal(countryAllowed(fr, null), false);
    assert.equal(countryAllowed(null, 'BE'), true);
    assert.equal(countryAllowed(null, null), true);
    assert.equal(countryAllowed({ any: true }, 'BE'), true);
  });

  it('are checked as ISO codes or * alone, in upper case, without repeats', () => {
    assert.deepEqual(checkCountryList(['fr', 'BE', 'FR']), { ok: true, value: ['FR', 'BE'] });
    assert.deepEqual(checkCountryList(['*']), { ok: true, value: ['*'] });
    assert.equal(checkCountryList(['*', 'FR']).ok, false);
    assert.equal(checkCountryList([]).ok, false);
    assert.deepEqual(checkCountryList(['FRA']), { ok: false, reason: '"FRA" is not an ISO 3166 alpha-2 country code, e.g. FR' });
    assert.deepEqual(parseCountryList(' be, lu ,'), ['BE', 'LU']);
    assert.deepEqual(parseCountryList(''), []);
    assert.throws(() => parseCountryList('*'), /\* is for an organisation of its own/);
    assert.throws(() => parseCountryList('FR,ZZ'), /ZZ/);
  });
});

describe('velocity limits', () => {
  const blocks: VelocityLimit = { prefix: '', rangeDigits: 3, limit: 20, windowSeconds: 60 };
  const nigeria: VelocityLimit = { prefix: '2348', rangeDigits: null, limit: 50, windowSeconds: 3_600 };

  it('count a number in its range: a block of numbers differing in their last digits, or the whole prefix', () => {
    assert.equal(velocityRange('33612345678', blocks), '33612345');
    assert.equal(velocityRange('33612345999', blocks), '33612345');
    assert.equal(velocityRange('2348031234567', nigeria), '2348');
    assert.equal(velocityRange('33612345678', nigeria), null, 'not about that number');
    assert.equal(velocityRange('33612345678', { ...blocks, rangeDigits: 0 }), '33612345678', 'each number alone');
    assert.equal(velocityRange('4412', { prefix: '44', rangeDigits: 5, limit: 1, windowSeconds: 1 }), '44', 'never shorter than the prefix');
    assert.equal(describeRange('33612345', blocks), '33612345xxx');
    assert.equal(describeRange('2348', nigeria), '2348…');
  });

  it('are read from TERN_VELOCITY_LIMITS and written back the same way', () => {
    assert.deepEqual(parseVelocityLimits('*/3=20/1m, 2348=50/1h,4477/0=5/30s'), [
      blocks,
      nigeria,
      { prefix: '4477', rangeDigits: 0, limit: 5, windowSeconds: 30 },
    ]);
    assert.equal(formatVelocityLimit(blocks), '*/3=20/60s');
    assert.deepEqual(parseVelocityLimits(formatVelocityLimit(nigeria)), [nigeria]);
    assert.deepEqual(parseVelocityLimits(''), []);
    for (const bad of ['*=20/1m', 'x/3=20/1m', '*/3=0/1m', '*/3=20/2d', '*/3=20', '*/13=1/1s', '*/3=1/25h']) {
      assert.throws(() => parseVelocityLimits(bad), Error, bad);
    }
  });

  it('are checked field by field', () => {
    assert.equal(velocityLimitProblem(blocks), null);
    assert.deepEqual(velocityLimitProblem({ ...blocks, rangeDigits: null }), {
      field: 'rangeDigits',
      reason: 'is required when prefix is "" (every number would be one range)',
    });
    assert.equal(velocityLimitProblem({ ...blocks, prefix: '+33' })?.field, 'prefix');
    assert.equal(velocityLimitProblem({ ...blocks, limit: 0 })?.field, 'limit');
    assert.equal(velocityLimitProblem({ ...blocks, windowSeconds: 86_401 })?.field, 'windowSeconds');
    assert.equal(velocityLimitProblem({ ...blocks, rangeDigits: 2.5 })?.field, 'rangeDigits');
  });
});
