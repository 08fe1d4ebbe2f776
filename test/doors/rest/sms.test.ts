import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const FR_PRICE = 0.045;

async function send(server: TestServer, t: Tenant, body: Record<string, unknown>, headers?: Record<string, string>) {
  return request(server, 'POST', '/sms/v1/messages', { key: t.key, body, headers });
}

async function finalStatus(server: TestServer, t: Tenant, id: string, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const r = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
      return ['ENROUTE', 'SCHEDULED'].includes(r.body.status.value) ? undefined : r.body;
    },
    timeoutMs,
    `final status of ${id}`,
  );
}

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

async function ledgerSum(server: TestServer, orgId: string): Promise<number> {
  const rows = await server.app.store.db.selectFrom('ledger').select(['amount']).where('organisation_id', '=', orgId).execute();
  return rows.reduce((a, r) => a + Number(r.amount), 0) / 1e6;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

forEachDialect('SMS', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect, { TERN_MESSAGE_VALIDITY_SECONDS: '2' });
  });
  after(async () => server.stop());

  test('send answers 201 with the full message object; GET returns the same object', async () => {
    const t = await createTenant(server, { balance: 5, channel: { defaultFromField: 'ACME', fromFieldList: ['ACME', 'SHOP'] } });
    const res = await send(server, t, {
      recipient: { to: '+33612345678' },
      body: { text: 'Hello {world}', encoding: 'GSM7' },
      from: 'SHOP',
      ref_client: 'order-17',
      callbackUrlStatus: 'https://example.com/status',
      callbackUrlMo: 'https://example.com/mo',
      unknownField: { ignored: true },
    });
    assert.equal(res.status, 201, res.text);
    const m = res.body;
    assert.match(m.messageId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(m.type, 'SMS');
    assert.equal(m.direction, 'MT');
    assert.deepEqual(m.recipient, { to: '33612345678' });
    assert.equal(m.from, 'SHOP');
    assert.deepEqual(m.body, { text: 'Hello {world}', encoding: 'GSM7', messagePartCount: 1, length: 15, stop: false });
    assert.deepEqual(m.price, { amount: FR_PRICE, currency: 'EUR' });
    assert.equal(m.status.value, 'ENROUTE');
    assert.equal('detail' in m.status, false, 'no detail while all goes well: absent, not null nor ""');
    assert.equal(m.refClient, 'order-17');
    assert.equal(m.callbackUrlStatus, 'https://example.com/status');
    assert.equal(m.callbackUrlMo, 'https://example.com/mo');
    assert.equal(m.channel.channelId, t.channelId);
    assert.equal(m.href, `${server.url}/sms/v1/messages/${m.messageId}`);
    assert.equal(m.acceptedAt, m.sentDate);
    const got = await request(server, 'GET', `/sms/v1/messages/${m.messageId}`, { key: t.key });
    assert.equal(got.status, 200);
    assert.deepEqual({ ...got.body, status: undefined }, { ...m, status: undefined });

    const def = await send(server, t, { recipient: { to: '0033612345679' }, body: { text: 'x' } });
    assert.equal(def.body.from, 'ACME', "the channel's defaultFromField");
    assert.equal(def.body.recipient.to, '33612345679');
    const plain = await send(server, t, { recipient: { to: '33612345670' }, body: { text: 'x' } });
    assert.equal(plain.body.recipient.to, '33612345670');
  });

  test('encoding and part counting are exact; body.stop appends the opt-out mention', async () => {
    const t = await createTenant(server, { balance: 5 });
    const cases: Array<[Record<string, unknown>, string, number, number]> = [
      [{ text: 'a'.repeat(160) }, 'GSM7', 1, 160],
      [{ text: 'a'.repeat(161) }, 'GSM7', 2, 161],
      [{ text: '€'.repeat(80) }, 'GSM7', 1, 160],
      [{ text: '€'.repeat(81) }, 'GSM7', 2, 162],
      [{ text: 'ç'.repeat(70) }, 'UNICODE', 1, 70],
      [{ text: 'ç'.repeat(71) }, 'UNICODE', 2, 71],
      [{ text: '😀'.repeat(35) }, 'UNICODE', 1, 70],
      [{ text: 'hello', encoding: 'UNICODE' }, 'UNICODE', 1, 5],
    ];
    for (const [body, encoding, parts, length] of cases) {
      const r = await send(server, t, { recipient: { to: '33612345678' }, body });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.body.encoding, encoding, JSON.stringify(body));
      assert.equal(r.body.body.messagePartCount, parts, JSON.stringify(body));
      assert.equal(r.body.body.length, length, JSON.stringify(body));
      assert.equal(r.body.price.amount, round6(FR_PRICE * parts));
    }
    const stop = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'Sale!', stop: true } });
    assert.match(stop.body.body.text, /^Sale!\nSTOP/);
    assert.equal(stop.body.body.stop, true);
  });

  test('bad input: 400 naming the field, 403.005 for another channel type, nothing written', async () => {
    const t = await createTenant(server, { balance: 5, channel: { fromFieldList: ['ACME'] } });
    const before = await balance(server, t);
    const ok = { recipient: { to: '33612345678' }, body: { text: 'x' } };
    assertError(await send(server, t, { body: { text: 'x' } }), 400, '400.001', /body\.recipient/);
    assertError(await send(server, t, { recipient: {}, body: { text: 'x' } }), 400, '400.001', /body\.recipient\.to/);
    assertError(await send(server, t, { recipient: { to: '33612345678' } }), 400, '400.001', /body\.body/);
    assertError(await send(server, t, { ...ok, body: { text: '' } }), 400, '400.001', /body\.body\.text/);
    assertError(await send(server, t, { ...ok, recipient: { to: '33abc45678' } }), 400, '400.003', /recipient\.to/);
    assertError(await send(server, t, { ...ok, recipient: { to: '3361' } }), 400, '400.003', /too short/);
    assertError(await send(server, t, { ...ok, recipient: { to: '3361234567890123' } }), 400, '400.003', /15 digits/);
    assertError(await send(server, t, { ...ok, body: { text: 'a'.repeat(1531) } }), 400, '400.004', /at most 10 parts/);
    assertError(await send(server, t, { ...ok, body: { text: '😀', encoding: 'GSM7' } }), 400, '400.001', /body\.body\.text/);
    assertError(await send(server, t, { ...ok, body: { text: 'x', encoding: 'UTF8' } }), 400, '400.001', /body\.body\.encoding/);
    assertError(await send(server, t, { ...ok, from: 'ABCDEFGHIJKL' }), 400, '400.005', /at most 11/);
    assertError(await send(server, t, { ...ok, from: 'OTHER' }), 400, '400.005', /fromFieldList/);
    assertError(await send(server, t, { ...ok, refClient: 'r'.repeat(141) }), 400, '400.001', /refClient: at most 140/);
    assertError(
      await send(server, t, { ...ok, callbackUrlStatus: `https://e.com/${'a'.repeat(250)}` }),
      400,
      '400.001',
      /callbackUrlStatus: must be at most 255/,
    );
    assertError(await send(server, t, { ...ok, callbackUrlMo: 'not a url' }), 400, '400.001', /callbackUrlMo/);
    assertError(await send(server, t, { ...ok, sentDate: 'tomorrow' }), 400, '400.007', /sentDate/);
    assertError(await send(server, t, { ...ok, sentDate: '2090-01-01T00:00:00Z' }), 400, '400.007', /10 years/);
    assertError(
      await request(server, 'POST', '/sms/v1/messages', { key: t.key, rawBody: '{"recipient":', headers: { 'content-type': 'application/json' } }),
      400,
      '400.002',
    );
    const rcs = await createTenant(server, { type: 'RCS', balance: 5 });
    assertError(await send(server, rcs, ok), 403, '403.005', /SMS channels/);
    assertError(await request(server, 'GET', '/sms/v1/messages', { key: rcs.key }), 403, '403.005');
    assertError(await request(server, 'POST', '/sms/v1/messages', { body: ok }), 401, '401.001');
    assert.equal(await balance(server, t), before, 'no charge for rejected requests');
    const list = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal(list.body.items.length, 0, 'no message stored for rejected requests');
  });

  test('money: a sub-organisation billed by its parent sends on the parent’s balance, and not beyond it', async () => {
    // No spending limit anywhere: on PostgreSQL the balances are read with the billing setup, unlocked, and the debit
    // checks them at the end.
    const parent = await createTenant(server, { balance: 0.1 });
    const branch = await createTenant(server, { name: 'Branch', parentOrganisationId: parent.organisationId, parentBilling: true, roles: ['USER'] });
    const sent = await Promise.all(['a', 'b', 'c'].map((text) => send(server, branch, { recipient: { to: '33612345678' }, body: { text } })));
    const statuses = sent.map((r) => `${r.body.status.value}${r.body.status.detail ? ` ${r.body.status.detail}` : ''}`).sort();
    assert.deepEqual(statuses, ['ENROUTE', 'ENROUTE', 'UNDELIVERABLE INSUFFICIENT_CREDIT'], 'two of three covered by 0.1');
    assert.equal(await balance(server, parent), round6(0.1 - 2 * FR_PRICE));
    assert.equal(await balance(server, branch), 0);
    assert.equal(round6(await ledgerSum(server, parent.organisationId)), round6(0.1 - 2 * FR_PRICE), 'the parent’s ledger adds up to its balance');
    assert.equal(await ledgerSum(server, branch.organisationId), 0);
  });

  test('money: no credit, invalid number, blacklist, daily and monthly limits end UNDELIVERABLE at no charge', async () => {
    const poor = await createTenant(server, { balance: 0.05 });
    const first = await send(server, poor, { recipient: { to: '33612345678' }, body: { text: 'one' } });
    assert.equal(first.body.status.value, 'ENROUTE');
    const second = await send(server, poor, { recipient: { to: '33612345678' }, body: { text: 'two' } });
    assert.equal(second.status, 201);
    assert.deepEqual([second.body.status.value, second.body.status.detail], ['UNDELIVERABLE', 'INSUFFICIENT_CREDIT']);
    assert.equal(second.body.price.amount, 0);
    assert.equal(await balance(server, poor), round6(0.05 - FR_PRICE));

    const t = await createTenant(server, { balance: 1, flow: 'MARKETING', channel: { dailyConsumptionLimit: 0.1 } });
    const invalid = await send(server, t, { recipient: { to: '33123' + '45678' }, body: { text: 'x' } });
    assert.deepEqual([invalid.body.status.value, invalid.body.status.detail, invalid.body.price.amount], ['UNDELIVERABLE', 'INVALID_PHONE_NUMBER', 0]);

    await server.app.store.db
      .insertInto('blacklist')
      .values({ organisation_id: t.organisationId, msisdn: '33612000111', source: 'TEST', created_at: Date.now() })
      .execute();
    const black = await send(server, t, { recipient: { to: '+33612000111' }, body: { text: 'promo' } });
    assert.deepEqual([black.body.status.value, black.body.status.detail, black.body.price.amount], ['UNDELIVERABLE', 'BLACKLISTED', 0]);

    const a = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'a' } });
    const b = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'b' } });
    const c = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'c' } });
    assert.equal(a.body.status.value, 'ENROUTE');
    assert.equal(b.body.status.value, 'ENROUTE');
    assert.deepEqual([c.body.status.value, c.body.status.detail, c.body.price.amount], ['UNDELIVERABLE', 'DAILY_LIMIT_EXCEEDED', 0]);
    assert.equal(await balance(server, t), round6(1 - 2 * FR_PRICE));

    const m = await createTenant(server, { balance: 1 });
    const patched = await request(server, 'PATCH', `/admin/v1/organisations/${m.organisationId}`, {
      key: server.adminKey,
      body: { monthlyConsumptionLimit: 0.05 },
    });
    assert.equal(patched.status, 200);
    assert.equal((await send(server, m, { recipient: { to: '33612345678' }, body: { text: 'a' } })).body.status.value, 'ENROUTE');
    const over = await send(server, m, { recipient: { to: '33612345678' }, body: { text: 'b' } });
    assert.deepEqual([over.body.status.value, over.body.status.detail], ['UNDELIVERABLE', 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED']);
  });

  test('simulator test numbers reach their documented final status; balance and ledger match to the micro-euro', async () => {
    const t = await createTenant(server, { balance: 2 });
    const numbers: Record<string, [string, string | undefined, boolean]> = {
      '33612340001': ['UNDELIVERED', undefined, true],
      '33612340002': ['UNDELIVERABLE', 'REJECTED', false],
      '33612340003': ['UNDELIVERED', 'EXPIRED', true],
      '33612340004': ['DELIVERED', undefined, true],
      '33612345678': ['DELIVERED', undefined, true],
    };
    const sent = new Map<string, string>();
    for (const to of Object.keys(numbers)) {
      const r = await send(server, t, { recipient: { to }, body: { text: `to ${to}` } });
      assert.equal(r.status, 201);
      sent.set(to, r.body.messageId);
    }
    let charged = 0;
    for (const [to, [status, detail, keepsCharge]] of Object.entries(numbers)) {
      const m = await finalStatus(server, t, sent.get(to)!);
      assert.equal(m.status.value, status, to);
      assert.equal(m.status.detail, detail, to);
      assert.equal(m.price.amount, keepsCharge ? FR_PRICE : 0, `${to} price after refund`);
      if (keepsCharge) charged += FR_PRICE;
    }
    assert.equal(await balance(server, t), round6(2 - charged));
    assert.equal(round6(await ledgerSum(server, t.organisationId)), round6(2 - charged), 'balance equals the sum of the ledger');
    const events = await request(server, 'GET', `/sms/v1/messages/${sent.get('33612340004')}/events`, { key: t.key });
    assert.deepEqual(
      events.body.items.map((e: any) => e.status),
      ['ENROUTE', 'DELIVERED'],
    );
    const late = await server.app.services.messaging.applyStatusNow([
      { messageId: sent.get('33612345678')!, status: 'UNDELIVERED', at: Date.now() },
      { messageId: sent.get('33612340001')!, status: 'DELIVERED', at: Date.now() },
    ]);
    assert.equal(late.applied.length, 0, 'a late receipt never moves a final status');
    // The simulator's records of placements (not its handsets' inboxes).
    const sim = await server.app.store.db
      .selectFrom('connector_records')
      .select(['key', 'data'])
      .where('connector', '=', 'simulator')
      .where('key', 'not like', 'handset:%')
      .execute();
    assert.ok(sim.length > 0);
    assert.ok(sim.every((r) => JSON.parse(r.data).duplicates === 0));
  });

  test('scheduled messages: SCHEDULED until sentDate, cancel refunds, cancelling twice is a conflict', async () => {
    const t = await createTenant(server, { balance: 1 });
    const soon = new Date(Date.now() + 1500).toISOString().replace('Z', '+00:00');
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const a = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'soon' }, sentDate: soon });
    const b = await send(server, t, { recipient: { to: '33612345678' }, body: { text: 'later' }, sentDate: later });
    assert.equal(a.body.status.value, 'SCHEDULED');
    assert.equal(b.body.status.value, 'SCHEDULED');
    assert.equal(b.body.sentDate, later);
    assert.equal(await balance(server, t), round6(1 - 2 * FR_PRICE));
    const cancelled = await request(server, 'DELETE', `/sms/v1/messages/${b.body.messageId}`, { key: t.key });
    assert.equal(cancelled.status, 200);
    assert.deepEqual([cancelled.body.status.value, cancelled.body.price.amount], ['CANCELLED', 0]);
    assert.equal(await balance(server, t), round6(1 - FR_PRICE));
    assertError(await request(server, 'DELETE', `/sms/v1/messages/${b.body.messageId}`, { key: t.key }), 409, '409.001');
    const delivered = await finalStatus(server, t, a.body.messageId);
    assert.equal(delivered.status.value, 'DELIVERED');
    assertError(await request(server, 'DELETE', `/sms/v1/messages/${a.body.messageId}`, { key: t.key }), 409, '409.001', /DELIVERED/);
    const events = await request(server, 'GET', `/sms/v1/messages/${a.body.messageId}/events`, { key: t.key });
    assert.deepEqual(
      events.body.items.map((e: any) => e.status),
      ['SCHEDULED', 'ENROUTE', 'DELIVERED'],
    );
  });

  test('listing: pagination, filters, default MT and last 10 days, a key sees only its channel', async () => {
    const t = await createTenant(server, { balance: 5, roles: ['USER'] });
    const other = await createTenant(server, { balance: 5 });
    for (let i = 0; i < 12; i++) {
      await send(server, t, { recipient: { to: `3361234${String(5000 + i)}` }, body: { text: `m${i}` }, refClient: i % 2 ? 'odd' : 'even' });
    }
    await send(server, other, { recipient: { to: '33612345678' }, body: { text: 'theirs' } });
    const p1 = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal(p1.status, 200);
    assert.deepEqual([p1.body.page, p1.body.pageSize, p1.body.items.length], [1, 10, 10]);
    const p2 = await request(server, 'GET', '/sms/v1/messages?page=2&pageSize=10', { key: t.key });
    assert.equal(p2.body.items.length, 2);
    const ids = new Set([...p1.body.items, ...p2.body.items].map((m: any) => m.messageId));
    assert.equal(ids.size, 12);
    const odd = await request(server, 'GET', '/sms/v1/messages?searchBy[refClient]=odd&pageSize=100', { key: t.key });
    assert.equal(odd.body.items.length, 6);
    const one = await request(server, 'GET', `/sms/v1/messages?searchBy[recipient.to]=%2B33612345003`, { key: t.key });
    assert.equal(one.body.items.length, 1);
    assert.equal(one.body.items[0].recipient.to, '33612345003');
    const old = await request(server, 'GET', '/sms/v1/messages?endDate=2020-01-01T00:00:00Z', { key: t.key });
    assert.equal(old.body.items.length, 0);
    const mo = await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key });
    assert.equal(mo.body.items.length, 0);
    await eventually(async () => {
      const d = await request(server, 'GET', '/sms/v1/messages?searchBy[status.value]=DELIVERED&pageSize=100', { key: t.key });
      return d.body.items.length === 12 ? true : undefined;
    });
    assertError(await request(server, 'GET', '/sms/v1/messages?pageSize=101', { key: t.key }), 400, '400.001', /pageSize/);
    assertError(await request(server, 'GET', '/sms/v1/messages?page=0', { key: t.key }), 400, '400.001', /page/);
    assertError(await request(server, 'GET', '/sms/v1/messages?startDate=yesterday', { key: t.key }), 400, '400.007');
    const theirs = (await request(server, 'GET', '/sms/v1/messages', { key: other.key })).body.items[0];
    assertError(await request(server, 'GET', `/sms/v1/messages/${theirs.messageId}`, { key: t.key }), 404, '404.001');
  });

  test('Idempotency-Key: same key and body replays the first answer; another body is 422', async () => {
    const t = await createTenant(server, { balance: 1 });
    const body = { recipient: { to: '33612345678' }, body: { text: 'once' } };
    const h = { 'idempotency-key': 'order-42' };
    const [a, b] = await Promise.all([send(server, t, body, h), send(server, t, body, h)]);
    const statuses = [a.status, b.status].sort();
    assert.ok(statuses[0] === 201 && (statuses[1] === 201 || statuses[1] === 409), `${statuses}`);
    const c = await send(server, t, body, h);
    assert.equal(c.status, 201);
    assert.equal(c.body.messageId, (a.status === 201 ? a : b).body.messageId);
    assert.equal(await balance(server, t), round6(1 - FR_PRICE), 'charged once');
    assertError(await send(server, t, { ...body, body: { text: 'twice' } }, h), 422, '422.001');
    const list = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal(list.body.items.length, 1);
  });

  test('campaigns: one message per recipient, bad recipients reported, counts, listing, cancellation', async () => {
    const t = await createTenant(server, { balance: 10 });
    const res = await request(server, 'POST', '/sms/v1/campaigns', {
      key: t.key,
      body: {
        recipients: [{ to: '33612345001' }, { to: '33612345002', refClient: 'r2' }, { to: 'garbage' }, { to: '33612340002' }],
        body: { text: 'Campaign' },
        refClient: 'camp-1',
        sentDate: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.recipients, 4);
    assert.equal(res.body.counts.accepted, 3);
    assert.equal(res.body.counts.rejected, 1);
    assert.deepEqual(
      res.body.errors.map((e: any) => [e.index, e.errorCode]),
      [[2, '400.003']],
    );
    assert.deepEqual(res.body.counts.byStatus, { SCHEDULED: 3 });
    const id = res.body.campaignId;
    const msgs = await request(server, 'GET', `/sms/v1/campaigns/${id}/messages`, { key: t.key });
    assert.equal(msgs.body.items.length, 3);
    assert.ok(msgs.body.items.every((m: any) => m.campaignId === id));
    assert.deepEqual(msgs.body.items.map((m: any) => m.refClient).sort(), ['camp-1', 'camp-1', 'r2']);
    assert.equal(await balance(server, t), round6(10 - 3 * FR_PRICE));
    const cancelled = await request(server, 'DELETE', `/sms/v1/campaigns/${id}`, { key: t.key });
    assert.equal(cancelled.status, 200);
    assert.deepEqual(cancelled.body.counts.byStatus, { CANCELLED: 3 });
    assert.equal(await balance(server, t), 10);
    assertError(await request(server, 'DELETE', `/sms/v1/campaigns/${id}`, { key: t.key }), 409, '409.001');
    assertError(
      await request(server, 'POST', '/sms/v1/campaigns', { key: t.key, body: { recipients: [], body: { text: 'x' } } }),
      400,
      '400.001',
      /recipients/,
    );
    assertError(
      await request(server, 'POST', '/sms/v1/campaigns', {
        key: t.key,
        body: { recipients: [{ to: '33612345678' }], body: { text: 'x' }, from: 'WAYTOOLONGSENDER' },
      }),
      400,
      '400.005',
      /body\.from/,
    );
    assertError(await request(server, 'GET', '/sms/v1/campaigns/nope', { key: t.key }), 404, '404.001');
  });
});
