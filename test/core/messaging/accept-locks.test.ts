// The accept transaction on PostgreSQL takes a payer's balance and the rows it shares with other transactions in the
// order those take them, so none waits on another in a cycle (a deadlock, resolved by PostgreSQL after a second).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventConsumers } from '../../../src/core/events.ts';
import { uuidv7 } from '../../../src/domain/ids.ts';
import { acceptBatch, type PreparedMessage } from '../../../src/core/messaging/accept.ts';
import { smsRow } from '../../support/message-rows.ts';
import { countMessageIn, insertCampaign } from '../../../src/store/campaigns.ts';
import type { Channel } from '../../../src/store/channels.ts';
import { inTransaction } from '../../../src/store/db.ts';
import { insertOrganisation, lockBalances } from '../../../src/store/organisations.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../../src/store/queue.ts';
import { holdLocks, rowIsFree, someoneWaitsForALock } from '../../support/row-locks.ts';
import { forEachDialect } from '../../support/server.ts';
import { twoNodesForSuite } from '../../support/stores.ts';

forEachDialect('accept lock order', (dialect) => {
  const nodes = twoNodesForSuite(dialect);

  test('a message added to a campaign takes the balance before the campaign, as a change of the campaign does', async (t) => {
    if (dialect === 'sqlite') return t.skip('SQLite: one writer at a time, no two transactions hold locks at once');
    const { a, b } = nodes;
    const now = Date.now();
    await insertOrganisation(a.db, {
      id: 'org-c',
      name: 'Campaigns',
      parentId: null,
      balance: 1_000_000,
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
    await insertCampaign(a.db, {
      id: 'camp-1',
      organisation_id: 'org-c',
      channel_id: 'ch-c',
      ref_client: null,
      send_at: now + 3_600_000,
      created_at: now,
      recipients: 0,
      body: '{}',
    });
    const channel = { id: 'ch-c', organisationId: 'org-c', type: 'SMS', flow: 'TRANSACTIONAL', dailyLimit: null, monthlyLimit: null } as Channel;
    const row = smsRow({ id: uuidv7(now), channel, recipient: '33650000005', price: 50_000, now, sendAt: now + 3_600_000, campaignId: 'camp-1' });
    const added: PreparedMessage = {
      channel,
      price: 50_000,
      units: 1,
      rejection: null,
      checkBlacklist: false,
      row,
      afterInsert: async (db) => assert.ok(await countMessageIn(db, 'camp-1')),
    };

    // A change of the campaign with money holds the payer's balance (it locks the campaign next).
    const change = await holdLocks(b, (trx) => lockBalances(trx, 'postgres', ['org-c']));
    const accept = inTransaction(a, (trx) => acceptBatch(trx, 'postgres', [added], new EventConsumers(), new LeasedQueue(a, DISPATCH_QUEUE), now));
    await someoneWaitsForALock(b, 'the accept to wait for the balance');
    // The accept waits for the balance: it must not hold the campaign meanwhile (the change would wait for it next).
    const campaignFree = await rowIsFree(b, 'campaigns', 'camp-1');
    await change.release();
    const [accepted] = await accept;
    assert.equal(campaignFree, true, 'the accept locked the campaign while it waited for the balance');
    assert.equal(accepted!.status, 'SCHEDULED');
    const campaign = await a.db.selectFrom('campaigns').select('recipients').where('id', '=', 'camp-1').executeTakeFirstOrThrow();
    assert.equal(campaign.recipients, 1);
    const balance = await a.db.selectFrom('organisations').select('balance').where('id', '=', 'org-c').executeTakeFirstOrThrow();
    assert.equal(Number(balance.balance), 950_000);
  });
});
