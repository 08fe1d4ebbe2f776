import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { transferIdempotency } from '../../../src/core/billing/funds.ts';
import { claimIdempotencyKey } from '../../../src/core/idempotency.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Balance in micro-euros, read straight from the store. */
async function balanceOf(server: TestServer, orgId: string): Promise<number> {
  const row = await server.app.store.db.selectFrom('organisations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.balance);
}

async function ledgerOf(server: TestServer, orgId: string) {
  const rows = await server.app.store.db.selectFrom('ledger').selectAll().where('organisation_id', '=', orgId).orderBy('id').execute();
  return rows.map((r) => ({ ...r, amount: Number(r.amount), balance_after: Number(r.balance_after) }));
}

async function transferCount(server: TestServer): Promise<number> {
  const rows = await server.app.store.db.selectFrom('transfers').select('id').execute();
  return rows.length;
}

interface Family {
  parent: Tenant;
  children: Tenant[];
}

async function family(server: TestServer, childCount: number, parentBalance = 100, childBalance = 0): Promise<Family> {
  const parent = await createTenant(server, { name: 'Parent', balance: parentBalance });
  const children: Tenant[] = [];
  for (let i = 0; i < childCount; i++) {
    children.push(await createTenant(server, { name: `Child ${i + 1}`, parentOrganisationId: parent.organisationId, balance: childBalance }));
  }
  return { parent, children };
}

function transfer(
  server: TestServer,
  key: string,
  sourceId: string,
  destinationId: string,
  amount: unknown,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return request(server, 'POST', `/commons/v1/organisations/${sourceId}/transfers`, {
    key,
    body: { organisationDestination: { organisationId: destinationId }, amount, ...extra },
    headers,
  });
}

forEachDialect('transfers', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test('parent to sub-organisation: one transaction of two ledger rows and the record, readable from both sides', async () => {
    const {
      parent,
      children: [child],
    } = await family(server, 1, 20);
    const res = await transfer(server, parent.key, parent.organisationId, child!.organisationId, '7.654321', {
      reference: 'budget-Q3',
      description: 'Quarterly budget',
    });
    assert.equal(res.status, 201, res.text);
    const t = res.body;
    assert.match(t.transferId, UUID);
    assert.deepEqual(
      { ...t, transferId: undefined, creationDate: undefined },
      {
        transferId: undefined,
        type: 'DEBIT',
        amount: 7.654321,
        currency: 'EUR',
        creationDate: undefined,
        reference: 'budget-Q3',
        description: 'Quarterly budget',
        organisationSource: { organisationId: parent.organisationId, name: 'Parent' },
        organisationDestination: { organisationId: child!.organisationId, name: 'Child 1' },
        href: `${server.url}/commons/v1/organisations/${parent.organisationId}/transfers/${t.transferId}`,
      },
    );
    assert.match(t.creationDate, ISO_Z);

    assert.equal(await balanceOf(server, parent.organisationId), 20_000_000 - 7_654_321);
    assert.equal(await balanceOf(server, child!.organisationId), 7_654_321);
    const out = (await ledgerOf(server, parent.organisationId)).filter((r) => r.transfer_id === t.transferId);
    const inn = (await ledgerOf(server, child!.organisationId)).filter((r) => r.transfer_id === t.transferId);
    assert.deepEqual(
      out.map((r) => [r.kind, r.amount, r.balance_after, r.reference]),
      [['TRANSFER_OUT', -7_654_321, 12_345_679, 'budget-Q3']],
    );
    assert.deepEqual(
      inn.map((r) => [r.kind, r.amount, r.balance_after]),
      [['TRANSFER_IN', 7_654_321, 7_654_321]],
    );

    const fromSource = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers/${t.transferId}`, { key: parent.key });
    assert.equal(fromSource.status, 200);
    assert.deepEqual(fromSource.body, t);
    const fromDestination = await request(server, 'GET', `/commons/v1/organisations/${child!.organisationId}/transfers/${t.transferId}`, { key: child!.key });
    assert.equal(fromDestination.body.type, 'CREDIT');
    assert.equal(fromDestination.body.href, `${server.url}/commons/v1/organisations/${child!.organisationId}/transfers/${t.transferId}`);
    const viaParent = await request(server, 'GET', `/commons/v1/organisations/${child!.organisationId}/transfers/${t.transferId}`, { key: parent.key });
    assert.equal(viaParent.body.type, 'CREDIT', 'the type is seen from the organisation of the path');

    const childView = await request(server, 'GET', `/commons/v1/organisations/${child!.organisationId}`, { key: child!.key });
    assert.deepEqual(childView.body.balance, { amount: 7.654321, currency: 'EUR', parentBilling: false });
    assert.equal(childView.body.parentOrganisationId, parent.organisationId);
  });

  test('sub-organisation to parent: by an ADMIN key of the parent or of the sub-organisation', async () => {
    const {
      parent,
      children: [child],
    } = await family(server, 1, 0, 10);
    const byParent = await transfer(server, parent.key, child!.organisationId, parent.organisationId, 2.5);
    assert.equal(byParent.status, 201, byParent.text);
    assert.equal(byParent.body.type, 'DEBIT');
    assert.equal(byParent.body.organisationSource.organisationId, child!.organisationId);
    const byChild = await transfer(server, child!.key, child!.organisationId, parent.organisationId, '1.000001');
    assert.equal(byChild.status, 201, byChild.text);
    assert.equal(byChild.body.organisationDestination.name, 'Parent');
    assert.equal(await balanceOf(server, child!.organisationId), 10_000_000 - 3_500_001);
    assert.equal(await balanceOf(server, parent.organisationId), 3_500_001);
  });

  test('lists: newest first, paginated, filtered by date and by side', async () => {
    const {
      parent,
      children: [a, b],
    } = await family(server, 2, 50);
    const ids: string[] = [];
    for (const [dest, amount] of [
      [a, 1],
      [b, 2],
      [a, 3],
    ] as const) {
      const r = await transfer(server, parent.key, parent.organisationId, dest!.organisationId, amount);
      ids.push(r.body.transferId);
    }
    const back = await transfer(server, parent.key, a!.organisationId, parent.organisationId, 0.5);
    ids.push(back.body.transferId);

    const all = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers`, { key: parent.key });
    assert.equal(all.status, 200);
    assert.deepEqual([all.body.page, all.body.pageSize], [1, 10]);
    assert.deepEqual(
      all.body.items.map((t: any) => t.transferId),
      [...ids].reverse(),
    );
    assert.deepEqual(
      all.body.items.map((t: any) => t.type),
      ['CREDIT', 'DEBIT', 'DEBIT', 'DEBIT'],
    );

    const page2 = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?page=2&pageSize=3`, { key: parent.key });
    assert.deepEqual(
      page2.body.items.map((t: any) => t.transferId),
      [ids[0]],
    );
    const debits = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?searchBy[type]=DEBIT`, { key: parent.key });
    assert.equal(debits.body.items.length, 3);
    const ofA = await request(server, 'GET', `/commons/v1/organisations/${a!.organisationId}/transfers`, { key: a!.key });
    assert.deepEqual(
      ofA.body.items.map((t: any) => [t.type, t.amount]),
      [
        ['DEBIT', 0.5],
        ['CREDIT', 3],
        ['CREDIT', 1],
      ],
    );

    const today = new Date().toISOString().slice(0, 10);
    const inDay = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?startDate=${today}&endDate=${today}`, {
      key: parent.key,
    });
    assert.equal(inDay.body.items.length, 4);
    const old = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?endDate=2020-01-01`, { key: parent.key });
    assert.deepEqual(old.body.items, []);
    const future = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?startDate=2999-01-01T00:00:00`, {
      key: parent.key,
    });
    assert.deepEqual(future.body.items, []);
    const withOffset = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString().replace('Z', '+00:00'));
    const recent = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?startDate=${withOffset}`, { key: parent.key });
    assert.equal(recent.body.items.length, 4);

    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?startDate=yesterday`, { key: parent.key }),
      400,
      '400.007',
      /startDate/,
    );
    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?startDate=2024-05-02&endDate=2024-05-01`, { key: parent.key }),
      400,
      '400.007',
      /after endDate/,
    );
    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers?pageSize=101`, { key: parent.key }),
      400,
      '400.001',
      /pageSize/,
    );
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers/${ids[0]}`, { key: b!.key }), 404, '404.001');
    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${b!.organisationId}/transfers/${ids[0]}`, { key: parent.key }),
      404,
      '404.001',
      /transfer/,
    );
  });

  test('403: wrong role, not a parent-child pair, or not the right ADMIN; nothing moves', async () => {
    const {
      parent,
      children: [a, b],
    } = await family(server, 2, 10, 10);
    const grandchild = await createTenant(server, { name: 'Grandchild', parentOrganisationId: a!.organisationId, balance: 10 });
    const managerKey = await request(server, 'POST', `/admin/v1/channels/${parent.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'manager', roles: ['MANAGER'] },
    });
    const manager = managerKey.body.value as string;
    const before = await transferCount(server);

    assertError(await transfer(server, manager, parent.organisationId, a!.organisationId, 1), 403, '403.001', /MANAGER may not perform funds:transfer/);
    assertError(await transfer(server, parent.key, a!.organisationId, b!.organisationId, 1), 403, '403.003', /own sub-organisations/);
    assertError(await transfer(server, parent.key, parent.organisationId, grandchild.organisationId, 1), 403, '403.003', /own sub-organisations/);
    assertError(await transfer(server, parent.key, a!.organisationId, grandchild.organisationId, 1), 403, '403.003', /parent organisation/);
    assertError(await transfer(server, parent.key, parent.organisationId, parent.organisationId, 1), 403, '403.003', /same organisation/);
    assertError(await transfer(server, a!.key, parent.organisationId, a!.organisationId, 1), 403, '403.003', /parent organisation/);
    assertError(await transfer(server, grandchild.key, a!.organisationId, grandchild.organisationId, 1), 403, '403.003', /parent organisation/);
    assertError(await transfer(server, grandchild.key, parent.organisationId, grandchild.organisationId, 1), 404, '404.001', /source/);

    assert.equal(await transferCount(server), before);
    for (const t of [parent, a!, b!, grandchild]) assert.equal(await balanceOf(server, t.organisationId), 10_000_000);
  });

  test('404: unknown organisations and organisations outside the caller tree look the same', async () => {
    const {
      parent,
      children: [a],
    } = await family(server, 1, 10);
    const stranger = await createTenant(server, { name: 'Stranger', balance: 10 });
    const unknown = randomUUID();

    const unknownDest = await transfer(server, parent.key, parent.organisationId, unknown, 1);
    assertError(unknownDest, 404, '404.001', new RegExp(`destination organisation ${unknown} not found`));
    const foreignDest = await transfer(server, parent.key, parent.organisationId, stranger.organisationId, 1);
    assertError(foreignDest, 404, '404.001', new RegExp(`destination organisation ${stranger.organisationId} not found`));
    assert.equal(foreignDest.body.message, unknownDest.body.message);

    assertError(await transfer(server, parent.key, unknown, a!.organisationId, 1), 404, '404.001', /source organisation/);
    assertError(await transfer(server, parent.key, stranger.organisationId, parent.organisationId, 1), 404, '404.001', /source organisation/);
    assertError(await transfer(server, a!.key, a!.organisationId, stranger.organisationId, 1), 404, '404.001', /destination/);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${stranger.organisationId}/transfers`, { key: parent.key }), 404, '404.001');
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers`, { key: a!.key }), 404, '404.001');
    assert.equal(await balanceOf(server, stranger.organisationId), 10_000_000);
  });

  test('400: amounts must be positive decimal euros with at most 6 decimals', async () => {
    const {
      parent,
      children: [a],
    } = await family(server, 1, 10);
    const cases: Array<[unknown, string, RegExp]> = [
      [0, '400.006', /greater than zero/],
      ['0.000000', '400.006', /greater than zero/],
      [-1, '400.006', /positive/],
      ['-0.5', '400.006', /positive/],
      ['1.1234567', '400.006', /at most 6 decimals/],
      [0.0000001, '400.006', /decimal number/],
      [12.1234567, '400.006', /at most 6 decimals/],
      [null, '400.006', /decimal number/],
      [true, '400.006', /decimal number/],
      [{ value: 1 }, '400.001', /body\.amount/],
      ['ten', '400.006', /decimal number/],
      ['1e3', '400.006', /decimal number/],
      [' ', '400.006', /decimal number/],
      ['  1', '400.006', /decimal number/],
      ['1 ', '400.006', /decimal number/],
      ['\t1', '400.006', /decimal number/],
      ['+1', '400.006', /decimal number/],
      ['1,5', '400.006', /decimal number/],
      ['1.', '400.006', /decimal number/],
      ['.5', '400.006', /decimal number/],
      ['0x10', '400.006', /decimal number/],
      ['Infinity', '400.006', /decimal number/],
      ['1000000000.000001', '400.006', /at most 1000000000/],
    ];
    for (const [amount, code, detail] of cases) {
      assertError(await transfer(server, parent.key, parent.organisationId, a!.organisationId, amount), 400, code, detail);
    }
    assertError(
      await request(server, 'POST', `/commons/v1/organisations/${parent.organisationId}/transfers`, {
        key: parent.key,
        body: { organisationDestination: { organisationId: a!.organisationId } },
      }),
      400,
      '400.001',
      /body\.amount: is required/,
    );
    assertError(
      await request(server, 'POST', `/commons/v1/organisations/${parent.organisationId}/transfers`, { key: parent.key, body: { amount: 1 } }),
      400,
      '400.001',
      /body\.organisationDestination: is required/,
    );
    assertError(await transfer(server, parent.key, parent.organisationId, 'not-a-uuid', 1), 400, '400.001', /organisationDestination\.organisationId/);
    assertError(
      await transfer(server, parent.key, parent.organisationId, a!.organisationId, 1, { reference: 'r'.repeat(141) }),
      400,
      '400.001',
      /body\.reference/,
    );
    assertError(
      await transfer(server, parent.key, parent.organisationId, a!.organisationId, 1, {}, { 'Idempotency-Key': 'k'.repeat(256) }),
      400,
      '400.001',
      /idempotency-key/i,
    );
    assert.equal(await balanceOf(server, parent.organisationId), 10_000_000);
    const ok = await transfer(server, parent.key, parent.organisationId, a!.organisationId, 0.000001);
    assert.equal(ok.status, 201);
    assert.equal(ok.body.amount, 0.000001);
  });

  test('the source is the path: a body naming another source is a 400 and nothing moves; naming the path is accepted', async () => {
    // P with two sub-organisations X and C: a request "X → C" sent to P's path must not move P's funds.
    const {
      parent: p,
      children: [x, c],
    } = await family(server, 2, 10, 5);
    const before = await transferCount(server);
    for (const source of [x!.organisationId, c!.organisationId, randomUUID()]) {
      assertError(
        await transfer(server, p.key, p.organisationId, c!.organisationId, 1, { organisationSource: { organisationId: source } }),
        400,
        '400.001',
        /body\.organisationSource\.organisationId: must be the organisation of the path/,
      );
    }
    assertError(
      await transfer(server, p.key, p.organisationId, c!.organisationId, 1, { organisationSource: { organisationId: 'not-a-uuid' } }),
      400,
      '400.001',
      /organisationSource\.organisationId/,
    );
    assert.deepEqual(
      [await balanceOf(server, p.organisationId), await balanceOf(server, x!.organisationId), await balanceOf(server, c!.organisationId)],
      [10_000_000, 5_000_000, 5_000_000],
      'nothing moved',
    );
    assert.equal(await transferCount(server), before);
    // As a transfer record names it (its own source), or without it: the path's organisation is the source.
    const named = await transfer(server, p.key, p.organisationId, c!.organisationId, '1.5', {
      organisationSource: { organisationId: p.organisationId.toUpperCase() },
    });
    assert.equal(named.status, 201, named.text);
    assert.equal(named.body.organisationSource.organisationId, p.organisationId);
    const plain = await transfer(server, x!.key, x!.organisationId, p.organisationId, 2);
    assert.equal(plain.status, 201, plain.text);
    assert.deepEqual(
      [await balanceOf(server, p.organisationId), await balanceOf(server, x!.organisationId), await balanceOf(server, c!.organisationId)],
      [10_500_000, 3_000_000, 6_500_000],
    );
  });

  test('insufficient funds: 409.002, nothing written, the balance stays', async () => {
    const {
      parent,
      children: [a],
    } = await family(server, 1, 5);
    const before = await transferCount(server);
    const ledgerBefore = (await ledgerOf(server, parent.organisationId)).length;
    assertError(
      await transfer(server, parent.key, parent.organisationId, a!.organisationId, '5.000001'),
      409,
      '409.002',
      new RegExp(`organisation ${parent.organisationId} is lower than 5.000001 EUR`),
    );
    assertError(await transfer(server, parent.key, a!.organisationId, parent.organisationId, 1), 409, '409.002');
    assert.equal(await transferCount(server), before);
    assert.equal((await ledgerOf(server, parent.organisationId)).length, ledgerBefore);
    assert.equal((await ledgerOf(server, a!.organisationId)).length, 0);
    const all = await transfer(server, parent.key, parent.organisationId, a!.organisationId, 5);
    assert.equal(all.status, 201, 'the whole balance may be moved');
    assert.equal(await balanceOf(server, parent.organisationId), 0);
  });

  test('Idempotency-Key: a retry replays the answer, another body is 422, a key in progress is 409', async () => {
    const {
      parent,
      children: [a, b],
    } = await family(server, 2, 10);
    const headers = { 'Idempotency-Key': 'transfer-0001' };
    const first = await transfer(server, parent.key, parent.organisationId, a!.organisationId, 1.5, { reference: 'x' }, headers);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await transfer(server, parent.key, parent.organisationId, a!.organisationId, '1.500000', { reference: 'x' }, headers);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await balanceOf(server, parent.organisationId), 8_500_000, 'moved once');
    assert.equal((await ledgerOf(server, a!.organisationId)).length, 1);

    const otherAmount = await transfer(server, parent.key, parent.organisationId, a!.organisationId, 2, { reference: 'x' }, headers);
    assertError(otherAmount, 422, '422.001', /transfer-0001.*different request/);
    assertError(await transfer(server, parent.key, parent.organisationId, b!.organisationId, 1.5, { reference: 'x' }, headers), 422, '422.001');
    assertError(await transfer(server, parent.key, a!.organisationId, parent.organisationId, 1.5, { reference: 'x' }, headers), 422, '422.001');
    assert.equal(await balanceOf(server, parent.organisationId), 8_500_000);

    // Keys belong to the caller's organisation: the same key elsewhere is another request.
    const elsewhere = await family(server, 1, 10);
    const theirs = await transfer(
      server,
      elsewhere.parent.key,
      elsewhere.parent.organisationId,
      elsewhere.children[0]!.organisationId,
      1.5,
      { reference: 'x' },
      headers,
    );
    assert.equal(theirs.status, 201);
    assert.notEqual(theirs.body.transferId, first.body.transferId);

    // A request still being served holds its key.
    const busy = {
      callerOrganisationId: parent.organisationId,
      sourceId: parent.organisationId,
      destinationId: b!.organisationId,
      amount: 1_000_000,
      reference: null,
      description: null,
    };
    const claim = await claimIdempotencyKey(server.app.store.db, transferIdempotency(busy, 'transfer-0002'));
    assert.equal(claim.state, 'claimed');
    const inProgress = await transfer(server, parent.key, parent.organisationId, b!.organisationId, 1, {}, { 'Idempotency-Key': 'transfer-0002' });
    assertError(inProgress, 409, '409.003', /transfer-0002.*still being processed/);
    assertError(await transfer(server, parent.key, parent.organisationId, b!.organisationId, 2, {}, { 'Idempotency-Key': 'transfer-0002' }), 422, '422.001');
    assert.equal((await ledgerOf(server, b!.organisationId)).length, 0);
  });

  test('Idempotency-Key: a failed attempt releases the key; concurrent retries move funds once', async () => {
    const {
      parent,
      children: [a],
    } = await family(server, 1, 1);
    const headers = { 'Idempotency-Key': 'retry-after-top-up' };
    assertError(await transfer(server, parent.key, parent.organisationId, a!.organisationId, 3, {}, headers), 409, '409.002');
    const credit = await request(server, 'POST', `/admin/v1/organisations/${parent.organisationId}/credit`, { key: server.adminKey, body: { amount: 5 } });
    assert.equal(credit.status, 201);
    const retried = await transfer(server, parent.key, parent.organisationId, a!.organisationId, 3, {}, headers);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(await balanceOf(server, a!.organisationId), 3_000_000);

    const burst = await Promise.all(
      Array.from({ length: 20 }, () => transfer(server, parent.key, parent.organisationId, a!.organisationId, 0.25, {}, { 'Idempotency-Key': 'burst' })),
    );
    const created = burst.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.body.transferId)).size, 1, 'every 201 is the same transfer');
    for (const r of burst.filter((x) => x.status !== 201)) assertError(r, 409, '409.003');
    assert.equal(await balanceOf(server, a!.organisationId), 3_250_000, 'moved once');
  });

  test('stress: 2,000 concurrent transfers and sends conserve funds, never go negative, ledger = balance', async () => {
    const { parent, children } = await family(server, 3, 40, 10);
    const orgs = [parent, ...children];
    const initial = 40_000_000 + 3 * 10_000_000;

    let seed = 42;
    const random = () => {
      // mulberry32: a small seeded generator, so a failure can be replayed
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const jobs: Array<() => Promise<{ status: number; body: any; kind: string }>> = [];
    for (let i = 0; i < 2000; i++) {
      const child = children[Math.floor(random() * 3)]!;
      const down = random() < 0.5;
      const amount = (1 + Math.floor(random() * 6_000_000)) / 1e6;
      const key = down || random() < 0.5 ? parent.key : child.key;
      const [src, dst] = down ? [parent, child] : [child, parent];
      jobs.push(async () => ({ ...(await transfer(server, key, src.organisationId, dst.organisationId, amount)), kind: 'transfer' }));
      if (i % 10 === 0) {
        const sender = orgs[Math.floor(random() * 4)]!;
        const to = random() < 0.2 ? '33612340001' : '33612345678'; // 0001: UNDELIVERED, still charged
        jobs.push(async () => ({
          ...(await request(server, 'POST', '/sms/v1/messages', { key: sender.key, body: { recipient: { to }, body: { text: `stress ${i}` } } })),
          kind: 'send',
        }));
      }
    }
    const results: Array<{ status: number; body: any; kind: string }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          results.push(await job());
        }
      }),
    );

    const transfers = results.filter((r) => r.kind === 'transfer');
    const created = transfers.filter((r) => r.status === 201);
    for (const r of transfers) {
      if (r.status !== 201) assertError(r, 409, '409.002');
    }
    assert.ok(created.length > 1000, `${created.length} transfers went through`);
    for (const r of results.filter((x) => x.kind === 'send')) assert.equal(r.status, 201, JSON.stringify(r.body));

    const db = server.app.store.db;
    await eventually(
      async () => {
        const pending = await db.selectFrom('messages').select('id').where('status', 'in', ['ENROUTE', 'SCHEDULED']).execute();
        return pending.length === 0 ? true : undefined;
      },
      30_000,
      'every send to reach its final status',
    );

    const ids = orgs.map((o) => o.organisationId);
    let total = 0;
    let chargesAndRefunds = 0;
    for (const id of ids) {
      const balance = await balanceOf(server, id);
      const ledger = await ledgerOf(server, id);
      assert.ok(balance >= 0, `balance of ${id} is ${balance}`);
      assert.equal(
        ledger.reduce((s, r) => s + r.amount, 0),
        balance,
        'the balance equals the sum of its ledger',
      );
      const lowest = Math.min(...ledger.map((r) => r.balance_after));
      assert.ok(lowest >= 0, `no balance was ever negative (lowest ${lowest})`);
      let running = 0;
      for (const r of ledger) {
        running += r.amount;
        if (r.kind.startsWith('TRANSFER')) assert.equal(r.balance_after, running, 'running balance of each transfer row');
      }
      chargesAndRefunds += ledger.filter((r) => r.kind === 'CHARGE' || r.kind === 'REFUND').reduce((s, r) => s + r.amount, 0);
      total += balance;
    }
    assert.equal(total, initial + chargesAndRefunds, 'funds are conserved to the micro-euro');
    assert.ok(chargesAndRefunds < 0, 'the sends charged the same balances');

    const rows = await db.selectFrom('transfers').selectAll().where('source_id', 'in', ids).execute();
    assert.equal(rows.length, created.length);
    const legs = await db
      .selectFrom('ledger')
      .select(['transfer_id', 'organisation_id', 'amount', 'kind'])
      .where('transfer_id', 'is not', null)
      .where('organisation_id', 'in', ids)
      .execute();
    assert.equal(legs.length, 2 * created.length, 'two ledger rows per transfer');
    const byTransfer = new Map<string, typeof legs>();
    for (const l of legs) byTransfer.set(l.transfer_id!, [...(byTransfer.get(l.transfer_id!) ?? []), l]);
    for (const t of rows) {
      const [out, inn] = [...byTransfer.get(t.id)!].sort((x, y) => Number(x.amount) - Number(y.amount));
      assert.deepEqual([out!.organisation_id, Number(out!.amount), out!.kind], [t.source_id, -Number(t.amount), 'TRANSFER_OUT']);
      assert.deepEqual([inn!.organisation_id, Number(inn!.amount), inn!.kind], [t.destination_id, Number(t.amount), 'TRANSFER_IN']);
    }
  });
});
