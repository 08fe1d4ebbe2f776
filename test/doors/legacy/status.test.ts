import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEGACY_STATUS_CODES, legacyGroupStatus, legacyStatusDescription, legacyStatusOf, restStatusOfLegacy } from '../../../src/doors/legacy/status.ts';
import { MESSAGE_STATUSES, type MessageStatus, type StatusDetail } from '../../../src/domain/status.ts';

const code = (status: MessageStatus, detail: string | null = null, type = 'SMS') => legacyStatusOf(status, detail, type)?.code ?? null;

describe('legacy status table', () => {
  it('lists every code of the legacy annex once', () => {
    const annex = [
      0, 1, 2, 10, 11, 12, 13, 14, 15, 16, 21, 22, 33, 34, 35, 36, 37, 38, 50, 100, 101, 3501, 3502, 3503, 3504, 3521, 3522, 3523, 3524, 3525, 3526, 3527, 3560,
      3599, 3998, 3999,
    ];
    assert.deepEqual([...LEGACY_STATUS_CODES], annex);
    for (const c of annex) assert.ok(legacyStatusDescription(c), `code ${c} has a description`);
    assert.equal(legacyStatusDescription(16), 'Listened');
    assert.equal(legacyStatusDescription(50), 'Not delivered');
    assert.equal(legacyStatusDescription(4242), null);
  });

  it('maps the progress statuses', () => {
    assert.equal(code('SCHEDULED'), 10);
    assert.equal(code('ENROUTE'), 13);
    assert.equal(code('READ'), 100);
  });

  it('tells a listened call from a received SMS', () => {
    assert.equal(code('DELIVERED', null, 'SMS'), 11);
    assert.equal(code('DELIVERED', null, 'VOICE'), 16);
    assert.equal(code('DELIVERED', null, 'RCS'), 11);
    assert.deepEqual(legacyStatusOf('DELIVERED', null, 'VOICE'), { code: 16, description: 'Listened' });
  });

  it('maps call outcomes: busy and no answer are not delivered, an invalid number is an invalid recipient', () => {
    assert.equal(code('UNDELIVERED', 'BUSY', 'VOICE'), 50);
    assert.equal(code('UNDELIVERED', 'NO_ANSWER', 'VOICE'), 50);
    assert.equal(code('UNDELIVERABLE', 'INVALID_PHONE_NUMBER', 'VOICE'), 3998);
  });

  it('maps each failure detail to its own code, and unknown details to the status catch-all', () => {
    const cases: Array<[MessageStatus, StatusDetail | null, number]> = [
      ['UNDELIVERED', 'EXPIRED', 37],
      ['UNDELIVERED', null, 50],
      ['UNDELIVERED', 'OPERATOR_ERROR', 50],
      ['UNDELIVERABLE', 'INVALID_PHONE_NUMBER', 3998],
      ['UNDELIVERABLE', 'BLACKLISTED', 3999],
      ['UNDELIVERABLE', 'INSUFFICIENT_CREDIT', 33],
      ['UNDELIVERABLE', 'NOT_ROUTABLE', 3560],
      ['UNDELIVERABLE', 'SPAM', 3524],
      ['UNDELIVERABLE', 'REJECTED', 22],
      ['UNDELIVERABLE', 'DAILY_LIMIT_EXCEEDED', 22],
      ['UNDELIVERABLE', 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED', 22],
      ['UNDELIVERABLE', 'OPERATOR_ERROR', 3521],
      ['UNDELIVERABLE', null, 21],
      ['UNDELIVERABLE', 'NOT_RCS_CAPABLE', 21],
    ];
    for (const [status, detail, expected] of cases) assert.equal(code(status, detail), expected, `${status}/${detail}`);
    assert.equal(code('UNDELIVERABLE', 'SOMETHING_NEW'), 21);
  });

  it('has no code for a cancelled (deleted) message', () => {
    assert.equal(legacyStatusOf('CANCELLED', 'CANCELLED_BY_USER'), null);
  });

  it('gives every other REST status a code', () => {
    for (const s of MESSAGE_STATUSES) {
      if (s === 'CANCELLED') continue;
      assert.notEqual(code(s), null, s);
    }
  });

  it('reads codes back as REST statuses', () => {
    assert.deepEqual(restStatusOfLegacy(16), { status: 'DELIVERED', detail: null });
    assert.deepEqual(restStatusOfLegacy(37), { status: 'UNDELIVERED', detail: 'EXPIRED' });
    assert.deepEqual(restStatusOfLegacy(3999), { status: 'UNDELIVERABLE', detail: 'BLACKLISTED' });
    assert.deepEqual(restStatusOfLegacy(3502), { status: 'UNDELIVERED', detail: null });
    assert.equal(restStatusOfLegacy(12), null, 'partially delivered describes a group');
    assert.equal(restStatusOfLegacy(7), null);
  });

  it('round-trips: the code answered for a status reads back as that status', () => {
    const details: Array<StatusDetail | null> = [
      null,
      'EXPIRED',
      'INVALID_PHONE_NUMBER',
      'BLACKLISTED',
      'INSUFFICIENT_CREDIT',
      'NOT_ROUTABLE',
      'SPAM',
      'REJECTED',
      'OPERATOR_ERROR',
      'BUSY',
    ];
    for (const status of MESSAGE_STATUSES) {
      for (const detail of details) {
        for (const type of ['SMS', 'VOICE']) {
          const legacy = legacyStatusOf(status, detail, type);
          if (!legacy) continue;
          assert.equal(restStatusOfLegacy(legacy.code)?.status, status, `${status}/${detail}/${type} → ${legacy.code}`);
        }
      }
    }
  });
});

describe('legacy group status', () => {
  const s = (c: number) => ({ code: c, description: legacyStatusDescription(c)! });

  it('is the common status when all agree', () => {
    assert.deepEqual(legacyGroupStatus([s(11), s(11)]), s(11));
    assert.deepEqual(legacyGroupStatus([s(16)]), s(16));
  });

  it('is in progress while any member is', () => {
    assert.deepEqual(legacyGroupStatus([s(11), s(13), s(50)]), s(13));
    assert.deepEqual(legacyGroupStatus([s(13), s(10)]), s(10));
  });

  it('is partially delivered when all are final and some arrived', () => {
    assert.deepEqual(legacyGroupStatus([s(11), s(50)]), s(12));
    assert.deepEqual(legacyGroupStatus([s(16), s(3998)]), s(12));
  });

  it('is the first failure when none arrived', () => {
    assert.deepEqual(legacyGroupStatus([s(50), s(3998)]), s(50));
  });

  it('is null for an empty group', () => {
    assert.equal(legacyGroupStatus([]), null);
  });
});
