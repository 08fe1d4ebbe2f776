import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { RollupBatch } from '../../../src/store/rollups.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

/** mulberry32: seeded, so a failing run can be replayed. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One billed item as a direct count sees it: a message row, or a synthetic fact. */
interface Fact {
  channelId: string;
  day: string;
  status: string;
  mccMnc: string;
  /** Billed units: parts of a charged, not refunded message. */
  quantity: number;
  /** Micro-euros still charged. */
  amount: number;
}

type PeriodType = 'DAY' | 'MONTH';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

function lastDayOfMonth(monthStart: string): string {
  const [y, m] = monthStart.split('-').map(Number);
  return dayOf(Date.UTC(y!, m!, 0));
}

/** What the records of a period type must say, computed from the facts alone, in the API's order. */
function expectedRecords(facts: Fact[], periodType: PeriodType) {
  const records = new Map<
    string,
    {
      channelId: string;
      startDate: string;
      quantity: number;
      amount: number;
      items: Map<string, { quantity: number; amount: number; statuses: Map<string, number> }>;
    }
  >();
  for (const f of facts) {
    const startDate = periodType === 'DAY' ? f.day : `${f.day.slice(0, 7)}-01`;
    const key = `${startDate}|${f.channelId}`;
    let r = records.get(key);
    if (!r) records.set(key, (r = { channelId: f.channelId, startDate, quantity: 0, amount: 0, items: new Map() }));
    r.quantity += f.quantity;
    r.amount += f.amount;
    let item = r.items.get(f.mccMnc);
    if (!item) r.items.set(f.mccMnc, (item = { quantity: 0, amount: 0, statuses: new Map() }));
    item.quantity += f.quantity;
    item.amount += f.amount;
    item.statuses.set(f.status, (item.statuses.get(f.status) ?? 0) + 1);
  }
  return [...records.values()]
    .sort((a, b) => (a.startDate !== b.startDate ? (a.startDate < b.startDate ? 1 : -1) : a.channelId < b.channelId ? -1 : 1))
    .map((r) => ({
      channelId: r.channelId,
      periodType,
      startDate: r.startDate,
      endDate: periodType === 'DAY' ? r.startDate : lastDayOfMonth(r.startDate),
      quantity: r.quantity,
      price: round6(r.amount / 1e6),
      items: [...r.items.entries()]
        .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : 1))
        .map(([mccMnc, i]) => ({
          mccMnc,
          quantity: i.quantity,
          price: round6(i.amount / 1e6),
          statuses: [...i.statuses.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([value, quantity]) => ({ value, quantity })),
        })),
    }));
}

/** The API's records in the same comparable shape. */
function comparable(items: any[]) {
  return items.map((r) => ({
    channelId: r.channel.channelId,
    periodType: r.periodType,
    startDate: r.startDate,
    endDate: r.endDate,
    quantity: r.quantity,
    price: r.price.amount,
    items: r.items.map((i: any) => ({ mccMnc: i.lookup.mccMnc ?? '', quantity: i.quantity, price: i.price.amount, statuses: i.statuses })),
  }));
}

async function allPages(server: TestServer, key: string, path: string, pageSize = 100): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await request(server, 'GET', `${path}${sep}page=${page}&pageSize=${pageSize}`, { key });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.page, page);
    if (r.body.items.length === 0) return out;
    out.push(...r.body.items);
    assert.ok(page < 1000);
  }
}

/** The direct count: every MT message of the organisation, as the rollups should have counted it. */
async function scanMessages(server: TestServer, organisationId: string): Promise<Fact[]> {
  const rows = await server.app.store.db
    .selectFrom('messages')
    .select(['channel_id', 'day', 'status', 'mcc_mnc', 'charged', 'part_count'])
    .where('organisation_id', '=', organisationId)
    .where('direction', '=', 'MT')
    .execute();
  return rows.map((m) => ({
    channelId: m.channel_id,
    day: m.day,
    status: m.status,
    mccMnc: m.mcc_mnc ?? '',
    quantity: Number(m.charged) > 0 ? Number(m.part_count) : 0,
    amount: Number(m.charged),
  }));
}

