import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { AddressRefusedError, guardedLookup, isPublicAddress, resolvePublic, type LookupAll } from '../../../src/doors/webhooks/address-guard.ts';

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '9.255.255.255', // just below 10/8
  '11.0.0.0', // just above 10/8
  '100.63.255.255', // just below 100.64/10
  '100.128.0.0', // just above 100.64/10
  '126.255.255.255',
  '128.0.0.1',
  '169.253.255.255',
  '169.255.0.1',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above 172.16/12
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255', // last before multicast
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '2a00:1450:4007:80a::200e',
  '2001:200::1', // first outside 2001::/23
  '3ffe::1',
  '::ffff:8.8.8.8', // IPv4-mapped, judged as IPv4
  '::ffff:808:808',
  '64:ff9b::8.8.8.8', // NAT64
  '64:ff9b::808:808',
  '2002:808:808::1', // 6to4 of 8.8.8.8
];

const NOT_PUBLIC = [
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.0',
  '10.1.2.3',
  '10.255.255.255',
  '100.64.0.0',
  '100.127.255.255',
  '127.0.0.1',
  '127.255.255.254',
  '169.254.0.1',
  '169.254.169.254', // cloud metadata
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.0.1',
  '192.168.255.255',
  '198.18.0.1',
  '198.19.255.255',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  'fc00::1',
  'fd12:3456:789a::1',
  'fe80::1',
  'fe80::1%eth0',
  'febf:ffff::1',
  'fec0::1', // deprecated site-local
  'ff02::1',
  'ff05::1:3',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:192.168.1.1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a00:1',
  '64:ff9b::169.254.169.254',
  '64:ff9b:1::8.8.8.8', // local-use NAT64
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2002:c0a8:101::1', // 6to4 of 192.168.1.1
  '::127.0.0.1', // deprecated IPv4-compatible
  '::8.8.8.8',
  '100::1', // discard-only
  '2001::1', // Teredo
  '2001:db8::1',
  '3fff::1',
];

const NOT_AN_ADDRESS = [
  '',
  'localhost',
  'example.com',
  '1.2.3',
  '1.2.3.4.5',
  '256.0.0.1',
  '010.0.0.1',
  '[::1]',
  ' 8.8.8.8',
  '1::2::3',
  '0x7f000001',
  '2130706433',
];

describe('isPublicAddress', () => {
  for (const ip of PUBLIC) {
    it(`accepts ${ip}`, () => assert.equal(isPublicAddress(ip), true));
  }
  for (const ip of NOT_PUBLIC) {
    it(`refuses ${ip}`, () => assert.equal(isPublicAddress(ip), false));
  }
  it('refuses anything that is not an IP literal', () => {
    for (const text of NOT_AN_ADDRESS) assert.equal(isPublicAddress(text), false, text);
  });
});

function fakeDns(table: Record<string, string[]>): LookupAll {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const dns = fakeDns({
  'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
  'mixed.test': ['93.184.216.34', '10.0.0.5'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'v6only.test': ['2606:2800:220:1::1'],
  'empty.test': [],
});

describe('resolvePublic', () => {
  it('returns every address when all are public', async () => {
    assert.deepEqual(await resolvePublic('public.test', false, dns), [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('refuses a name when any of its addresses is not public, naming both', async () => {
    await assert.rejects(resolvePublic('mixed.test', false, dns), (err: unknown) => {
      assert.ok(err instanceof AddressRefusedError);
      assert.equal(err.hostname, 'mixed.test');
      assert.equal(err.address, '10.0.0.5');
      assert.equal(err.code, 'ERR_TERN_ADDRESS_REFUSED');
      assert.match(err.message, /mixed\.test resolves to 10\.0\.0\.5/);
      assert.match(err.message, /TERN_WEBHOOK_ALLOW_PRIVATE=true/);
      return true;
    });
    await assert.rejects(resolvePublic('mapped.test', false, dns), AddressRefusedError);
  });

  it('allows private addresses when told to', async () => {
    assert.deepEqual(await resolvePublic('mixed.test', true, dns), [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
  });

  it('passes resolution failures through and treats no address as not found', async () => {
    await assert.rejects(resolvePublic('unknown.test', false, dns), { code: 'ENOTFOUND' });
    await assert.rejects(resolvePublic('empty.test', true, dns), { code: 'ENOTFOUND', message: 'empty.test has no address' });
  });

  it('refuses localhost through the system resolver', async () => {
    await assert.rejects(resolvePublic('localhost', false), AddressRefusedError);
    const addresses = await resolvePublic('localhost', true);
    assert.ok(addresses.length > 0);
    assert.ok(addresses.every((entry) => !isPublicAddress(entry.address)));
  });
});

/** Calls a lookup the way net.connect does and reports what its callback received. */
function callLookup(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  options: LookupOptions,
): Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) => {
    lookup(hostname, options, (err, address, family) => resolve({ err, address, family }));
  });
}

describe('guardedLookup', () => {
  it('hands every vetted address to a happy-eyeballs connect (all: true)', async () => {
    const answer = await callLookup(guardedLookup(false, dns), 'public.test', { all: true });
    assert.equal(answer.err, null);
    assert.deepEqual(answer.address, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('hands the first vetted address to a plain connect', async () => {
    const answer = await callLookup(guardedLookup(false, dns), 'public.test', {});
    assert.equal(answer.err, null);
    assert.equal(answer.address, '93.184.216.34');
    assert.equal(answer.family, 4);
  });

  it('honours a requested family', async () => {
    const v6 = await callLookup(guardedLookup(false, dns), 'public.test', { family: 6 });
    assert.equal(v6.address, '2606:2800:220:1::1');
    assert.equal(v6.family, 6);
    const v4 = await callLookup(guardedLookup(false, dns), 'public.test', { family: 'IPv4', all: true });
    assert.deepEqual(v4.address, [{ address: '93.184.216.34', family: 4 }]);
    const none = await callLookup(guardedLookup(false, dns), 'v6only.test', { family: 4 });
    assert.equal(none.err?.code, 'ENOTFOUND');
  });

  it('fails the connect with AddressRefusedError rather than returning a private address', async () => {
    const answer = await callLookup(guardedLookup(false, dns), 'mixed.test', { all: true });
    assert.ok(answer.err instanceof AddressRefusedError);
    assert.deepEqual(answer.address, []);
  });

  it('returns private addresses when they are allowed', async () => {
    const answer = await callLookup(guardedLookup(true, dns), 'mixed.test', { all: true });
    assert.equal(answer.err, null);
    assert.equal((answer.address as LookupAddress[]).length, 2);
  });

  it('passes resolver errors to the callback', async () => {
    const answer = await callLookup(guardedLookup(true, dns), 'unknown.test', {});
    assert.equal(answer.err?.code, 'ENOTFOUND');
  });
});
