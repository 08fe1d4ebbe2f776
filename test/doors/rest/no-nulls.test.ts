import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { assertNoNulls } from '../../support/no-nulls.ts';
import { closedPort, type Receiver, startReceiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

/**
 * A field that is not set or not known is left out of every object Tern answers or sends, never written `null` (nor
 * `""` or 0 in its place): typed clients validate "a string, or absent". `request()` and the webhook receiver check
 * every answer and body for nulls; these tests reach every kind of object with its optional fields unset, and check
 * that those fields are absent rather than filled with something else.
 */
forEachDialect('no null in any JSON body', (dialect) => {
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

  const absent = (obj: Record<string, unknown>, fields: string[], what: string) => {
    for (const f of fields) assert.equal(f in obj, false, `${what}: ${f} is absent, not ${JSON.stringify(obj[f])}`);
  };

  test('SMS message object: send answer, GET, list, events, status and MO webhooks', async () => {
    const shortCode = String(30000 + Math.floor(Math.random() * 9999));
    const t = await createTenant(server, { balance: 1, channel: { fromFieldList: [shortCode] } });
    await request(server, 'PATCH', `/commons/v1/channels/${t.channelId}`, {
      key: t.key,
      body: { defaultCallbackUrlStatus: `${receiver.url}/status`, defaultCallbackUrlMo: `${receiver.url}/mo` },
    });
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'Hi' } } });
    assert.equal(sent.status, 201, sent.text);
    const optional = ['from', 'refClient', 'callbackUrlStatus', 'callbackUrlMo', 'campaignId', 'originMessageId'];
    absent(sent.body, optional, 'send answer');
    absent(sent.body.status, ['detail'], 'send answer status');
    // The status may have moved on meanwhile; the rest is the same object.
    const withoutStatus = ({ status: _status, ...rest }: Record<string, unknown>) => rest;
    const got = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: t.key });
    assert.deepEqual(withoutStatus(got.body), withoutStatus(sent.body));
    const list = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.deepEqual(list.body.items.map(withoutStatus), [withoutStatus(sent.body)]);
    const events = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}/events`, { key: t.key });
    absent(events.body.items[0], ['detail'], 'ENROUTE event');

    const hook = await eventually(
      () => receiver.requests.find((r) => r.url === '/status' && r.json?.messageId === sent.body.messageId && r.json.status.value === 'DELIVERED'),
      15_000,
      'the DELIVERED webhook',
    );
    absent(hook.json, optional, 'status webhook');
    absent(hook.json.status, ['detail'], 'status webhook status');
    assert.deepEqual(hook.json.status.lookup, { mccMnc: '20810', country: 'France', network: 'SFR' });

    await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33612345678', to: shortCode, text: 'Thanks' } });
    const mo = await eventually(() => receiver.requests.find((r) => r.url === '/mo' && r.json?.recipient?.to === shortCode), 15_000, 'the MO webhook');
    assert.equal(mo.json.direction, 'MO');
    assert.equal(mo.json.originMessageId, sent.body.messageId);
    absent(mo.json, ['status', 'price', 'refClient', 'callbackUrlStatus', 'callbackUrlMo'], 'MO webhook');
    const moList = await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key });
    assert.equal(moList.body.items.length, 1);
  });

  test('RCS message object with a fallback that has no sender, and conversations', async () => {
    const agent = `Agent${randomBytes(3).toString('hex')}`;
    const t = await createTenant(server, { type: 'RCS', balance: 1, channel: { defaultFromField: agent } });
    const sms = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
      key: server.adminKey,
      body: { name: 'Fallback', type: 'SMS', flow: 'TRANSACTIONAL' },
    });
    await request(server, 'PATCH', `/admin/v1/channels/${t.channelId}`, { key: server.adminKey, body: { fallbackSmsChannelId: sms.body.channelId } });
    const sent = await request(server, 'POST', '/rcs/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345678' }, body: { type: 'TEXT', text: 'Hi' }, fallback: { text: 'Hi by SMS' } },
    });
    assert.equal(sent.status, 201, sent.text);
    assert.deepEqual(sent.body.fallback, { text: 'Hi by SMS' }, 'the fallback without its unset sender');
    absent(sent.body, ['refClient', 'callbackUrlStatus', 'callbackUrlMo'], 'RCS send answer');
    await request(server, 'POST', '/admin/v1/simulator/rcs/mo', {
      key: server.adminKey,
      body: { from: '33612345678', to: agent, body: { type: 'TEXT', text: 'Yes' } },
    });
    const conversations = await eventually(
      async () => {
        const r = await request(server, 'GET', '/rcs/v1/conversations', { key: t.key });
        return r.body.items.length > 0 ? r.body.items : undefined;
      },
      15_000,
      'a conversation',
    );
    assert.equal(conversations[0].agent, agent);
  });

  test('tenancy objects: channels, organisations, credentials, ledger, transfers, webhook secret', async () => {
    const t = await createTenant(server, { balance: 3 });
    const channels = await request(server, 'GET', '/commons/v1/channels', { key: t.key });
    absent(
      channels.body.items[0],
      ['defaultFromField', 'defaultCallbackUrlStatus', 'defaultCallbackUrlMo', 'dailyConsumptionLimit', 'monthlyConsumptionLimit', 'fallbackSmsChannelId'],
      'channel',
    );
    const org = await request(server, 'GET', `/commons/v1/organisations/${t.organisationId}`, { key: t.key });
    absent(org.body, ['parentOrganisationId', 'monthlyConsumptionLimit'], 'organisation');
    const child = await request(server, 'POST', '/commons/v1/organisations', { key: t.key, body: { name: 'Child' } });
    assert.equal(child.status, 201, child.text);
    assert.equal(child.body.parentOrganisationId, t.organisationId);
    const transfer = await request(server, 'POST', `/commons/v1/organisations/${t.organisationId}/transfers`, {
      key: t.key,
      body: { organisationDestination: { organisationId: child.body.organisationId }, amount: 1 },
      headers: { 'Idempotency-Key': 'no-nulls-1' },
    });
    assert.equal(transfer.status, 201, transfer.text);
    absent(transfer.body, ['reference', 'description'], 'transfer');
    const replayed = await request(server, 'POST', `/commons/v1/organisations/${t.organisationId}/transfers`, {
      key: t.key,
      body: { organisationDestination: { organisationId: child.body.organisationId }, amount: 1 },
      headers: { 'Idempotency-Key': 'no-nulls-1' },
    });
    assert.deepEqual(replayed.body, transfer.body);
    const transfers = await request(server, 'GET', `/commons/v1/organisations/${t.organisationId}/transfers`, { key: t.key });
    assert.equal(transfers.body.items.length, 1);
    const ledger = await request(server, 'GET', `/commons/v1/organisations/${t.organisationId}/ledger`, { key: t.key });
    const topUp = ledger.body.items.find((e: any) => e.kind === 'TOPUP');
    absent(topUp, ['messageId', 'transferId', 'reference'], 'top-up ledger entry');

    const creds = await request(server, 'GET', `/admin/v1/channels/${t.channelId}/credentials`, { key: server.adminKey });
    absent(creds.body.items[0], ['revocationDate', 'value'], 'credential');
    const secret = await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key });
    absent(secret.body, ['previousSecret', 'previousSecretValidUntil'], 'webhook secret');
    const rotated = await request(server, 'POST', `/commons/v1/channels/${t.channelId}/webhook-secret/rotate`, { key: t.key });
    assert.equal(rotated.body.previousSecret, secret.body.secret);
    const extra = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'Spare', roles: ['USER'] },
    });
    const revoked = await request(server, 'DELETE', `/admin/v1/credentials/${extra.body.credentialId}`, { key: server.adminKey });
    assert.ok(revoked.body.revocationDate);
  });

  test('consumption, lookup and webhook deliveries with unknown parts', async () => {
    const t = await createTenant(server, { balance: 1 });
    // An international freephone number has no country nor network.
    const look = await request(server, 'GET', '/commons/v1/lookup/80012345678', { key: t.key });
    assert.equal(look.status, 200, look.text);
    absent(look.body, ['country', 'isoCountryCode', 'network', 'mcc', 'mnc', 'mccMnc', 'reachable', 'ported', 'currentNetwork'], 'lookup');
    const bulk = await request(server, 'POST', '/commons/v1/lookup', { key: t.key, body: { msisdns: ['80012345678', 'abc'] } });
    assert.equal(bulk.body.items.length, 2);
    const consumption = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=LOOKUP', { key: t.key });
    assert.deepEqual(consumption.body.items[0].items[0].lookup, {}, 'an unknown network: no field');

    const port = await closedPort();
    const failing = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345678' }, body: { text: 'x' }, callbackUrlStatus: `http://127.0.0.1:${port}/gone` },
    });
    const ok = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345679' }, body: { text: 'x' }, callbackUrlStatus: `${receiver.url}/ok` },
    });
    const deliveries = await eventually(
      async () => {
        const r = await request(server, 'GET', '/commons/v1/webhooks/deliveries', { key: t.key });
        const mine = r.body.items;
        const pending = mine.find((d: any) => d.messageId === failing.body.messageId && d.attemptCount > 0);
        const delivered = mine.find((d: any) => d.messageId === ok.body.messageId && d.status === 'DELIVERED');
        return pending && delivered ? { pending, delivered } : undefined;
      },
      15_000,
      'a failed attempt and a delivery',
    );
    assert.ok(deliveries.pending.nextAttemptDate && deliveries.pending.lastError);
    absent(deliveries.pending, ['deliveryDate', 'lastHttpStatus'], 'pending delivery');
    absent(deliveries.pending.attempts[0], ['httpStatus'], 'attempt that got no answer');
    absent(deliveries.delivered, ['nextAttemptDate', 'lastError'], 'delivered delivery');
    absent(deliveries.delivered.attempts[0], ['error'], 'attempt that succeeded');
  });

  test('operator objects: connectors, routes, prices, SMPP credentials, rate limits, unrouted inbound', async () => {
    const t = await createTenant(server, { balance: 1 });
    const admin = { key: server.adminKey };
    for (const path of [
      '/admin/v1/connectors',
      '/admin/v1/routes',
      '/admin/v1/prices',
      '/admin/v1/organisations',
      `/admin/v1/organisations/${t.organisationId}/rate-limits`,
    ]) {
      const r = await request(server, 'GET', path, admin);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
    }
    const smpp = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      ...admin,
      body: { systemId: `nn${randomBytes(3).toString('hex')}`, password: 'secret' },
    });
    assert.equal(smpp.status, 201, smpp.text);
    await request(server, 'POST', '/admin/v1/simulator/mo', { ...admin, body: { from: '33612345678', to: '99998', text: 'lost' } });
    const unrouted = await request(server, 'GET', '/admin/v1/inbound/unrouted', admin);
    assert.ok(unrouted.body.items.length > 0);
  });

  test('the OpenAPI document describes optional fields as optional, never as nullable answers', async () => {
    const doc = (await request(server, 'GET', '/openapi.json')).body;
    const message = doc.components.schemas.Message;
    for (const f of ['from', 'refClient', 'callbackUrlStatus', 'callbackUrlMo', 'campaignId']) {
      assert.ok(message.properties[f], f);
      assert.ok(!message.required.includes(f), `${f} is optional`);
      assert.equal(message.properties[f].type, 'string', `${f} is a string when present`);
    }
    assert.ok(!message.properties.status.required.includes('detail'));
    // No answer schema of any operation lets a field be null.
    const nullable: string[] = [];
    const walk = (schema: unknown, path: string) => {
      if (Array.isArray(schema)) return schema.forEach((s, i) => walk(s, `${path}[${i}]`));
      if (schema === null || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')) || s.nullable === true) nullable.push(path);
      for (const [k, v] of Object.entries(s)) walk(v, `${path}.${k}`);
    };
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, answer] of Object.entries<any>(op.responses ?? {})) {
          // 204 has no body (its schema is the JSON null of "no content").
          if (status !== '204') walk(answer.content, `${method} ${path} ${status}`);
        }
      }
    }
    walk(message, 'Message');
    assert.deepEqual(nullable, []);
    assertNoNulls(doc.components.schemas.Message, 'the Message schema');
  });
});
