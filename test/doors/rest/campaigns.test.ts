import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const FR_SMS = 0.045;
const BASIC = 0.04;
const SINGLE = 0.06;
const HOUR = 3_600_000;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const inHours = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

async function ledgerSum(server: TestServer, orgId: string): Promise<number> {
  const rows = await server.app.store.db.selectFrom('ledger').select(['amount']).where('organisation_id', '=', orgId).execute();
  return round6(rows.reduce((a, r) => a + Number(r.amount), 0) / 1e6);
}

async function messagesOf(server: TestServer, key: string, path: string): Promise<any[]> {
  const r = await request(server, 'GET', `${path}/messages?pageSize=100`, { key });
  assert.equal(r.status, 200, r.text);
  return r.body.items;
}

async function dueAt(server: TestServer, messageId: string): Promise<number | undefined> {
  const row = await server.app.store.db.selectFrom('dispatch_queue').select('due_at').where('message_id', '=', messageId).executeTakeFirst();
  return row === undefined ? undefined : Number(row.due_at);
}

const agentName = () => `Agent${randomBytes(3).toString('hex')}`;

forEachDialect('campaign and channel tree', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await server.stop();
  });

  test('SMS: a scheduled campaign on the channel path, read and listed on both paths, messages added and listed', async () => {
    const t = await createTenant(server, { balance: 5 });
    const ch = `/sms/v1/channels/${t.channelId}`;
    const sentDate = inHours(2);
    const created = await request(server, 'POST', `${ch}/campaigns`, {
      key: t.key,
      body: {
        recipients: [{ to: '33612345678' }, { to: '+33612345679', refClient: 'own-ref' }, { to: 'not-a-number' }],
        body: { text: 'Sale tomorrow' },
        refClient: 'spring',
        sentDate,
      },
    });
    assert.equal(created.status, 201, created.text);
    const c = created.body;
    assert.equal(c.status, 'SCHEDULED');
    assert.equal(c.sentDate, sentDate);
    assert.equal(c.refClient, 'spring');
    assert.deepEqual(c.body, { text: 'Sale tomorrow' });
    assert.equal(c.channel.channelId, t.channelId);
    assert.equal(c.recipients, 3);
    assert.deepEqual(c.counts, { accepted: 2, rejected: 1, byStatus: { SCHEDULED: 2 }, clicks: 0, links: 0, clickedLinks: 0 });
    assert.deepEqual(
      c.errors.map((e: any) => [e.index, e.errorCode, e.detail.split(':')[0]]),
      [[2, '400.003', 'body.recipients[2].to']],
    );
    assert.equal(c.href, `${server.url}/sms/v1/campaigns/${c.campaignId}`);
    assert.equal('cancellationDate' in c, false);
    assert.equal(await balance(server, t), round6(5 - 2 * FR_SMS));

    const { errors: _errors, ...withoutErrors } = c;
    for (const path of [`/sms/v1/campaigns/${c.campaignId}`, `${ch}/campaigns/${c.campaignId}`]) {
      const one = await request(server, 'GET', path, { key: t.key });
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(one.body, withoutErrors, path);
    }
    for (const path of ['/sms/v1/campaigns', `${ch}/campaigns`]) {
      const list = await request(server, 'GET', `${path}?searchBy[refClient]=spring`, { key: t.key });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual([list.body.page, list.body.pageSize], [1, 10]);
      assert.deepEqual(list.body.items, [withoutErrors], path);
    }

    // One more message on each path: it goes at the campaign's time and counts in it.
    const added = await request(server, 'POST', `${ch}/campaigns/${c.campaignId}/messages`, {
      key: t.key,
      body: { recipient: { to: '33612345670' }, body: { text: 'Sale tomorrow' } },
    });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.body.campaignId, c.campaignId);
    assert.equal(added.body.sentDate, sentDate, 'at the campaign time');
    assert.equal(added.body.status.value, 'SCHEDULED');
    const lateBody = { recipient: { to: '33612345671' }, body: { text: 'Sale tomorrow' }, sentDate: inHours(3), refClient: 'late' };
    const addLate = (body: unknown) =>
      request(server, 'POST', `/sms/v1/campaigns/${c.campaignId}/messages`, { key: t.key, body, headers: { 'Idempotency-Key': 'add-1' } });
    const own = await addLate(lateBody);
    assert.equal(own.status, 201, own.text);
    assert.equal(own.body.sentDate, lateBody.sentDate, 'a sentDate of its own');
    const replay = await addLate(lateBody);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, own.body, 'a retry gets the first answer and adds nothing');
    assertError(await addLate({ ...lateBody, refClient: 'other' }), 422, '422.001');
    const again = await request(server, 'GET', `/sms/v1/campaigns/${c.campaignId}`, { key: t.key });
    assert.equal(again.body.recipients, 5);
    assert.deepEqual(again.body.counts, { accepted: 4, rejected: 1, byStatus: { SCHEDULED: 4 }, clicks: 0, links: 0, clickedLinks: 0 });

    for (const path of [`/sms/v1/campaigns/${c.campaignId}`, `${ch}/campaigns/${c.campaignId}`]) {
      const items = await messagesOf(server, t.key, path);
      assert.equal(items.length, 4, path);
      assert.ok(items.every((m) => m.campaignId === c.campaignId && m.type === 'SMS'));
      assert.deepEqual(items.map((m) => m.refClient).sort(), ['late', 'own-ref', 'spring', undefined].sort());
    }
  });

  test('SMS: PATCH moves the send time, the reference and the text (priced again); bad changes change nothing', async () => {
    const t = await createTenant(server, { balance: 0.5 });
    const created = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: {
        recipients: [{ to: '33612345678' }, { to: '33612345679', refClient: 'mine' }],
        body: { text: 'One part' },
        refClient: 'old',
        sentDate: inHours(1),
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.campaignId;
    const path = `/sms/v1/channels/${t.channelId}/campaigns/${id}`;
    assert.equal(await balance(server, t), round6(0.5 - 2 * FR_SMS));

    const later = inHours(5);
    const moved = await request(server, 'PATCH', path, { key: t.key, body: { sentDate: later, refClient: 'new' } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.sentDate, later);
    assert.equal(moved.body.refClient, 'new');
    const items = await messagesOf(server, t.key, path);
    assert.ok(items.every((m) => m.sentDate === later && m.status.value === 'SCHEDULED'));
    assert.deepEqual(items.map((m) => m.refClient).sort(), ['mine', 'new'], 'the inherited reference changed, its own did not');
    for (const m of items) assert.equal(await dueAt(server, m.messageId), Date.parse(later), 'dispatched at the new time');
    const validity = await server.app.store.db.selectFrom('messages').select(['send_at', 'validity_until']).where('campaign_id', '=', id).execute();
    assert.ok(
      validity.every((v) => Number(v.validity_until) - Number(v.send_at) === 172_800_000),
      'the validity moved with it',
    );

    // Two parts now: each message costs one part more, charged on its own ledger row.
    const twoParts = 'x'.repeat(200);
    const rebodied = await request(server, 'PATCH', `/sms/v1/campaigns/${id}`, { key: t.key, body: { body: { text: twoParts } } });
    assert.equal(rebodied.status, 200, rebodied.text);
    assert.deepEqual(rebodied.body.body, { text: twoParts, stop: false });
    const after = await messagesOf(server, t.key, path);
    assert.ok(
      after.every((m) => m.body.text === twoParts && m.body.messagePartCount === 2 && m.price.amount === 2 * FR_SMS),
      JSON.stringify(after[0]),
    );
    assert.equal(await balance(server, t), round6(0.5 - 4 * FR_SMS));
    assert.equal(await ledgerSum(server, t.organisationId), round6(0.5 - 4 * FR_SMS), 'balance equals the ledger');

    // Too long, or more than the balance holds: refused, and nothing moves.
    assertError(
      await request(server, 'PATCH', path, { key: t.key, body: { body: { text: 'y'.repeat(1600) }, sentDate: inHours(9) } }),
      400,
      '400.004',
      /^body\.body\.text: 11 parts/,
    );
    assertError(await request(server, 'PATCH', path, { key: t.key, body: { body: { text: 'z'.repeat(1500) } } }), 409, '409.002', /more than the balance/);
    assertError(await request(server, 'PATCH', path, { key: t.key, body: {} }), 400, '400.001', /nothing to change/);
    assertError(await request(server, 'PATCH', path, { key: t.key, body: { sentDate: 'soon' } }), 400, '400.007', /body\.sentDate/);
    const unchanged = await request(server, 'GET', path, { key: t.key });
    assert.equal(unchanged.body.sentDate, later);
    assert.deepEqual(unchanged.body.body, { text: twoParts, stop: false });
    assert.equal(await balance(server, t), round6(0.5 - 4 * FR_SMS));

    // Back to one part: the difference is refunded.
    const shorter = await request(server, 'PATCH', path, { key: t.key, body: { body: { text: 'Short', stop: true } } });
    assert.equal(shorter.status, 200, shorter.text);
    assert.deepEqual(shorter.body.body, { text: 'Short', stop: true });
    const short = await messagesOf(server, t.key, path);
    assert.ok(short.every((m) => m.body.text === 'Short\nSTOP au 36111' && m.body.stop === true && m.price.amount === FR_SMS));
    assert.equal(await balance(server, t), round6(0.5 - 2 * FR_SMS));
    assert.equal(await ledgerSum(server, t.organisationId), round6(0.5 - 2 * FR_SMS));
    const consumption = await request(server, 'GET', '/commons/v1/consumptions?searchBy[periodType]=DAY', { key: t.key });
    assert.equal(consumption.body.items[0].price.amount, round6(2 * FR_SMS), 'consumption follows the new price');
    assert.equal(consumption.body.items[0].quantity, 2);
  });

  test('SMS: DELETE cancels a scheduled campaign and refunds it; a cancelled or started campaign refuses changes', async () => {
    const t = await createTenant(server, { balance: 1 });
    const created = await request(server, 'POST', `/sms/v1/channels/${t.channelId}/campaigns`, {
      key: t.key,
      body: { recipients: [{ to: '33612345678' }, { to: '33612345679' }], body: { text: 'Later' }, sentDate: inHours(1) },
    });
    const id = created.body.campaignId;
    const path = `/sms/v1/channels/${t.channelId}/campaigns/${id}`;
    const cancelled = await request(server, 'DELETE', path, { key: t.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'CANCELLED');
    assert.ok(cancelled.body.cancellationDate);
    assert.deepEqual(cancelled.body.counts.byStatus, { CANCELLED: 2 });
    assert.equal(await balance(server, t), 1, 'refunded');
    const items = await messagesOf(server, t.key, path);
    assert.ok(items.every((m) => m.status.value === 'CANCELLED' && m.status.detail === 'CANCELLED_BY_USER' && m.price.amount === 0));
    for (const m of items) assert.equal(await dueAt(server, m.messageId), undefined, 'off the dispatch queue');
    assertError(await request(server, 'DELETE', path, { key: t.key }), 409, '409.001', /was cancelled/);
    assertError(await request(server, 'PATCH', path, { key: t.key, body: { refClient: 'x' } }), 409, '409.001', /was cancelled/);
    assertError(
      await request(server, 'POST', `${path}/messages`, { key: t.key, body: { recipient: { to: '33612345670' }, body: { text: 'x' } } }),
      409,
      '409.001',
      /cancelled/,
    );

    // Without a sentDate the campaign goes at once: it can no longer be changed or cancelled, but takes more messages.
    const now = await request(server, 'POST', '/sms/v1/campaigns', { key: t.key, body: { recipients: [{ to: '33612345678' }], body: { text: 'Now' } } });
    assert.equal(now.status, 201, now.text);
    assert.equal(now.body.status, 'SENT');
    const nowPath = `/sms/v1/campaigns/${now.body.campaignId}`;
    assertError(await request(server, 'PATCH', nowPath, { key: t.key, body: { sentDate: inHours(1) } }), 409, '409.001', /started sending at/);
    assertError(await request(server, 'DELETE', nowPath, { key: t.key }), 409, '409.001', /started sending at/);
    const more = await request(server, 'POST', `${nowPath}/messages`, { key: t.key, body: { recipient: { to: '33612345679' }, body: { text: 'Now' } } });
    assert.equal(more.status, 201, more.text);
    assert.equal(more.body.status.value, 'ENROUTE');
    const done = await eventually(
      async () => {
        const r = await request(server, 'GET', nowPath, { key: t.key });
        return r.body.counts.byStatus.DELIVERED === 2 ? r.body : undefined;
      },
      15_000,
      'both messages delivered',
    );
    assert.deepEqual(done.counts, { accepted: 2, rejected: 0, byStatus: { DELIVERED: 2 }, clicks: 0, links: 0, clickedLinks: 0 });
  });

  test('channel checks: another channel id is 403 on every channel path, another tenant’s campaign is 404', async () => {
    const a = await createTenant(server, { balance: 1 });
    const b = await createTenant(server, { balance: 1 });
    const theirs = await request(server, 'POST', '/sms/v1/campaigns', {
      key: b.key,
      body: { recipients: [{ to: '33612345678' }], body: { text: 'B' }, sentDate: inHours(1) },
    });
    const mine = await request(server, 'POST', '/sms/v1/campaigns', {
      key: a.key,
      body: { recipients: [{ to: '33612345678' }], body: { text: 'A' }, sentDate: inHours(1) },
    });
    const campaignBody = { recipients: [{ to: '33612345678' }], body: { text: 'x' } };
    const messageBody = { recipient: { to: '33612345678' }, body: { text: 'x' } };
    for (const other of [b.channelId, '00000000-0000-7000-8000-000000000000', 'nope']) {
      const ch = `/sms/v1/channels/${other}`;
      const calls: Array<[string, string, unknown?]> = [
        ['POST', `${ch}/messages`, messageBody],
        ['POST', `${ch}/campaigns`, campaignBody],
        ['GET', `${ch}/campaigns`],
        ['GET', `${ch}/campaigns/${theirs.body.campaignId}`],
        ['PATCH', `${ch}/campaigns/${theirs.body.campaignId}`, { refClient: 'x' }],
        ['DELETE', `${ch}/campaigns/${theirs.body.campaignId}`],
        ['POST', `${ch}/campaigns/${theirs.body.campaignId}/messages`, messageBody],
        ['GET', `${ch}/campaigns/${theirs.body.campaignId}/messages`],
        ['GET', `${ch}/campaigns/${mine.body.campaignId}`],
      ];
      for (const [method, path, body] of calls) {
        const r = await request(server, method, path, { key: a.key, body });
        assertError(r, 403, '403.006', /^path\.channelId: is not the channel of this key/);
        assert.doesNotMatch(r.text, /"B"|campaignId/, `${method} ${path} tells nothing`);
      }
    }
    const own = `/sms/v1/channels/${a.channelId}`;
    for (const base of ['/sms/v1', own]) {
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `${base}/campaigns/${theirs.body.campaignId}`],
        ['PATCH', `${base}/campaigns/${theirs.body.campaignId}`, { refClient: 'x' }],
        ['DELETE', `${base}/campaigns/${theirs.body.campaignId}`],
        ['POST', `${base}/campaigns/${theirs.body.campaignId}/messages`, messageBody],
        ['GET', `${base}/campaigns/${theirs.body.campaignId}/messages`],
        ['GET', `${base}/campaigns/not-a-campaign`],
      ];
      for (const [method, path, body] of calls) assertError(await request(server, method, path, { key: a.key, body }), 404, '404.001');
      const list = await request(server, 'GET', `${base}/campaigns`, { key: a.key });
      assert.deepEqual(
        list.body.items.map((c: any) => c.campaignId),
        [mine.body.campaignId],
        'only its own campaigns',
      );
    }
    const untouched = await request(server, 'GET', `/sms/v1/campaigns/${theirs.body.campaignId}`, { key: b.key });
    assert.deepEqual([untouched.body.status, untouched.body.recipients], ['SCHEDULED', 1]);

    // An SMS key on the RCS tree, and an RCS campaign on the SMS tree.
    assertError(await request(server, 'GET', `/rcs/v1/channels/${a.channelId}/campaigns`, { key: a.key }), 403, '403.005');
    const rcs = await createTenant(server, { type: 'RCS', balance: 1, channel: { defaultFromField: agentName() } });
    const rcsCampaign = await request(server, 'POST', '/rcs/v1/campaigns', {
      key: rcs.key,
      body: { recipients: [{ to: '33612345678' }], body: { type: 'TEXT', text: 'hi' }, sentDate: inHours(1) },
    });
    assert.equal(rcsCampaign.status, 201, rcsCampaign.text);
    assertError(await request(server, 'GET', `/sms/v1/campaigns/${rcsCampaign.body.campaignId}`, { key: a.key }), 404, '404.001');

    // A MANAGER key reads its organisation's campaigns on the short path, and sends only on its own channel.
    const sibling = await request(server, 'POST', `/admin/v1/organisations/${a.organisationId}/channels`, {
      key: server.adminKey,
      body: { name: 'Second', type: 'SMS', flow: 'TRANSACTIONAL' },
    });
    const manager = await request(server, 'POST', `/admin/v1/channels/${sibling.body.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'Manager', roles: ['MANAGER'] },
    });
    const read = await request(server, 'GET', `/sms/v1/campaigns/${mine.body.campaignId}`, { key: manager.body.value });
    assert.equal(read.status, 200, read.text);
    assertError(
      await request(server, 'POST', `/sms/v1/campaigns/${mine.body.campaignId}/messages`, { key: manager.body.value, body: messageBody }),
      403,
      '403.006',
      /another channel/,
    );
    assertError(await request(server, 'GET', `/sms/v1/channels/${a.channelId}/campaigns`, { key: manager.body.value }), 403, '403.006');
  });

  test('RCS: the same tree; a new body priced again; cancelling takes the fallback SMS along', async () => {
    const t = await createTenant(server, { type: 'RCS', balance: 2, channel: { defaultFromField: agentName() } });
    const sms = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
      key: server.adminKey,
      body: { name: 'Fallback', type: 'SMS', flow: 'TRANSACTIONAL', defaultFromField: 'ACME' },
    });
    await request(server, 'PATCH', `/admin/v1/channels/${t.channelId}`, { key: server.adminKey, body: { fallbackSmsChannelId: sms.body.channelId } });
    const ch = `/rcs/v1/channels/${t.channelId}`;
    const sentDate = inHours(1);
    const created = await request(server, 'POST', `${ch}/campaigns`, {
      key: t.key,
      body: {
        // …9 is not RCS-capable: its fallback SMS is scheduled with the campaign.
        recipients: [{ to: '33612345678' }, { to: '33612345679' }],
        body: { type: 'TEXT', text: 'Hello' },
        fallback: { text: 'Hello by SMS' },
        sentDate,
        refClient: 'rcs-spring',
      },
    });
    assert.equal(created.status, 201, created.text);
    const c = created.body;
    assert.deepEqual([c.status, c.channel.type, c.body], ['SCHEDULED', 'RCS', { type: 'TEXT', text: 'Hello' }]);
    assert.deepEqual(c.counts, { accepted: 2, rejected: 0, byStatus: { SCHEDULED: 1, UNDELIVERED: 1 }, clicks: 0, links: 0, clickedLinks: 0 });
    const list = await request(server, 'GET', '/rcs/v1/campaigns', { key: t.key });
    assert.deepEqual(
      list.body.items.map((x: any) => x.campaignId),
      [c.campaignId],
    );
    const fallbackSms = await server.app.store.db
      .selectFrom('messages')
      .select(['id', 'status'])
      .where('campaign_id', '=', c.campaignId)
      .where('type', '=', 'SMS')
      .execute();
    assert.deepEqual(
      fallbackSms.map((m) => m.status),
      ['SCHEDULED'],
      'the fallback SMS waits for the campaign time',
    );
    assert.equal(await balance(server, t), round6(2 - BASIC - FR_SMS));

    const added = await request(server, 'POST', `/rcs/v1/campaigns/${c.campaignId}/messages`, {
      key: t.key,
      body: { recipient: { to: '33612345670' }, body: { type: 'TEXT', text: 'Hello' } },
    });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual([added.body.campaignId, added.body.sentDate, added.body.type], [c.campaignId, sentDate, 'RCS']);

    // A card is a SINGLE message: each scheduled RCS message is priced again; the fallback SMS keeps its text.
    const card = { type: 'CARD', content: { title: 'Sale', description: 'Tomorrow only' } };
    const later = inHours(3);
    const changed = await request(server, 'PATCH', `${ch}/campaigns/${c.campaignId}`, { key: t.key, body: { body: card, sentDate: later } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.body.type, 'CARD');
    const items = await messagesOf(server, t.key, `${ch}/campaigns/${c.campaignId}`);
    const scheduled = items.filter((m) => m.status.value === 'SCHEDULED');
    assert.equal(scheduled.length, 2);
    assert.ok(scheduled.every((m) => m.body.type === 'CARD' && m.price.amount === SINGLE && m.price.kind === 'SINGLE' && m.sentDate === later));
    assert.equal(await balance(server, t), round6(2 - 2 * SINGLE - FR_SMS));
    assert.equal(await ledgerSum(server, t.organisationId), round6(2 - 2 * SINGLE - FR_SMS));
    const sms2 = await server.app.store.db.selectFrom('messages').select(['send_at', 'body']).where('id', '=', fallbackSms[0]!.id).executeTakeFirstOrThrow();
    assert.equal(Number(sms2.send_at), Date.parse(later), 'the fallback SMS moved with the campaign');
    assert.equal(JSON.parse(sms2.body).text, 'Hello by SMS');
    assertError(
      await request(server, 'PATCH', `${ch}/campaigns/${c.campaignId}`, { key: t.key, body: { body: { type: 'CARD', content: {} } } }),
      400,
      '400.001',
      /^body\.body\.content/,
    );

    const cancelled = await request(server, 'DELETE', `/rcs/v1/campaigns/${c.campaignId}`, { key: t.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.deepEqual(cancelled.body.counts.byStatus, { CANCELLED: 2, UNDELIVERED: 1 });
    const smsAfter = await server.app.store.db.selectFrom('messages').select('status').where('id', '=', fallbackSms[0]!.id).executeTakeFirstOrThrow();
    assert.equal(smsAfter.status, 'CANCELLED', 'the fallback SMS is cancelled with it');
    assert.equal(await balance(server, t), 2, 'everything refunded');
    assert.equal(await ledgerSum(server, t.organisationId), 2);
  });

  test('campaign messages go out and report through webhooks with no null; bad campaign requests are 400', async () => {
    const t = await createTenant(server, { balance: 1 });
    const r = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: {
        recipients: [{ to: '33612345678' }, { to: '33612340002' }],
        body: { text: 'Reported' },
        callbackUrlStatus: `${receiver.url}/campaign-status`,
      },
    });
    assert.equal(r.status, 201, r.text);
    const hooks = await eventually(
      () => {
        const got = receiver.requests.filter((x) => x.url === '/campaign-status' && x.json?.campaignId === r.body.campaignId);
        return got.length >= 2 ? got : undefined;
      },
      15_000,
      'both final statuses',
    );
    assert.deepEqual(hooks.map((h) => h.json.status.value).sort(), ['DELIVERED', 'UNDELIVERABLE']);
    const delivered = hooks.find((h) => h.json.status.value === 'DELIVERED')!.json;
    for (const absent of ['refClient', 'callbackUrlMo', 'from', 'originMessageId']) assert.equal(absent in delivered, false, absent);
    assert.equal('detail' in delivered.status, false);

    assertError(
      await request(server, 'POST', '/sms/v1/campaigns', { key: t.key, body: { recipients: [], body: { text: 'x' } } }),
      400,
      '400.001',
      /recipients/,
    );
    assertError(
      await request(server, 'POST', `/sms/v1/channels/${t.channelId}/campaigns`, {
        key: t.key,
        body: { recipients: [{ to: '33612345678' }], body: { text: 'x' }, from: 'WAYTOOLONGSENDER' },
      }),
      400,
      '400.005',
      /^body\.from/,
    );
    assertError(
      await request(server, 'POST', '/sms/v1/campaigns', {
        key: t.key,
        body: { recipients: [{ to: '33612345678' }], body: { text: 'x' }, sentDate: 'tomorrow' },
      }),
      400,
      '400.007',
    );
    const rcs = await createTenant(server, { type: 'RCS', balance: 1, channel: { defaultFromField: agentName() } });
    assertError(
      await request(server, 'POST', '/rcs/v1/campaigns', { key: rcs.key, body: { recipients: [{ to: '33612345678' }], body: { type: 'CARD', content: {} } } }),
      400,
      '400.001',
      /^body\.body\.content/,
    );
    const count = await server.app.store.db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('channel_id', '=', rcs.channelId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0, 'a bad request leaves no campaign behind');
  });
});