async function addChannel(server: TestServer, t: Tenant, roles: string[], type = 'SMS'): Promise<{ channelId: string; key: string }> {
  const channel = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
    key: server.adminKey,
    body: { name: `Channel ${roles.join('+')}`, type, flow: 'MARKETING' },
  });
  assert.equal(channel.status, 201, channel.text);
  const cred = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, {
    key: server.adminKey,
    body: { name: 'key', roles },
  });
  return { channelId: channel.body.channelId, key: cred.body.value };
}

forEachDialect('consumptions', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test('random mixed traffic: DAY and MONTH records equal a direct count of the messages; roles scope the channels', async () => {
    const org = await createTenant(server, { name: 'Traffic', balance: 50, roles: ['MANAGER'] });
    const second = await addChannel(server, { ...org }, ['USER']);
    const channels = [
      { channelId: org.channelId, key: org.key },
      { channelId: second.channelId, key: second.key },
    ];
    const random = seeded(dialect === 'sqlite' ? 7 : 11);
    const recipients = [
      '33612345678', // SFR, delivered
      '33612340001', // SFR, undelivered (charge kept)
      '33612340002', // SFR, rejected upstream (refunded)
      '33612340004', // SFR, one temporary error, then delivered
      '33660123456', // Bouygues
      '33695123456', // Free
      '4915112345678', // Germany
      '33142123456', // a fixed line: no network
    ];
    const texts = ['hello', 'x'.repeat(200), 'y'.repeat(400), 'unicode 😀'];
    const toCancel: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < 48; i++) {
      const ch = channels[Math.floor(random() * channels.length)]!;
      const scheduled = random() < 0.2;
      const body: Record<string, unknown> = {
        recipient: { to: recipients[Math.floor(random() * recipients.length)] },
        body: { text: texts[Math.floor(random() * texts.length)] },
      };
      if (scheduled) body.sentDate = new Date(Date.now() + 3_600_000).toISOString();
      const sent = await request(server, 'POST', '/sms/v1/messages', { key: ch.key, body });
      assert.equal(sent.status, 201, sent.text);
      if (scheduled && random() < 0.5) toCancel.push({ id: sent.body.messageId, key: ch.key });
    }
    for (const c of toCancel) {
      const cancelled = await request(server, 'DELETE', `/sms/v1/messages/${c.id}`, { key: c.key });
      assert.equal(cancelled.status, 200, cancelled.text);
    }
    const db = server.app.store.db;
    await eventually(
      async () => {
        const rows = await db.selectFrom('messages').select('id').where('organisation_id', '=', org.organisationId).where('status', '=', 'ENROUTE').execute();
        return rows.length === 0 ? true : undefined;
      },
      20_000,
      'the traffic to settle',
    );

    const facts = await scanMessages(server, org.organisationId);
    const statuses = new Set(facts.map((f) => f.status));
    for (const s of ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'SCHEDULED', 'CANCELLED']) assert.ok(statuses.has(s), `traffic has ${s}`);
    assert.ok(
      facts.some((f) => f.quantity > 1),
      'traffic has multipart messages',
    );
    assert.ok(
      facts.some((f) => f.mccMnc === ''),
      'traffic has an unknown network',
    );

    for (const periodType of ['DAY', 'MONTH'] as const) {
      const all = await allPages(server, org.key, `/commons/v1/consumptions?searchBy[periodType]=${periodType}`, 1);
      assert.deepEqual(comparable(all), expectedRecords(facts, periodType), `${periodType} records = direct count`);
      for (const r of all) {
        assert.equal(r.type, 'SMS');
        assert.match(r.consumptionId, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.deepEqual(Object.keys(r.channel).sort(), ['channelId', 'flow', 'name', 'type']);
        assert.equal(r.href, `${server.url}/commons/v1/channels/${r.channel.channelId}/consumptions/${r.consumptionId}`);
      }
      const own = await allPages(server, second.key, `/commons/v1/consumptions?searchBy[periodType]=${periodType}`);
      const ownFacts = facts.filter((f) => f.channelId === second.channelId);
      assert.deepEqual(comparable(own), expectedRecords(ownFacts, periodType), 'a USER key sees its own channel');
      const viaPath = await allPages(server, org.key, `/commons/v1/channels/${second.channelId}/consumptions?searchBy[periodType]=${periodType}`);
      assert.deepEqual(viaPath, own, 'the channel path gives the same records');
      const filtered = await allPages(
        server,
        org.key,
        `/commons/v1/consumptions?searchBy[periodType]=${periodType}&searchBy[channel.channelId]=${org.channelId}`,
      );
      assert.deepEqual(
        comparable(filtered),
        expectedRecords(
          facts.filter((f) => f.channelId === org.channelId),
          periodType,
        ),
      );
    }

    const month = await request(server, 'GET', '/commons/v1/consumptions', { key: org.key });
    assert.equal(month.status, 200);
    assert.deepEqual([month.body.page, month.body.pageSize], [1, 10]);
    assert.ok(
      month.body.items.every((r: any) => r.periodType === 'MONTH' && r.type === 'SMS'),
      'the default is monthly SMS',
    );
    const sfr = month.body.items.flatMap((r: any) => r.items).find((i: any) => i.lookup.mccMnc === '20810');
    assert.deepEqual(sfr.lookup, { mccMnc: '20810', country: 'France', network: 'SFR' });
    const unknown = month.body.items.flatMap((r: any) => r.items).find((i: any) => i.lookup.mccMnc === undefined);
    assert.deepEqual(unknown.lookup, {}, 'an unknown network: every field absent');

    const total = round6(month.body.items.reduce((s: number, r: any) => s + r.price.amount, 0));
    const admin = await request(server, 'GET', `/admin/v1/organisations/${org.organisationId}`, { key: server.adminKey });
    assert.equal(total, admin.body.monthlyConsumption, 'the organisation monthly consumption is the sum of its records');
    const ledger = await db
      .selectFrom('ledger')
      .select('amount')
      .where('organisation_id', '=', org.organisationId)
      .where('kind', 'in', ['CHARGE', 'REFUND'])
      .execute();
    assert.equal(total, round6(-ledger.reduce((s, r) => s + Number(r.amount), 0) / 1e6), 'and what the ledger charged, net of refunds');

    const record = month.body.items[0];
    const one = await request(server, 'GET', new URL(record.href).pathname, { key: org.key });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, record);
    const again = await request(server, 'GET', '/commons/v1/consumptions', { key: org.key });
    assert.deepEqual(
      again.body.items.map((r: any) => r.consumptionId),
      month.body.items.map((r: any) => r.consumptionId),
      'ids are stable',
    );

    assert.deepEqual((await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=RCS', { key: org.key })).body.items, []);
  });

  test('history across days and months: whole periods, default window, paging, stable ids', async () => {
    const org = await createTenant(server, { name: 'History', roles: ['ADMIN'] });
    const other = await addChannel(server, org, ['USER']);
    const channelIds = [org.channelId, other.channelId];
    const random = seeded(3);
    const now = Date.now();
    const facts: Fact[] = [];
    const lookups: Fact[] = [];
    const batch = new RollupBatch();
    for (let i = 0; i < 400; i++) {
      const day = dayOf(now - Math.floor(random() * 160) * DAY_MS);
      const channelId = channelIds[Math.floor(random() * 2)]!;
      const mccMnc = ['20810', '20820', '26201', ''][Math.floor(random() * 4)]!;
      const parts = 1 + Math.floor(random() * 3);
      const price = 45_000 * parts;
      const status = ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'CANCELLED', 'SCHEDULED'][Math.floor(random() * 5)]!;
      const refunded = status === 'UNDELIVERABLE' || status === 'CANCELLED';
      const type = random() < 0.1 ? 'LOOKUP' : 'SMS';
      const key = { organisationId: org.organisationId, channelId, channelType: type, day, status: 'ENROUTE', mccMnc, priceKind: type };
      // As the pipeline does: charged at acceptance, moved to its status, refunded in its final bucket.
      batch.add(key, parts, 1, price);
      if (status !== 'ENROUTE') batch.move(key, status, parts, price);
      if (refunded) batch.add({ ...key, status }, -parts, 0, -price);
      const fact = { channelId, day, status, mccMnc, quantity: refunded ? 0 : parts, amount: refunded ? 0 : price };
      (type === 'SMS' ? facts : lookups).push(fact);
    }
    await server.app.store.db.transaction().execute((trx) => batch.write(trx));

    const startDate = dayOf(now - 170 * DAY_MS);
    const endDate = dayOf(now);
    for (const periodType of ['DAY', 'MONTH'] as const) {
      const all = await allPages(server, org.key, `/commons/v1/consumptions?searchBy[periodType]=${periodType}&startDate=${startDate}&endDate=${endDate}`, 7);
      assert.deepEqual(comparable(all), expectedRecords(facts, periodType), periodType);
      assert.equal(new Set(all.map((r) => r.consumptionId)).size, all.length, 'one id per record');
      const looked = await allPages(
        server,
        org.key,
        `/commons/v1/consumptions?searchBy[periodType]=${periodType}&searchBy[channel.type]=LOOKUP&startDate=${startDate}`,
      );
      assert.deepEqual(comparable(looked), expectedRecords(lookups, periodType));
      assert.ok(looked.every((r) => r.type === 'LOOKUP'));
      const ids = new Set(all.map((r) => r.consumptionId));
      assert.ok(
        looked.every((r) => !ids.has(r.consumptionId)),
        'a LOOKUP record and an SMS record of the same period differ',
      );
    }

    // A window that starts or ends inside a month still returns that month whole.
    const midMonth = `${dayOf(now - 40 * DAY_MS).slice(0, 7)}-15`;
    const partial = await request(server, 'GET', `/commons/v1/consumptions?startDate=${midMonth}&endDate=${midMonth}&pageSize=100`, { key: org.key });
    const wantMonth = expectedRecords(
      facts.filter((f) => f.day.slice(0, 7) === midMonth.slice(0, 7)),
      'MONTH',
    );
    assert.deepEqual(comparable(partial.body.items), wantMonth);

    const day = facts[0]!.day;
    const oneDay = await request(server, 'GET', `/commons/v1/consumptions?searchBy[periodType]=DAY&startDate=${day}&endDate=${day}&pageSize=100`, {
      key: org.key,
    });
    assert.deepEqual(
      comparable(oneDay.body.items),
      expectedRecords(
        facts.filter((f) => f.day === day),
        'DAY',
      ),
    );

    // Default: the current month and the two before it.
    const firstMonth = (() => {
      const d = new Date(now);
      return dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 2, 1));
    })();
    const recent = await allPages(server, org.key, '/commons/v1/consumptions');
    assert.deepEqual(
      comparable(recent),
      expectedRecords(
        facts.filter((f) => f.day >= firstMonth),
        'MONTH',
      ),
    );
    const recentDays = await allPages(server, org.key, '/commons/v1/consumptions?searchBy[periodType]=DAY');
    assert.deepEqual(
      comparable(recentDays),
      expectedRecords(
        facts.filter((f) => f.day >= firstMonth),
        'DAY',
      ),
    );
    assert.ok(
      facts.some((f) => f.day < firstMonth),
      'older history exists and was left out',
    );

    const old = await request(server, 'GET', '/commons/v1/consumptions?startDate=2001-01-01&endDate=2001-12-31', { key: org.key });
    assert.deepEqual(old.body.items, []);

    // Every id resolves to its record, from the channel path.
    const sample = (await allPages(server, org.key, `/commons/v1/consumptions?searchBy[periodType]=DAY&startDate=${startDate}`)).slice(0, 5);
    for (const r of sample) {
      const got = await request(server, 'GET', `/commons/v1/channels/${r.channel.channelId}/consumptions/${r.consumptionId}`, { key: org.key });
      assert.deepEqual(got.body, r);
    }
    const lookupRecord = (await allPages(server, org.key, `/commons/v1/consumptions?searchBy[channel.type]=LOOKUP&startDate=${startDate}`))[0];
    const gotLookup = await request(server, 'GET', `/commons/v1/channels/${lookupRecord.channel.channelId}/consumptions/${lookupRecord.consumptionId}`, {
      key: org.key,
    });
    assert.deepEqual(gotLookup.body, lookupRecord);
    assertError(
      await request(server, 'GET', `/commons/v1/channels/${org.channelId}/consumptions/${randomUUID()}`, { key: org.key }),
      404,
      '404.001',
      /consumption/,
    );
    const elsewhere = sample.find((r) => r.channel.channelId === other.channelId);
    if (elsewhere) {
      assertError(
        await request(server, 'GET', `/commons/v1/channels/${org.channelId}/consumptions/${elsewhere.consumptionId}`, { key: org.key }),
        404,
        '404.001',
      );
    }
  });

  test('scoping and rejections', async () => {
    const org = await createTenant(server, { name: 'Scope', balance: 1, roles: ['MANAGER'] });
    const user = await addChannel(server, org, ['USER']);
    const message = await addChannel(server, org, ['MESSAGE']);
    const stranger = await createTenant(server, { name: 'Stranger', roles: ['ADMIN'] });

    assertError(await request(server, 'GET', '/commons/v1/consumptions', { key: message.key }), 403, '403.001', /consumption:read/);
    assertError(await request(server, 'GET', '/commons/v1/consumptions'), 401, '401.001');
    assertError(
      await request(server, 'GET', `/commons/v1/consumptions?searchBy[channel.channelId]=${org.channelId}`, { key: user.key }),
      404,
      '404.001',
      /channel/,
    );
    assertError(await request(server, 'GET', `/commons/v1/channels/${org.channelId}/consumptions`, { key: user.key }), 404, '404.001');
    assertError(await request(server, 'GET', `/commons/v1/channels/${stranger.channelId}/consumptions`, { key: org.key }), 404, '404.001');
    assertError(await request(server, 'GET', `/commons/v1/consumptions?searchBy[channel.channelId]=${stranger.channelId}`, { key: org.key }), 404, '404.001');
    assert.equal((await request(server, 'GET', `/commons/v1/channels/${user.channelId}/consumptions`, { key: org.key })).status, 200);
    assert.equal((await request(server, 'GET', `/commons/v1/channels/${user.channelId}/consumptions`, { key: user.key })).status, 200);

    const q = (query: string) => request(server, 'GET', `/commons/v1/consumptions?${query}`, { key: org.key });
    assertError(await q('searchBy[periodType]=WEEK'), 400, '400.001', /periodType.*must be one of DAY, MONTH/);
    assertError(await q('searchBy[channel.type]=FAX'), 400, '400.001', /channel\.type.*SMS, RCS, VOICE, LOOKUP/);
    assertError(await q('searchBy[channel.channelId]=abc'), 400, '400.001', /channelId/);
    assertError(await q('startDate=2024-02-30'), 400, '400.007', /query\.startDate: must be a date written YYYY-MM-DD/);
    assertError(await q('endDate=2024-05-01T10:00:00Z'), 400, '400.007', /query\.endDate/);
    assertError(await q('startDate=2024-05-02&endDate=2024-05-01'), 400, '400.007', /after endDate/);
    assertError(await q('pageSize=101'), 400, '400.001', /pageSize/);
    assertError(await q('page=0'), 400, '400.001', /page/);
    assertError(
      await request(server, 'GET', `/commons/v1/channels/${org.channelId}/consumptions/not-an-id`, { key: org.key }),
      400,
      '400.001',
      /consumptionId/,
    );
    const future = await q('startDate=2999-01-01');
    assert.equal(future.status, 200, 'a start in the future needs no end date');
    assert.deepEqual(future.body.items, []);
  });
});
