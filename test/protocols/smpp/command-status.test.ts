import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { statusName, submitStatusMeaning } from '../../../src/protocols/smpp/command-status.ts';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';

describe('submitStatusMeaning', () => {
  it('reads the SMSC’s own trouble as temporary and throttling as a request to slow down', () => {
    assert.equal(submitStatusMeaning(SmppStatus.ESME_RTHROTTLED).class, 'THROTTLED');
    for (const s of [SmppStatus.ESME_RMSGQFUL, SmppStatus.ESME_RSYSERR, SmppStatus.ESME_RX_T_APPN, SmppStatus.ESME_RINVBNDSTS, SmppStatus.ESME_RUNKNOWNERR]) {
      assert.equal(submitStatusMeaning(s).class, 'TEMPORARY', statusName(s));
    }
  });

  it('reads refusals of the message itself as permanent, with the reason in Tern’s words', () => {
    assert.deepEqual(submitStatusMeaning(SmppStatus.ESME_RINVDSTADR), { name: 'ESME_RINVDSTADR', class: 'PERMANENT', detail: 'INVALID_PHONE_NUMBER' });
    assert.deepEqual(submitStatusMeaning(SmppStatus.ESME_RINVSRCADR), { name: 'ESME_RINVSRCADR', class: 'PERMANENT', detail: 'INVALID_SENDER' });
    assert.deepEqual(submitStatusMeaning(SmppStatus.ESME_RSUBMITFAIL), { name: 'ESME_RSUBMITFAIL', class: 'PERMANENT', detail: 'REJECTED' });
    assert.equal(submitStatusMeaning(SmppStatus.ESME_RX_R_APPN).class, 'PERMANENT');
  });

  it('names every status SMPP 3.4 names, and only ESME_ROK is OK', () => {
    for (const [name, value] of Object.entries(SmppStatus)) {
      const m = submitStatusMeaning(value);
      assert.equal(m.name, name);
      assert.equal(m.class === 'OK', value === 0, name);
    }
  });

  it('reads reserved and vendor-specific statuses as permanent refusals named by their value', () => {
    assert.deepEqual(submitStatusMeaning(0x400), { name: '0x00000400', class: 'PERMANENT', detail: 'REJECTED' });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (status) => {
        const m = submitStatusMeaning(status);
        assert.ok(['OK', 'TEMPORARY', 'THROTTLED', 'PERMANENT'].includes(m.class));
        assert.equal(m.class === 'OK', status === 0);
        assert.ok(m.name.length > 0);
        if (m.class === 'PERMANENT') assert.ok(m.detail);
      }),
      { seed: 14, numRuns: 2_000 },
    );
  });
});
