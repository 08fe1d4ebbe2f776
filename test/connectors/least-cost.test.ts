import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, connector, route, routedTo } from '../support/connectors.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

forEachDialect('rate tables, least-cost routing and margins', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  let cheap: string;
  let dear: string;
  let dearer: string;
  const name = (n: string) => `${n}-${dialect}`;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 10 });
    cheap = await connector(server, { name: name('cheap'), type: 'SIMULATOR' });
    dear = await connector(server, { name: name('dear'), type: 'SIMULATOR' });
    dearer = await connector(server, { name: name('dearer'), type: 'SIMULATOR' });
  });
  after(() => server.stop());

  const db = () => server.app.store.db;
  const send = async (to: string) => {
    const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 'least cost' } } });
    assert.equal(r.status, 201, r.text);
    return r.body.messageId as string;
  };
  const settled = (id: string) =>
    eventually(async () => {
      const m = await db()
        .selectFrom('messages')
        .select(['status', 'status_detail', 'connector', 'cost', 'charged'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return m.status !== 'ENROUTE' && (m.connector !== null || m.status === 'UNDELIVERABLE') ? m : undefined;
    });
  const rateCount = async (id: string) => (await admin(server, 'GET', `/admin/v1/connectors/${id}/rates`)).body.items.length as number;

  test('rate tables load from JSON and from an operator’s CSV, all or none', async () => {
    const csv = 'Country;MCC;MNC;Prefix;Price;Currency;Valid_From\nFR;;;;0,030;EUR;2020-01-01\nFR;;;;0.050;EUR;2099-01-01\n';
    const imported = await request(server, 'POST', `/admin/v1/connectors/${cheap}/rates/import`, {
      key: server.adminKey,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(imported.status, 201, imported.text);
    assert.equal(imported.body.count, 2);
    assert.deepEqual(
      imported.body.items.map((r: { country: string; price: number; validFrom: string }) => [r.country, r.price, r.validFrom]),
      [
        ['FR', 0.03, '2020-01-01T00:00:00.000Z'],
        ['FR', 0.05, '2099-01-01T00:00:00.000Z'],
      ],
    );
    // Only the rate in force now.
    const now = await admin(server, 'GET', `/admin/v1/connectors/${cheap}/rates?at=${new Date().toISOString()}`);
    assert.deepEqual(
      now.body.items.map((r: { price: number }) => r.price),
      [0.03],
    );
    const json = await admin(server, 'POST', `/admin/v1/connectors/${dear}/rates`, { rates: [{ country: 'FR', price: 0.04, currency: 'EUR' }] });
    assert.equal(json.status, 201, json.text);
    const mccMnc = await admin(server, 'POST', `/admin/v1/connectors/${dearer}/rates`, {
      rates: [
        { country: 'FR', price: '0.06' },
        { mcc: '208', mnc: '15', price: 0.07 },
      ],
    });
    assert.equal(mccMnc.status, 201, mccMnc.text);
    assert.equal(mccMnc.body.items[1].mccMnc, '20815');

    // Bad input names the line or entry, and nothing of it is stored.
    const before = await rateCount(cheap);
    const badLine = await request(server, 'POST', `/admin/v1/connectors/${cheap}/rates/import`, {
      key: server.adminKey,
      rawBody: 'country,price,currency\nFR,0.01,EUR\nDE,abc,EUR\n',
      headers: { 'content-type': 'text/csv' },
    });
    assertError(badLine, 400, '400.001', /line 3\.price/);
    const usd = await admin(server, 'POST', `/admin/v1/connectors/${cheap}/rates/import`, { csv: 'country,price,currency\nFR,0.01,USD\n' });
    assertError(usd, 400, '400.001', /only EUR/);
    const noPrice = await admin(server, 'POST', `/admin/v1/connectors/${cheap}/rates/import`, { csv: 'country,mcc\nFR,208\n' });
    assertError(noPrice, 400, '400.001', /price column/);
    const mncWithoutMcc = await admin(server, 'POST', `/admin/v1/connectors/${cheap}/rates`, { rates: [{ price: 0.01 }, { mnc: '01', price: 0.01 }] });
    assertError(mncWithoutMcc, 400, '400.001', /rates\[1\]\.mcc/);
    const backwards = await admin(server, 'POST', `/admin/v1/connectors/${cheap}/rates`, {
      rates: [{ price: 0.01, validFrom: '2030-01-02', validTo: '2030-01-01' }],
    });
    assertError(backwards, 400, '400.001', /validTo/);
    assert.equal(await rateCount(cheap), before, 'nothing of a refused load is stored');
    assertError(await admin(server, 'GET', '/admin/v1/connectors/00000000-0000-7000-8000-000000000000/rates'), 404, '404.001');

    // A rate in force (or past) stays; one not in force yet may be withdrawn.
    const inForce = imported.body.items[0].rateId;
    assertError(await admin(server, 'DELETE', `/admin/v1/connectors/${cheap}/rates/${inForce}`), 409, '409.001', /in force/);
    const future = await admin(server, 'POST', `/admin/v1/connectors/${cheap}/rates`, { rates: [{ country: 'FR', price: 0.001, validFrom: '2098-01-01' }] });
    const withdrawn = await admin(server, 'DELETE', `/admin/v1/connectors/${cheap}/rates/${future.body.items[0].rateId}`);
    assert.equal(withdrawn.status, 200, withdrawn.text);
    assert.equal(await rateCount(cheap), before);
  });

  test('a cost route sends through the cheapest connector up, records the cost, and moves on when it goes down', async () => {
    assertError(
      await admin(server, 'POST', '/admin/v1/routes', { name: 'bad', connectors: [{ connectorId: dear }], strategy: 'cheapest' }),
      400,
      '400.001',
      /strategy/,
    );
    assertError(
      await admin(server, 'POST', '/admin/v1/routes', { name: 'bad', connectors: [{ connectorId: dear }], maxAttempts: 0 }),
      400,
      '400.001',
      /maxAttempts/,
    );
    await route(server, {
      name: name('fr least cost'),
      priority: 1,
      match: { prefix: '336123' },
      // The dear connector weighs more: by weight it would take most of the traffic.
      connectors: [
        { connectorId: dear, weight: 10 },
        { connectorId: cheap, weight: 1 },
      ],
      strategy: 'cost',
    });
    await routedTo(server, '33612345678', name('cheap'));
    const why = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33612345678' });
    assert.equal(why.body.strategy, 'cost');
    assert.deepEqual(
      why.body.candidates.map((c: { name: string; costPerPart: number }) => [c.name, c.costPerPart]),
      [
        [name('cheap'), 0.03],
        [name('dear'), 0.04],
      ],
    );
    assert.equal(why.body.charged, 0.045, 'the price list’s price for a French SMS');
    assert.match(why.body.reason, /strategy cost.*cheapest up: 0\.03 EUR/);

    for (let i = 0; i < 3; i++) {
      const m = await settled(await send('33612345678'));
      assert.deepEqual([m.status, m.connector, Number(m.cost), Number(m.charged)], ['DELIVERED', name('cheap'), 30_000, 45_000]);
    }
    const off = await admin(server, 'PATCH', `/admin/v1/connectors/${cheap}`, { enabled: false });
    assert.equal(off.status, 200, off.text);
    await routedTo(server, '33612345678', name('dear'));
    const m = await settled(await send('33612345678'));
    assert.deepEqual([m.status, m.connector, Number(m.cost)], ['DELIVERED', name('dear'), 40_000]);
    await admin(server, 'PATCH', `/admin/v1/connectors/${cheap}`, { enabled: true });
    await routedTo(server, '33612345678', name('cheap'));
  });

  test('a route never places a message at a loss unless it allows it, and says why', async () => {
    const lossy = await route(server, { name: name('fr at a loss'), priority: 1, match: { prefix: '3361234999' }, connectors: [{ connectorId: dearer }] });
    await eventually(async () => (await admin(server, 'POST', '/admin/v1/routes/test', { to: '33612349990' })).body.route === name('fr at a loss'));
    const why = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33612349990' });
    assert.deepEqual(why.body.candidates, []);
    assert.deepEqual(why.body.atLoss, [{ name: name('dearer'), costPerPart: 0.06 }]);
    assert.match(why.body.refused, /at a loss.*0\.06 EUR for 1 part\(s\), 0\.045 EUR was charged/);
    assert.match(why.body.reason, /ROUTE_AT_LOSS/);
    // At a higher price it would go.
    const priced = await admin(server, 'POST', '/admin/v1/routes/test', { to: '33612349990', pricePerPart: 0.08 });
    assert.equal(priced.body.candidates[0]?.name, name('dearer'));

    const balanceBefore = (await admin(server, 'GET', `/admin/v1/organisations/${t.organisationId}`)).body.balance.amount;
    const refused = await settled(await send('33612349990'));
    assert.deepEqual([refused.status, refused.status_detail, refused.connector], ['UNDELIVERABLE', 'ROUTE_AT_LOSS', null]);
    const balanceAfter = (await admin(server, 'GET', `/admin/v1/organisations/${t.organisationId}`)).body.balance.amount;
    assert.equal(balanceAfter, balanceBefore, 'refunded');

    await admin(server, 'PATCH', `/admin/v1/routes/${lossy}`, { allowLoss: true });
    await routedTo(server, '33612349990', name('dearer'));
    const placed = await settled(await send('33612349990'));
    assert.deepEqual([placed.status, placed.connector, Number(placed.cost)], ['DELIVERED', name('dearer'), 60_000]);
    await admin(server, 'DELETE', `/admin/v1/routes/${lossy}`);
  });

  test('the margin report adds up to the micro-euro against the ledger; customers see no cost nor connector', async () => {
    const period = new Date().toISOString().slice(0, 10);
    const q = `startDate=${period}&endDate=${period}&searchBy[organisationId]=${t.organisationId}`;
    const r = await admin(server, 'GET', `/admin/v1/consumptions/margins?${q}`);
    assert.equal(r.status, 200, r.text);
    const items = r.body.items as Array<{
      connector: string;
      country: string;
      messages: number;
      charged: { amount: number };
      cost: { amount: number };
      margin: { amount: number };
    }>;
    const by = new Map(items.map((i) => [i.connector, i]));
    assert.deepEqual([...by.keys()].sort(), [name('cheap'), name('dear'), name('dearer')].sort());
    assert.deepEqual([by.get(name('cheap'))!.messages, by.get(name('cheap'))!.cost.amount, by.get(name('cheap'))!.margin.amount], [3, 0.09, 0.045]);
    assert.equal(by.get(name('dearer'))!.margin.amount, -0.015);
    assert.ok(items.every((i) => i.country === 'FR'));
    // Every message of the organisation was placed, but the one refused at a loss (refunded): what the ledger took
    // from its balance is what the report says was charged, to the micro-euro.
    const balance = (await admin(server, 'GET', `/admin/v1/organisations/${t.organisationId}`)).body.balance.amount as number;
    const ledger = await db()
      .selectFrom('ledger')
      .select((eb) => eb.fn.sum<number>('amount').as('sum'))
      .where('organisation_id', '=', t.organisationId)
      .executeTakeFirstOrThrow();
    const spent = 10_000_000 - Number(balance * 1_000_000);
    const charged = items.reduce((s, i) => s + Math.round(i.charged.amount * 1_000_000), 0);
    assert.equal(charged, 5 * 45_000);
    assert.equal(charged, spent);
    assert.equal(Number(ledger.sum), 10_000_000 - charged, 'the ledger: the top-up less what was charged');
    assert.equal(Math.round(r.body.totals.margin.amount * 1_000_000), 5 * 45_000 - (3 * 30_000 + 40_000 + 60_000));

    const monthly = await admin(server, 'GET', `/admin/v1/consumptions/margins?${q}&period=month`);
    assert.ok(monthly.body.items.every((i: { period: string }) => i.period === period.slice(0, 7)));
    const csv = await request(server, 'GET', `/admin/v1/consumptions/margins?${q}&format=csv`, { key: server.adminKey });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    assert.ok(
      csv.text.startsWith('period,organisationId,connector,country,messages,parts,charged,cost,margin,messagesUnknownCost,chargedUnknownCost,currency'),
    );
    assert.ok(csv.text.includes(`,${t.organisationId},${name('cheap')},FR,3,3,0.135000,0.090000,0.045000,0,0.000000,EUR`), csv.text);
    assertError(await admin(server, 'GET', '/admin/v1/consumptions/margins?startDate=2026-02-30'), 400, '400.007');
    assertError(await admin(server, 'GET', '/admin/v1/consumptions/margins?startDate=2026-02-02&endDate=2026-02-01'), 400, '400.007');

    // The customer's own consumption: no cost, no connector.
    const own = await request(server, 'GET', '/commons/v1/consumptions', { key: t.key });
    assert.equal(own.status, 200, own.text);
    assert.doesNotMatch(own.text, /cheap|dearer|"cost"|margin/);
    const customer = await request(server, 'GET', `/admin/v1/consumptions/margins?${q}`, { key: t.key });
    assert.equal(customer.status, 403);
  });

  test('messages whose cost is not known are counted apart, never as free: the report still adds up against the ledger', async () => {
    const u = await createTenant(server, { balance: 10 });
    const sendAs = async (to: string) => {
      const r = await request(server, 'POST', '/sms/v1/messages', { key: u.key, body: { recipient: { to }, body: { text: 'unknown cost' } } });
      assert.equal(r.status, 201, r.text);
      return r.body.messageId as string;
    };
    // No rate and no route cost: what these cost is not known. The failing ones report every SMS UNDELIVERED, a
    // moment after the submit, so each message is placed again through its route's next connector.
    const unrated = await connector(server, { name: name('unrated'), type: 'SIMULATOR' });
    const failingRated = await connector(server, { name: name('failing-rated'), type: 'SIMULATOR', failedDeliveryPercent: 100, receiptLatencyMs: 300 });
    const failingUnrated = await connector(server, { name: name('failing-unrated'), type: 'SIMULATOR', failedDeliveryPercent: 100, receiptLatencyMs: 300 });
    assert.equal((await admin(server, 'POST', `/admin/v1/connectors/${failingRated}/rates`, { rates: [{ country: 'FR', price: 0.01 }] })).status, 201);
    const routes = [
      // Cost never known.
      await route(server, { name: name('fr unrated'), priority: 1, match: { prefix: '336555' }, connectors: [{ connectorId: unrated }] }),
      // Known with its first placement, not with its second: the first one's cost comes off.
      await route(server, {
        name: name('fr known then not'),
        priority: 1,
        match: { prefix: '336556' },
        connectors: [{ connectorId: failingRated }, { connectorId: unrated }],
        strategy: 'cost',
        maxAttempts: 2,
      }),
      // Not known with its first placement: its second one's known cost is not counted either.
      await route(server, {
        name: name('fr not then known'),
        priority: 1,
        match: { prefix: '336557' },
        connectors: [{ connectorId: failingUnrated }],
        failover: [{ connectorId: cheap }],
        maxAttempts: 2,
      }),
    ];
    await routedTo(server, '33655500011', name('unrated'));
    await routedTo(server, '33655600011', name('failing-rated'));
    await routedTo(server, '33655700011', name('failing-unrated'));
    const ids = [
      await sendAs('33655500011'),
      await sendAs('33655500012'),
      await sendAs('33655600011'),
      await sendAs('33655700011'),
      await sendAs('33612345678'), // the cheapest route of the first test: cost known
    ];
    for (const [i, id] of ids.entries()) assert.equal((await settled(id)).status, 'DELIVERED', `message ${i}`);
    const placements = async (id: string) =>
      ((await admin(server, 'GET', `/admin/v1/messages/${id}/attempts`)).body.items as Array<{ connector: string; cost?: { amount: number } }>).map((a) => [
        a.connector,
        a.cost?.amount ?? null,
      ]);
    assert.deepEqual(await placements(ids[2]!), [
      [name('failing-rated'), 0.01],
      [name('unrated'), null],
    ]);
    assert.deepEqual(await placements(ids[3]!), [
      [name('failing-unrated'), null],
      [name('cheap'), 0.03],
    ]);

    const period = new Date().toISOString().slice(0, 10);
    const r = await admin(server, 'GET', `/admin/v1/consumptions/margins?startDate=${period}&endDate=${period}&searchBy[organisationId]=${u.organisationId}`);
    assert.equal(r.status, 200, r.text);
    type Line = { connector: string; messages: number; charged: { amount: number }; cost: { amount: number }; margin: { amount: number } } & {
      messagesUnknownCost: number;
      chargedUnknownCost: { amount: number };
    };
    const micro = (e: { amount: number }) => Math.round(e.amount * 1_000_000);
    const figures = (i: Line) => [i.messages, micro(i.charged), micro(i.cost), i.messagesUnknownCost, micro(i.chargedUnknownCost), micro(i.margin)];
    const by = new Map((r.body.items as Line[]).map((i) => [i.connector, figures(i)]));
    assert.deepEqual(
      by,
      new Map([
        // messages, charged, cost, messages of unknown cost, charged for them, margin (micro-euros)
        [name('cheap'), [1, 45_000, 30_000, 0, 0, 15_000]],
        [name('failing-rated'), [1, 45_000, 0, 1, 45_000, 0]],
        [name('failing-unrated'), [1, 45_000, 0, 1, 45_000, 0]],
        [name('unrated'), [2, 90_000, 0, 2, 90_000, 0]],
      ]),
    );
    const totals = r.body.totals as Line;
    assert.deepEqual(figures(totals), [5, 225_000, 30_000, 4, 180_000, 15_000]);
    // What the ledger took is what the report says was charged, to the micro-euro, those of unknown cost included.
    const ledger = await db()
      .selectFrom('ledger')
      .select((eb) => eb.fn.sum<number>('amount').as('sum'))
      .where('organisation_id', '=', u.organisationId)
      .executeTakeFirstOrThrow();
    assert.equal(10_000_000 - Number(ledger.sum), micro(totals.charged));
    assert.equal(micro(totals.margin), micro(totals.charged) - micro(totals.chargedUnknownCost) - micro(totals.cost));

    const csv = await request(
      server,
      'GET',
      `/admin/v1/consumptions/margins?startDate=${period}&endDate=${period}&searchBy[organisationId]=${u.organisationId}&format=csv`,
      {
        key: server.adminKey,
      },
    );
    assert.ok(csv.text.includes(`,${u.organisationId},${name('unrated')},FR,2,2,0.090000,0.000000,0.000000,2,0.090000,EUR`), csv.text);
    for (const id of routes) await admin(server, 'DELETE', `/admin/v1/routes/${id}`);
  });
});
