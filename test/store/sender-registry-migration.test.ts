// The sender registry's migration: every fromFieldList entry of every channel becomes one APPROVED sender of its
// organisation, valid in every country; run twice, it adds nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerListedSenders } from '../../src/store/migrations/040-sender-registry.ts';
import { type Channel, insertChannel } from '../../src/store/channels.ts';
import { insertOrganisation } from '../../src/store/organisations.ts';
import { listSenders } from '../../src/store/senders.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodesForSuite } from '../support/stores.ts';

function channel(id: string, organisationId: string, fromFieldList: string[]): Channel {
  return {
    id,
    organisationId,
    name: id,
    type: 'SMS',
    flow: 'TRANSACTIONAL',
    defaultFromField: null,
    fromFieldList,
    defaultCallbackUrlStatus: null,
    defaultCallbackUrlMo: null,
    dailyLimit: null,
    monthlyLimit: null,
    webhookSecret: 'whsec_x',
    webhookSecretPrevious: null,
    webhookSecretPreviousUntil: null,
    fallbackSmsChannelId: null,
    state: 'ACTIVE',
    createdAt: 1,
    shortLinks: false,
  };
}

forEachDialect('sender registry migration', (dialect) => {
  const stores = twoNodesForSuite(dialect);

  test('fromFieldList entries become APPROVED senders for every country, once per organisation', async () => {
    const db = stores.a.db;
    for (const id of ['org-1', 'org-2']) {
      await insertOrganisation(db, {
        id,
        name: id,
        parentId: null,
        balance: 0,
        currency: 'EUR',
        state: 'ACTIVE',
        parentBilling: false,
        monthlyLimit: null,
        createdAt: 0,
        defaultCountry: null,
        timeZone: 'Europe/Paris',
        optOutShortCode: null,
        optOutText: null,
        contentRetentionDays: null,
      });
    }
    await insertChannel(db, channel('ch-1', 'org-1', ['ACME', '36180']));
    await insertChannel(db, channel('ch-2', 'org-1', ['ACME', '33612345678']));
    await insertChannel(db, channel('ch-3', 'org-2', ['ACME']));
    await insertChannel(db, channel('ch-4', 'org-2', []));
    await registerListedSenders(db, 1_000);
    await registerListedSenders(db, 2_000);

    const one = await listSenders(db, 'org-1');
    assert.deepEqual(one.map((s) => [s.value, s.kind, s.status, s.countries]).sort(), [
      ['33612345678', 'LONG_NUMBER', 'APPROVED', []],
      ['36180', 'SHORT_CODE', 'APPROVED', []],
      ['ACME', 'ALPHANUMERIC', 'APPROVED', []],
    ]);
    assert.deepEqual(
      (await listSenders(db, 'org-2')).map((s) => [s.value, s.status, s.createdAt]),
      [['ACME', 'APPROVED', 1_000]],
    );
  });
});
