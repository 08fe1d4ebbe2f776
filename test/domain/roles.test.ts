import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GRANTS, isUserRole, ROLES, rolesAllow, seesOrganisation, USER_ROLES } from '../../src/domain/tenancy.ts';

describe('roles and what they may do', () => {
  it('every role has a row in the one table, and every person role is a key role too', () => {
    for (const r of ROLES) assert.ok(Array.isArray(GRANTS[r]), r);
    for (const r of USER_ROLES) assert.ok((ROLES as readonly string[]).includes(r), r);
  });

  it('SENDER sends and reads, and reads no balance, consumption or users', () => {
    assert.ok(rolesAllow(['SENDER'], 'messages:send'));
    assert.ok(rolesAllow(['SENDER'], 'messages:read'));
    for (const p of ['organisation:read', 'consumption:read', 'funds:transfer', 'users:admin', 'channel:write', 'webhooks:write'] as const) {
      assert.equal(rolesAllow(['SENDER'], p), false, p);
    }
  });

  it('DEVELOPER manages keys and webhooks, BILLING money, VIEWER reads only', () => {
    assert.ok(rolesAllow(['DEVELOPER'], 'channel:write') && rolesAllow(['DEVELOPER'], 'webhooks:write'));
    assert.equal(rolesAllow(['DEVELOPER'], 'messages:send'), false);
    assert.equal(rolesAllow(['DEVELOPER'], 'organisation:read'), false);
    assert.ok(rolesAllow(['BILLING'], 'organisation:read') && rolesAllow(['BILLING'], 'funds:transfer') && rolesAllow(['BILLING'], 'consumption:read'));
    assert.equal(rolesAllow(['BILLING'], 'messages:send'), false);
    assert.equal(rolesAllow(['BILLING'], 'organisation:admin'), false, 'BILLING moves funds but creates no sub-organisation');
    for (const p of ['messages:send', 'channel:write', 'webhooks:write', 'blacklist:write', 'funds:transfer', 'organisation:admin', 'users:admin'] as const) {
      assert.equal(rolesAllow(['VIEWER'], p), false, p);
    }
  });

  it('OWNER and ADMIN may do everything; the earlier key roles keep their meaning', () => {
    assert.deepEqual(GRANTS.OWNER, GRANTS.ADMIN);
    assert.ok(rolesAllow(['ADMIN'], 'users:admin'));
    assert.equal(rolesAllow(['MANAGER'], 'users:admin'), false);
    assert.equal(rolesAllow(['MANAGER'], 'funds:transfer'), false);
    assert.equal(rolesAllow(['USER'], 'organisation:read'), false);
    assert.equal(rolesAllow(['MESSAGE'], 'channel:read'), false);
    assert.equal(seesOrganisation(['USER']), false);
    assert.equal(seesOrganisation(['SENDER']), false);
    assert.ok(seesOrganisation(['VIEWER']));
  });

  it('refuses what is not a person role', () => {
    for (const v of ['MANAGER', 'owner', '', null, 3, 'ROOT']) assert.equal(isUserRole(v), false, String(v));
    assert.ok(isUserRole('BILLING'));
  });
});
