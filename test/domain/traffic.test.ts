import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_TRAFFIC_LIMITS, groupOf, lockoutMs, parseTrafficLimits } from '../../src/domain/traffic.ts';

describe('traffic limits', () => {
  it('read TERN_RATE_LIMITS: per key / per organisation, one number for both, the rest from the defaults', () => {
    const l = parseTrafficLimits('send=5/50, lookup=7');
    assert.deepEqual(l.send, { perKey: 5, perOrganisation: 50 });
    assert.deepEqual(l.lookup, { perKey: 7, perOrganisation: 7 });
    assert.deepEqual(l.read, DEFAULT_TRAFFIC_LIMITS.read);
    assert.deepEqual(parseTrafficLimits(''), DEFAULT_TRAFFIC_LIMITS);
    for (const bad of ['send=0', 'fax=1', 'send=1/x', 'send', 'send=-1']) assert.throws(() => parseTrafficLimits(bad), Error, bad);
  });

  it('count sends, lookups and everything else apart', () => {
    assert.equal(groupOf('messages:send'), 'send');
    assert.equal(groupOf('numbers:lookup'), 'lookup');
    assert.equal(groupOf('messages:read'), 'read');
    assert.equal(groupOf('organisation:admin'), 'read');
  });

  it('lock an address out for a minute, twice as long at each new burst, an hour at most', () => {
    assert.deepEqual([1, 2, 3, 6, 7, 50].map(lockoutMs), [60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
  });
});
