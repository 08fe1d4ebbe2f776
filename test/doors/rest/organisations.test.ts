import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

/** A second key on a tenant's channel, with other roles. */
async function keyWithRoles(server: TestServer, t: Tenant, roles: string[]): Promise<string> {
  const r = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/credentials`, {
    key: server.adminKey,
    body: { name: roles.join('+'), roles },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.value;
}

forEachDialect('organisations', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  test('an ADMIN key creates sub-organisations and lists its tree; other roles see their own organisation', async () => {
    const root = await createTenant(server, { name: 'Root', balance: 3 });
    const created = await request(server, 'POST', '/commons/v1/organisations', {
      key: root.key,
      body: { name: 'Branch A', parentBilling: true, monthlyConsumptionLimit: '12.5' },
    });
    assert.equal(created.status, 201, created.text);
    const a = created.body;
    assert.deepEqual(
      { ...a, organisationId: undefined, creationDate: undefined },
      {
        organisationId: undefined,
        name: 'Branch A',
        parentOrganisationId: root.organisationId,
        balance: { amount: 0, currency: 'EUR', parentBilling: true },
        monthlyConsumption: 0,
        monthlyConsumptionLimit: 12.5,
        state: 'ACTIVE',
        timeZone: 'Europe/Paris',
        optOut: { shortCode: '36111', text: 'STOP au 36111', custom: false },
        creationDate: undefined,
        href: `${server.url}/commons/v1/organisations/${a.organisationId}`,
      },
    );
    const b = await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: 'Branch B' } });
    assert.equal(b.body.balance.parentBilling, false);
    const grandchild = await request(server, 'POST', '/commons/v1/organisations', {
      key: root.key,
      body: { name: 'Branch A.1', parentOrganisationId: a.organisationId },
    });
    assert.equal(grandchild.status, 201, grandchild.text);
    assert.equal(grandchild.body.parentOrganisationId, a.organisationId);

    const tree = await request(server, 'GET', '/commons/v1/organisations', { key: root.key });
    assert.equal(tree.status, 200);
    assert.deepEqual([tree.body.page, tree.body.pageSize], [1, 10]);
    assert.deepEqual(
      tree.body.items.map((o: any) => o.name),
      ['Root', 'Branch A', 'Branch B', 'Branch A.1'],
    );
    assert.deepEqual(tree.body.items[0].balance, { amount: 3, currency: 'EUR', parentBilling: false });
    const page2 = await request(server, 'GET', '/commons/v1/organisations?page=2&pageSize=3', { key: root.key });
    assert.deepEqual(
      page2.body.items.map((o: any) => o.name),
      ['Branch A.1'],
    );

    const read = await request(server, 'GET', `/commons/v1/organisations/${grandchild.body.organisationId}`, { key: root.key });
    assert.equal(read.status, 200);
    assert.equal(read.body.name, 'Branch A.1');

    const manager = await keyWithRoles(server, root, ['MANAGER']);
    const own = await request(server, 'GET', '/commons/v1/organisations', { key: manager });
    assert.deepEqual(
      own.body.items.map((o: any) => o.organisationId),
      [root.organisationId],
    );
    assertError(await request(server, 'GET', `/commons/v1/organisations/${a.organisationId}`, { key: manager }), 404, '404.001');
    assertError(await request(server, 'POST', '/commons/v1/organisations', { key: manager, body: { name: 'Nope' } }), 403, '403.001', /organisation:admin/);
    const user = await keyWithRoles(server, root, ['USER']);
    assertError(await request(server, 'GET', '/commons/v1/organisations', { key: user }), 403, '403.001');
    assertError(await request(server, 'GET', '/commons/v1/organisations'), 401, '401.001');
  });

  test('creation is refused outside the caller tree and for bad input', async () => {
    const root = await createTenant(server, { name: 'Root 2' });
    const stranger = await createTenant(server, { name: 'Stranger' });
    assertError(
      await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: 'x', parentOrganisationId: stranger.organisationId } }),
      404,
      '404.001',
      new RegExp(stranger.organisationId),
    );
    assertError(
      await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: 'x', parentOrganisationId: randomUUID() } }),
      404,
      '404.001',
    );
    const sub = await createTenant(server, { name: 'Sub', parentOrganisationId: root.organisationId });
    assertError(
      await request(server, 'POST', '/commons/v1/organisations', { key: sub.key, body: { name: 'x', parentOrganisationId: root.organisationId } }),
      404,
      '404.001',
      /not found/,
    );
    assertError(await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: {} }), 400, '400.001', /body\.name: is required/);
    assertError(await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: '' } }), 400, '400.001', /body\.name/);
    assertError(
      await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: 'x', parentOrganisationId: 'root' } }),
      400,
      '400.001',
      /parentOrganisationId/,
    );
    assertError(
      await request(server, 'POST', '/commons/v1/organisations', { key: root.key, body: { name: 'x', monthlyConsumptionLimit: '1.1234567' } }),
      400,
      '400.006',
      /monthlyConsumptionLimit: must have at most 6 decimals/,
    );
    const list = await request(server, 'GET', '/commons/v1/organisations', { key: root.key });
    assert.deepEqual(
      list.body.items.map((o: any) => o.name),
      ['Root 2', 'Sub'],
      'nothing was created',
    );
  });

  test('the organisation: balance, parent, monthly consumption from the rollups, state', async () => {
    const parent = await createTenant(server, { name: 'Parent', balance: 10 });
    const child = await createTenant(server, { name: 'Child', parentOrganisationId: parent.organisationId, balance: 2 });
    for (const to of ['33612345678', '33612345679']) {
      const sent = await request(server, 'POST', '/sms/v1/messages', { key: child.key, body: { recipient: { to }, body: { text: 'hello' } } });
      assert.equal(sent.status, 201, sent.text);
    }
    const view = await request(server, 'GET', `/commons/v1/organisations/${child.organisationId}`, { key: child.key });
    assert.equal(view.status, 200);
    assert.equal(view.body.parentOrganisationId, parent.organisationId);
    assert.equal(view.body.monthlyConsumption, 0.09);
    assert.deepEqual(view.body.balance, { amount: 1.91, currency: 'EUR', parentBilling: false });
    assert.equal(view.body.state, 'ACTIVE');
    assert.equal('monthlyConsumptionLimit' in view.body, false, 'no limit: absent');
    const fromParent = await request(server, 'GET', `/commons/v1/organisations/${child.organisationId}`, { key: parent.key });
    assert.deepEqual(fromParent.body, view.body);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}`, { key: child.key }), 404, '404.001');
    assertError(await request(server, 'GET', '/commons/v1/organisations/not-an-id', { key: child.key }), 400, '400.001', /path\.id/);

    const suspended = await request(server, 'PATCH', `/admin/v1/organisations/${child.organisationId}`, {
      key: server.adminKey,
      body: { state: 'SUSPENDED', monthlyConsumptionLimit: 50 },
    });
    assert.equal(suspended.status, 200);
    const after = await request(server, 'GET', `/commons/v1/organisations/${child.organisationId}`, { key: parent.key });
    assert.equal(after.body.state, 'SUSPENDED');
    assert.equal(after.body.monthlyConsumptionLimit, 50);
  });

  test('ledger: every balance change with the running balance, newest first, paginated and filtered', async () => {
    const parent = await createTenant(server, { name: 'Ledger parent', balance: 5 });
    const child = await createTenant(server, { name: 'Ledger child', parentOrganisationId: parent.organisationId });
    const credit = await request(server, 'POST', `/admin/v1/organisations/${parent.organisationId}/credit`, {
      key: server.adminKey,
      body: { amount: '2.5', reference: 'invoice 7' },
    });
    assert.equal(credit.status, 201);
    const t = await request(server, 'POST', `/commons/v1/organisations/${parent.organisationId}/transfers`, {
      key: parent.key,
      body: { organisationDestination: { organisationId: child.organisationId }, amount: 1.25, reference: 'budget' },
    });
    assert.equal(t.status, 201, t.text);
    const sent = await request(server, 'POST', '/sms/v1/messages', {
      key: parent.key,
      body: { recipient: { to: '33612340002' }, body: { text: 'rejected upstream, refunded' } },
    });
    assert.equal(sent.status, 201);
    await eventually(async () => {
      const r = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger`, { key: parent.key });
      return r.body.items.some((e: any) => e.kind === 'REFUND') ? true : undefined;
    });

    const ledger = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger`, { key: parent.key });
    assert.equal(ledger.status, 200);
    const rows = ledger.body.items;
    assert.deepEqual(
      rows.map((e: any) => [e.kind, e.amount, e.balance]),
      [
        ['REFUND', 0.045, 6.25],
        ['CHARGE', -0.045, 6.205],
        ['TRANSFER_OUT', -1.25, 6.25],
        ['TOPUP', 2.5, 7.5],
        ['TOPUP', 5, 5],
      ],
    );
    for (let i = 0; i + 1 < rows.length; i++) {
      assert.equal(Math.round((rows[i + 1].balance + rows[i].amount) * 1e6), Math.round(rows[i].balance * 1e6), 'running balance');
    }
    const transferRow = rows[2];
    assert.equal(transferRow.transferId, t.body.transferId);
    assert.equal(transferRow.reference, 'budget');
    assert.equal(transferRow.organisationId, parent.organisationId);
    assert.equal(transferRow.currency, 'EUR');
    assert.equal(rows[1].messageId, sent.body.messageId);
    assert.equal(rows[3].reference, 'invoice 7');
    assert.match(rows[0].creationDate, /Z$/);

    const org = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}`, { key: parent.key });
    assert.equal(org.body.balance.amount, rows[0].balance, 'the newest running balance is the balance');

    const page2 = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?page=2&pageSize=2`, { key: parent.key });
    assert.deepEqual(
      page2.body.items.map((e: any) => e.entryId),
      [rows[2].entryId, rows[3].entryId],
    );
    const childLedger = await request(server, 'GET', `/commons/v1/organisations/${child.organisationId}/ledger`, { key: parent.key });
    assert.deepEqual(
      childLedger.body.items.map((e: any) => [e.kind, e.amount, e.balance]),
      [['TRANSFER_IN', 1.25, 1.25]],
    );

    const today = new Date().toISOString().slice(0, 10);
    const sameDay = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?startDate=${today}&endDate=${today}`, {
      key: parent.key,
    });
    assert.equal(sameDay.body.items.length, 5);
    const before = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?endDate=2020-12-31`, { key: parent.key });
    assert.deepEqual(before.body.items, []);
    const exact = encodeURIComponent(rows[2].creationDate);
    const upToTransfer = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?endDate=${exact}`, { key: parent.key });
    assert.ok(
      upToTransfer.body.items.some((e: any) => e.entryId === rows[2].entryId),
      'endDate is inclusive',
    );

    assertError(
      await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?startDate=2024-13-01`, { key: parent.key }),
      400,
      '400.007',
      /startDate/,
    );
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger?pageSize=0`, { key: parent.key }), 400, '400.001');
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger`, { key: child.key }), 404, '404.001');
    const user = await keyWithRoles(server, parent, ['USER']);
    assertError(await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/ledger`, { key: user }), 403, '403.001');
  });
});
