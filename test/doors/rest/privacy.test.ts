import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const DAY = 86_400_000;

forEachDialect('privacy controls', (dialect) => {
  let server: TestServer;
  let hooks: Receiver;
  before(async () => {
    server = await startTestServer(dialect);
    hooks = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await hooks.close();
  });

  const admin = () => server.adminKey;

  async function sendAndSettle(key: string, to: string, texts: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const text of texts) {
      const r = await request(server, 'POST', '/sms/v1/messages', { key, body: { recipient: { to }, body: { text } } });
      assert.equal(r.status, 201, r.text);
      ids.push(r.body.messageId as string);
    }
    const db = server.app.store.db;
    await eventually(
      async () => (await db.selectFrom('messages').select('id').where('id', 'in', ids).where('status', '=', 'DELIVERED').execute()).length === ids.length,
      15_000,
      'messages delivered',
    );
    // Their status webhooks too, where the channel has a callback.
    await eventually(
      async () => (await db.selectFrom('webhook_deliveries').select('id').where('message_id', 'in', ids).where('state', '=', 'PENDING').execute()).length === 0,
      15_000,
      'status webhooks delivered',
    );
    return ids;
  }

  test('contentRetentionDays: bad values are refused and change nothing; null goes back to the platform', async () => {
    const t = await createTenant(server);
    for (const bad of [0, -1, 1.5, 36_501, 'seven']) {
      const r = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: admin(), body: { contentRetentionDays: bad } });
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
    }
    const org = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: admin() });
    assert.equal('contentRetentionDays' in org.body, false);
    const set = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: admin(), body: { contentRetentionDays: 7 } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.contentRetentionDays, 7);
    const unset = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: admin(), body: { contentRetentionDays: null } });
    assert.equal('contentRetentionDays' in unset.body, false);
  });

  test('past the content retention, texts are gone; prices, statuses and consumption are as they were', async () => {
    const t = await createTenant(server, { balance: 10, channel: { defaultCallbackUrlStatus: `${hooks.url}/s` } });
    const other = await createTenant(server, { balance: 10 });
    const sent = await sendAndSettle(t.key, '33612345601', ['secret one', 'secret two ünicode', 'secret three']);
    const kept = await sendAndSettle(other.key, '33612345602', ['not this organisation']);
    const later = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345601' }, body: { text: 'scheduled' }, sentDate: new Date(Date.now() + 3 * DAY).toISOString() },
    });
    assert.equal(later.status, 201, later.text);
    const patched = await request(server, 'PATCH', `/admin/v1/organisations/${t.organisationId}`, { key: admin(), body: { contentRetentionDays: 2 } });
    assert.equal(patched.status, 200, patched.text);

    const read = async (key: string, id: string) => (await request(server, 'GET', `/sms/v1/messages/${id}`, { key })).body;
    const usage = async () => (await request(server, 'GET', '/commons/v1/consumptions', { key: t.key })).body;
    const beforeObjects = await Promise.all(sent.map((id) => read(t.key, id)));
    const usageBefore = await usage();

    // One day on: nothing is due yet.
    assert.equal(await server.app.services.privacy.eraseExpiredContent(Date.now() + DAY), 0);
    assert.equal((await read(t.key, sent[0]!)).body.text, 'secret one');

    const now = Date.now() + 2 * DAY + 60_000;
    assert.ok((await server.app.services.privacy.eraseExpiredContent(now)) >= 3);
    for (const [i, id] of sent.entries()) {
      const m = await read(t.key, id);
      assert.equal(m.body.text, '', 'the text is gone');
      assert.equal(typeof m.contentErasedAt, 'string');
      const { body: _b, contentErasedAt: _c, ...rest } = m;
      const { body: _b2, ...restBefore } = beforeObjects[i]!;
      assert.deepEqual(rest, restBefore, 'price, status, parts, recipient are unchanged');
    }
    assert.equal(beforeObjects[1]!.body.encoding, (await read(t.key, sent[1]!)).body.encoding, 'how it was sent stays');
    assert.deepEqual(await usage(), usageBefore, 'consumption is unchanged');
    const payloads = await server.app.store.db.selectFrom('webhook_deliveries').select('payload').where('message_id', 'in', sent).execute();
    assert.ok(payloads.length >= 3);
    for (const p of payloads) assert.equal(p.payload.includes('secret'), false, 'webhook bodies lose the text too');
    assert.equal((await read(t.key, later.body.messageId)).body.text, 'scheduled', 'a message waiting to be sent keeps its text');
    assert.equal((await read(other.key, kept[0]!)).body.text, 'not this organisation', 'another organisation keeps its texts');

    // A later round finds nothing more, and erases what was accepted since once it is due.
    assert.equal(await server.app.services.privacy.eraseExpiredContent(now), 0);
  });

  test('an erasure request empties a number’s texts, replaces it where rows stay, and reports rows per table', async () => {
    const shortCode = String(30000 + Math.floor(Math.random() * 9999));
    const t = await createTenant(server, { balance: 10, channel: { fromFieldList: [shortCode], defaultCallbackUrlStatus: `${hooks.url}/s` } });
    const number = '33612345699';
    const sent = await sendAndSettle(t.key, number, ['for the number', 'again']);
    const others = await sendAndSettle(t.key, '33612345698', ['someone else']);
    const mo = await request(server, 'POST', '/admin/v1/simulator/mo', { key: admin(), body: { from: number, to: shortCode, text: 'my reply' } });
    assert.equal(mo.status, 202, mo.text);
    const db = server.app.store.db;
    await eventually(
      async () => (await db.selectFrom('messages').select('id').where('channel_id', '=', t.channelId).where('direction', '=', 'MO').execute()).length === 1,
      15_000,
      'the MO stored',
    );
    const optOut = await request(server, 'POST', '/commons/v1/blacklist', { key: t.key, body: { msisdn: number } });
    assert.equal(optOut.status, 201, optOut.text);
    await db
      .insertInto('contacts')
      .values({
        id: 'contact-erasure',
        organisation_id: t.organisationId,
        msisdn: number,
        last_name: 'Martin',
        first_name: 'Ann',
        company: null,
        other: null,
        birth_date: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
    const usageBefore = (await request(server, 'GET', '/commons/v1/consumptions', { key: t.key })).body;

    const exported = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}/numbers/%2B${number}/export`, { key: admin() });
    assert.equal(exported.status, 200, exported.text);
    assert.equal(exported.body.msisdn, number);
    assert.deepEqual(exported.body.messages.map((m: { body: { text: string } }) => m.body.text).sort(), ['again', 'for the number', 'my reply']);
    assert.equal(exported.body.truncated, false);
    assert.deepEqual(
      exported.body.contacts.map((c: { lastName: string; firstName: string }) => [c.lastName, c.firstName]),
      [['Martin', 'Ann']],
    );
    assert.equal(exported.body.optOut.source, 'API');

    // Bad input: a clear error, nothing changed.
    for (const body of [{}, { msisdn: 'not a number' }, { msisdn: '123' }, { msisdn: number, keepOptOut: 'yes' }]) {
      const r = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/erasures`, { key: admin(), body });
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    }
    assert.equal(
      (await request(server, 'POST', '/admin/v1/organisations/0192f0c4-0000-7000-8000-000000000001/erasures', { key: admin(), body: { msisdn: number } }))
        .status,
      404,
    );
    assert.equal((await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/erasures`, { key: t.key, body: { msisdn: number } })).status, 403);
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${sent[0]}`, { key: t.key })).body.body.text, 'for the number');

    const erased = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/erasures`, { key: admin(), body: { msisdn: `+${number}` } });
    assert.equal(erased.status, 200, erased.text);
    assert.equal(erased.body.msisdn, number);
    assert.match(erased.body.replacedBy, /^erased:[0-9a-f]{24}$/);
    assert.equal(erased.body.optOut, 'KEPT');
    assert.deepEqual(erased.body.rows, {
      messages: 2,
      inboundMessages: 1,
      messagesWaiting: 0,
      webhookDeliveries: 2,
      contacts: 1,
      contactGroupMemberships: 0,
      optOuts: 1,
      oneTimePasswords: 0,
      oneTimePasswordSends: 0,
      rcsConversations: 0,
    });
    for (const id of sent) {
      const m = (await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key })).body;
      assert.equal(m.body.text, '');
      assert.equal(m.recipient.to, erased.body.replacedBy);
      assert.equal(m.status.value, 'DELIVERED');
    }
    const moRow = await db
      .selectFrom('messages')
      .select(['sender', 'body'])
      .where('channel_id', '=', t.channelId)
      .where('direction', '=', 'MO')
      .executeTakeFirstOrThrow();
    assert.equal(moRow.sender, erased.body.replacedBy);
    assert.equal(JSON.parse(moRow.body).text, '');
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${others[0]}`, { key: t.key })).body.body.text, 'someone else', 'other numbers keep theirs');
    const payloads = await db.selectFrom('webhook_deliveries').select('payload').where('message_id', 'in', sent).execute();
    for (const p of payloads) assert.equal(p.payload.includes(number), false, 'webhook bodies lose the number');
    assert.deepEqual((await request(server, 'GET', '/commons/v1/consumptions', { key: t.key })).body, usageBefore, 'consumption is unchanged');
    const blacklist = await db.selectFrom('blacklist').selectAll().where('organisation_id', '=', t.organisationId).execute();
    assert.deepEqual(
      blacklist.map((b) => [b.msisdn, b.source]),
      [[number, 'ERASURE']],
      'the opt-out is still honoured',
    );

    const audit = await request(server, 'GET', `/admin/v1/audit?searchBy[organisationId]=${t.organisationId}&searchBy[action]=erasure.create`, {
      key: admin(),
    });
    assert.equal(audit.body.items.length, 1, 'the erasure is in the audit log');
    assert.deepEqual(audit.body.items[0].after.rows, erased.body.rows);
    assert.equal(JSON.stringify(audit.body.items).includes(number), false, 'the audit log names the number by its stand-in only');

    const again = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/erasures`, {
      key: admin(),
      body: { msisdn: number, keepOptOut: false },
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.replacedBy, erased.body.replacedBy, 'the stand-in is stable');
    assert.equal(again.body.optOut, 'ERASED');
    assert.deepEqual(
      Object.entries(again.body.rows).filter(([, n]) => n !== 0),
      [['optOuts', 1]],
    );
    const empty = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}/numbers/${number}/export`, { key: admin() });
    assert.deepEqual([empty.body.messages, empty.body.contacts, 'optOut' in empty.body], [[], [], false]);
  });
});
