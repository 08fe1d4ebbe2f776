import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type smpp from 'smpp';
import { encodeGsm7 } from '../../../src/domain/text.ts';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { createTenant, request, startTestServer, type TestServer } from '../../support/server.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { eventually } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

/** How soon a change made on one node must be in force on the other, from the change's answer. */
const IN_FORCE_MS = 1_000;

describe('settings across a cluster [postgres]', { skip }, () => {
  let first: TestServer;
  let second: TestServer;
  const sessions: smpp.Session[] = [];

  before(async () => {
    first = await startTestServer('postgres');
    second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
  });

  after(async () => {
    for (const s of sessions) s.close();
    await second?.stop();
    await first?.stop();
  });

  const admin = (method: string, path: string, body?: unknown) => request(first, method, path, { key: first.adminKey, body });
  const sendOn = (node: TestServer, key: string, to = '33612345678') =>
    request(node, 'POST', '/sms/v1/messages', { key, body: { recipient: { to }, body: { text: 'Settings' } } });
  const inForce = <T>(check: () => Promise<T | undefined | false>, what: string) => eventually(check, IN_FORCE_MS, `${what} on the other node`);
  const bind = async (node: TestServer, systemId: string, password: string) => {
    const s = await packageClient(node.smppPort);
    sessions.push(s);
    return { session: s, status: (await call(s, 'bind_transmitter', { system_id: systemId, password })).command_status as number };
  };

  test('a channel change: the other node sends with the new default sender', async () => {
    const t = await createTenant(first, { balance: 10, channel: { defaultFromField: 'BEFORE' } });
    const warm = await sendOn(second, t.key);
    assert.equal(warm.status, 201, warm.text);
    assert.equal(warm.body.from, 'BEFORE');
    const patch = await admin('PATCH', `/admin/v1/channels/${t.channelId}`, { defaultFromField: 'AFTER' });
    assert.equal(patch.status, 200, patch.text);
    await inForce(async () => (await sendOn(second, t.key)).body.from === 'AFTER', 'the new default sender');
  });

  test('an API key revoked on one node is refused by the other; one created works there', async () => {
    const t = await createTenant(first, { balance: 10 });
    assert.equal((await request(second, 'GET', '/sms/v1/messages', { key: t.key })).status, 200);
    const revoked = await admin('DELETE', `/admin/v1/credentials/${t.credentialId}`);
    assert.equal(revoked.status, 200, revoked.text);
    await inForce(async () => (await request(second, 'GET', '/sms/v1/messages', { key: t.key })).status === 401, 'the revoked key refused');

    const created = await admin('POST', `/admin/v1/channels/${t.channelId}/credentials`, { name: 'Another', roles: ['ADMIN'] });
    assert.equal(created.status, 201, created.text);
    await inForce(async () => (await request(second, 'GET', '/sms/v1/messages', { key: created.body.value })).status === 200, 'the new key accepted');
  });

  test('an SMPP password changed on one node: the other binds with the new one only; a credential removed stops submits there', async () => {
    const t = await createTenant(first, { balance: 10 });
    const created = await admin('POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, { systemId: 'rotating', password: 'old-pw' });
    assert.equal(created.status, 201, created.text);
    const id = created.body.smppCredentialId as string;
    assert.equal((await bind(second, 'rotating', 'old-pw')).status, 0);

    const changed = await admin('PATCH', `/admin/v1/smpp-credentials/${id}`, { password: 'new-pw' });
    assert.equal(changed.status, 200, changed.text);
    const bound = await inForce(async () => {
      const b = await bind(second, 'rotating', 'new-pw');
      return b.status === 0 ? b.session : undefined;
    }, 'the new password accepted');
    assert.equal((await bind(second, 'rotating', 'old-pw')).status, SmppStatus.ESME_RINVPASWD, 'the old password refused');

    const submit = (n: number) =>
      call(bound, 'submit_sm', { destination_addr: `3361234${String(n).padStart(4, '0')}`, short_message: encodeGsm7(`smpp ${n}`) });
    assert.equal((await submit(0)).command_status, 0);
    const removed = await admin('DELETE', `/admin/v1/smpp-credentials/${id}`);
    assert.equal(removed.status, 200, removed.text);
    let n = 1;
    await inForce(async () => (await submit(n++)).command_status === SmppStatus.ESME_RINVBNDSTS, 'submits of the removed credential refused');
  });

  test('a rate limit lowered on one node is enforced by the other', async () => {
    const t = await createTenant(first, { balance: 10 });
    const read = () => request(second, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal((await read()).status, 200);
    const put = await admin('PUT', `/admin/v1/organisations/${t.organisationId}/rate-limits`, { read: { perKey: 1, perOrganisation: 1 } });
    assert.equal(put.status, 200, put.text);
    await inForce(async () => {
      const statuses = [(await read()).status, (await read()).status];
      return statuses.includes(429);
    }, 'the lower limit');
  });

  test("an organisation's default country set on one node: the other reads national numbers in it", async () => {
    const t = await createTenant(first, { balance: 10 });
    assert.equal((await sendOn(second, t.key, '0612345678')).status, 400, 'no default country: a national number is refused');
    const patch = await admin('PATCH', `/admin/v1/organisations/${t.organisationId}`, { defaultCountry: 'FR' });
    assert.equal(patch.status, 200, patch.text);
    await inForce(async () => (await sendOn(second, t.key, '0612345678')).status === 201, 'the default country');
  });

  test('a sender decided on one node: the other refuses or sends by the new decision', async () => {
    const t = await createTenant(first, { balance: 10 });
    const made = await admin('POST', `/admin/v1/organisations/${t.organisationId}/senders`, { value: 'CLUSTER', countries: ['FR'], status: 'APPROVED' });
    assert.equal(made.status, 201, made.text);
    const fromCluster = (node: TestServer, to = '33612345678') =>
      request(node, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text: 'Settings' }, from: 'CLUSTER' } });
    assert.equal((await fromCluster(second)).status, 201, 'read and cached by the other node');
    await admin('PATCH', `/admin/v1/organisations/${t.organisationId}/senders/${made.body.senderId}`, { status: 'REJECTED' });
    await inForce(async () => (await fromCluster(second)).status === 400, 'the rejected sender refused');
    await admin('PATCH', `/admin/v1/organisations/${t.organisationId}/senders/${made.body.senderId}`, { status: 'APPROVED', countries: ['GB'] });
    await inForce(async () => (await fromCluster(second, '447400123456')).status === 201, 'the sender approved for GB');
  });

  test("an organisation's opt-out short code set on one node: the other appends the new mention", async () => {
    const t = await createTenant(first, { balance: 10, flow: 'MARKETING' });
    assert.match((await sendOn(second, t.key)).body.body.text, /\nSTOP au 36111$/);
    await admin('PATCH', `/admin/v1/organisations/${t.organisationId}`, { optOutShortCode: '38555' });
    await inForce(async () => ((await sendOn(second, t.key)).body.body.text as string).endsWith('\nSTOP au 38555'), 'the new mention');
  });

  test('a route created on one node: the other routes by it', async () => {
    const ask = async () => {
      const r = await request(second, 'POST', '/admin/v1/routes/test', { key: second.adminKey, body: { to: '447911123456' } });
      assert.equal(r.status, 200, r.text);
      return r.body.route as string;
    };
    assert.notEqual(await ask(), 'uk-mobiles');
    const created = await admin('POST', '/admin/v1/routes', {
      name: 'uk-mobiles',
      priority: 1,
      match: { prefix: '4479' },
      connectors: [{ connector: 'simulator' }],
    });
    assert.equal(created.status, 201, created.text);
    await inForce(async () => (await ask()) === 'uk-mobiles', 'the new route');
  });

  test('a node that lost its listening connection listens again and drops what it may have missed', async () => {
    const t = await createTenant(first, { balance: 10, channel: { defaultFromField: 'MISSED' } });
    const price = async () => {
      const r = await sendOn(second, t.key);
      assert.equal(r.status, 201, r.text);
      return r.body.price.amount as number;
    };
    const before = await price();
    const listener = `tern listener ${second.app.config.nodeId}`;
    const client = new pg.Client({ connectionString: process.env.TERN_TEST_DATABASE_URL });
    await client.connect();
    try {
      const killed = await client.query('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1', [listener]);
      assert.equal(killed.rowCount, 1, 'the other node listens on one connection');
      // Changed while the other node is not listening: its notification is lost.
      const newPrice = before === 0.5 ? 0.25 : 0.5;
      const put = await admin('PUT', '/admin/v1/prices', { items: [{ channelType: 'SMS', country: 'FR', amount: newPrice }] });
      assert.equal(put.status, 200, put.text);
      await eventually(async () => (await price()) === newPrice, 10_000, 'the price changed while the node was not listening');
      const listening = await client.query('select pid from pg_stat_activity where application_name = $1', [listener]);
      assert.equal(listening.rowCount, 1, 'listening again');
    } finally {
      await client.end();
    }
    // And it hears of changes again.
    const patch = await admin('PATCH', `/admin/v1/channels/${t.channelId}`, { defaultFromField: 'HEARD' });
    assert.equal(patch.status, 200, patch.text);
    await inForce(async () => (await sendOn(second, t.key)).body.from === 'HEARD', 'a change after listening again');
  });
});
