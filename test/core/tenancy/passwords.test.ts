import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPassword, hashPassword, verifyPassword } from '../../../src/core/tenancy/passwords.ts';
import { roleFromGroups } from '../../../src/core/tenancy/sso.ts';

describe('passwords', () => {
  it('hashes with scrypt and a salt of its own each time, and verifies', async () => {
    const a = await hashPassword('a password long enough');
    const b = await hashPassword('a password long enough');
    assert.match(a, /^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.notEqual(a, b, 'a fresh salt');
    assert.ok(await verifyPassword('a password long enough', a));
    assert.equal(await verifyPassword('a password long enough!', a), false);
    assert.equal(await verifyPassword('A password long enough', a), false);
  });

  it('never accepts a malformed stored hash', async () => {
    for (const stored of ['', 'scrypt', 'bcrypt$1$2$3$abc$def', 'scrypt$32768$8$1$$'])
      assert.equal(await verifyPassword('whatever password', stored), false, stored);
  });

  it('reads composed and decomposed accents as one password', async () => {
    const h = await hashPassword('mot de passe café!');
    assert.ok(await verifyPassword('mot de passe cafe\u0301!', h));
  });

  it('refuses passwords too short or too long', () => {
    assert.throws(() => checkPassword('short'), /12 to 256/);
    assert.throws(() => checkPassword('x'.repeat(257)), /12 to 256/);
    assert.throws(() => checkPassword(undefined), /12 to 256/);
    assert.equal(checkPassword('x'.repeat(12)), 'x'.repeat(12));
  });
});

describe('group-to-role mapping', () => {
  const mapping = [
    { group: 'tern-admins', role: 'ADMIN' as const },
    { group: 'senders', role: 'SENDER' as const },
  ];
  it('takes the first entry of the mapping whose group the user is in', () => {
    assert.equal(roleFromGroups(['senders', 'tern-admins'], mapping), 'ADMIN');
    assert.equal(roleFromGroups(['senders'], mapping), 'SENDER');
    assert.equal(roleFromGroups(['others'], mapping), null);
    assert.equal(roleFromGroups([], []), null);
  });
});
