import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreError } from '../../../src/core/errors.ts';
import { hashSmppPassword, ipAllowed, normaliseAllowedIps, verifySmppPassword } from '../../../src/core/tenancy/smpp-credentials.ts';

describe('SMPP passwords', () => {
  it('are salted scrypt hashes that verify only the right password', async () => {
    const a = await hashSmppPassword('secret');
    const b = await hashSmppPassword('secret');
    assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    assert.notEqual(a, b, 'a fresh salt each time');
    assert.ok(!a.includes('secret'));
    assert.equal(await verifySmppPassword('secret', a), true);
    assert.equal(await verifySmppPassword('secret', b), true);
    assert.equal(await verifySmppPassword('Secret', a), false);
    assert.equal(await verifySmppPassword('', a), false);
    assert.equal(await verifySmppPassword('secret ', a), false);
  });

  it('never match a malformed stored hash', async () => {
    for (const stored of ['', 'secret', 'sha256$abc', 'scrypt$x$8$1$c2FsdA==$aGFzaA==', 'scrypt$16384$8$1$c2FsdA==$']) {
      assert.equal(await verifySmppPassword('secret', stored), false, stored);
    }
  });
});

describe('SMPP allowed addresses', () => {
  it('normalises addresses and CIDR ranges, and refuses anything else naming the entry', () => {
    assert.deepEqual(normaliseAllowedIps([' 203.0.113.7 ', '10.0.0.0/8', '2001:db8::/032', '::1']), ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32', '::1']);
    for (const [bad, index] of [
      [['10.0.0.256'], 0],
      [['1.2.3.4', 'example.com'], 1],
      [['10.0.0.0/33'], 0],
      [['2001:db8::/129'], 0],
      [['10.0.0.0/8/8'], 0],
      [['10.0.0.0/'], 0],
      [[''], 0],
    ] as const) {
      assert.throws(
        () => normaliseAllowedIps(bad),
        (e: unknown) => e instanceof CoreError && e.kind === 'INVALID_REQUEST' && e.detail.includes(`allowedIps[${index}]`),
        JSON.stringify(bad),
      );
    }
    assert.throws(() => normaliseAllowedIps(Array.from({ length: 101 }, () => '1.2.3.4')), /at most 100/);
  });

  it('allows any address with an empty list, else only listed addresses and ranges', () => {
    assert.equal(ipAllowed([], '198.51.100.9'), true);
    const list = ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'];
    assert.equal(ipAllowed(list, '203.0.113.7'), true);
    assert.equal(ipAllowed(list, '203.0.113.8'), false);
    assert.equal(ipAllowed(list, '10.200.3.4'), true);
    assert.equal(ipAllowed(list, '11.0.0.1'), false);
    assert.equal(ipAllowed(list, '::ffff:10.1.2.3'), true, 'IPv4 seen through an IPv6 socket');
    assert.equal(ipAllowed(list, '::ffff:192.0.2.1'), false);
    assert.equal(ipAllowed(list, '2001:db8:1::5'), true);
    assert.equal(ipAllowed(list, '2001:db9::5'), false);
    assert.equal(ipAllowed(list, 'not-an-address'), false);
  });
});
