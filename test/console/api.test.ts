// The REST routes the console and the CLI stand on: the live event stream, quotes, a channel's keys and SMPP access
// managed with its ADMIN key, live SMPP sessions, and the request body of webhook deliveries.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { call, packageClient } from '../support/smpp.ts';
import { eventually } from '../support/wait.ts';

interface StreamEvent {
  event: string;
  id?: string;
  data: any;
}

/** Opens GET /commons/v1/events and collects its events until closed. */
async function openStream(server: TestServer, key: string, headers: Record<string, string> = {}, path = '/commons/v1/events') {
  const abort = new AbortController();
  const res = await fetch(server.url + path, { headers: { 'x-api-key': key, ...headers }, signal: abort.signal });
  const events: StreamEvent[] = [];
  const done = (async () => {
    if (!res.ok || !res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const e: StreamEvent = { event: 'message', data: null };
          for (const l of block.split('\n')) {
            if (l.startsWith('event: ')) e.event = l.slice(7);
            else if (l.startsWith('data: ')) e.data = JSON.parse(l.slice(6));
            else if (l.startsWith('id: ')) e.id = l.slice(4);
          }
          if (e.data !== null) events.push(e);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    res,
    events,
    messages: () => events.filter((e) => e.event === 'message'),
    ready: () => eventually(() => events.some((e) => e.event === 'ready'), 5_000, 'the ready event'),
    async close() {
      abort.abort();
      await done;
    },
  };
}

forEachDialect('console API', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;
  let receiver: Receiver;

  before(async () => {
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 10, channel: { defaultFromField: 'Tern' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await server.stop();
  });

  it('streams the accept and every status change of the channel’s messages, each with the message object', async () => {
    const stream = await openStream(server, tenant.key);
    assert.equal(stream.res.status, 200);
    assert.match(stream.res.headers.get('content-type') ?? '', /^text\/event-stream/);
    await stream.ready();
    assert.deepEqual(stream.events[0]!.data.channels, [tenant.channelId]);
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text: 'live' } } });
    assert.equal(sent.status, 201);
    const mine = () => stream.messages().filter((e) => e.data.message.messageId === sent.body.messageId);
    await eventually(() => mine().some((e) => e.data.status === 'DELIVERED'), 10_000, 'the DELIVERED event');
    const [accepted, delivered] = mine();
    assert.equal(accepted!.data.kind, 'ACCEPTED');
    assert.equal(accepted!.id, accepted!.data.eventId);
    assert.equal(delivered!.data.kind, 'STATUS');
    assert.equal(delivered!.data.message.status.value, 'DELIVERED');
    assert.equal(delivered!.data.message.recipient.to, '33612345678');
    // Each event once.
    assert.equal(new Set(mine().map((e) => e.id)).size, mine().length);
    await stream.close();
  });

  it('shows another organisation nothing, and a reconnecting client what it missed from its Last-Event-ID', async () => {
    const other = await createTenant(server, { balance: 10 });
    const stranger = await openStream(server, other.key);
    await stranger.ready();
    const first = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345670' }, body: { text: 'one' } } });
    const events = await request(server, 'GET', `/sms/v1/messages/${first.body.messageId}/events`, { key: tenant.key });
    await eventually(
      async () => (await request(server, 'GET', `/sms/v1/messages/${first.body.messageId}`, { key: tenant.key })).body.status.value === 'DELIVERED',
    );
    const resumed = await openStream(server, tenant.key, { 'last-event-id': events.body.items[0].eventId });
    await resumed.ready();
    await eventually(
      () => resumed.messages().some((e) => e.data.message.messageId === first.body.messageId && e.data.status === 'DELIVERED'),
      5_000,
      'the missed DELIVERED',
    );
    assert.ok(!resumed.messages().some((e) => e.data.eventId === events.body.items[0].eventId), 'the last event seen is not sent again');
    assert.equal(stranger.messages().length, 0);
    await Promise.all([stranger.close(), resumed.close()]);
  });

  it('refuses a stream without a key, with a bad Last-Event-ID, or for a channel out of reach', async () => {
    assertError(await request(server, 'GET', '/commons/v1/events'), 401, '401.001');
    assertError(await request(server, 'GET', '/commons/v1/events', { key: tenant.key, headers: { 'last-event-id': 'nope' } }), 400, '400.001', /last-event-id/);
    const other = await createTenant(server);
    assertError(await request(server, 'GET', `/commons/v1/events?searchBy[channel.channelId]=${other.channelId}`, { key: tenant.key }), 404, '404.001');
  });

  it('quotes a send with the count and price the send then charges', async () => {
    const text = 'Bonjour € '.repeat(20);
    const quote = await request(server, 'POST', '/sms/v1/messages/quote', {
      key: tenant.key,
      body: { recipient: { to: '+33 6 12 34 56 78' }, body: { text } },
    });
    assert.equal(quote.status, 200, quote.text);
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text } } });
    assert.equal(quote.body.body.messagePartCount, sent.body.body.messagePartCount);
    assert.equal(quote.body.body.encoding, sent.body.body.encoding);
    assert.equal(quote.body.body.length, sent.body.body.length);
    assert.equal(quote.body.price.amount, sent.body.price.amount);
    assert.deepEqual(quote.body.recipient, { to: '33612345678', country: 'FR', valid: true });
    assert.equal(quote.body.body.unitsPerPart, 153);
    assert.equal(quote.body.body.remainingInPart, 153 * quote.body.body.messagePartCount - quote.body.body.length);

    const unicode = await request(server, 'POST', '/sms/v1/messages/quote', { key: tenant.key, body: { body: { text: 'ok 😀' } } });
    assert.equal(unicode.body.body.encoding, 'UNICODE');
    assert.equal(unicode.body.body.remainingInPart, 70 - 5);
    const long = await request(server, 'POST', '/sms/v1/messages/quote', { key: tenant.key, body: { body: { text: 'x'.repeat(1531) } } });
    assert.equal(long.body.body.tooLong, true);
    assertError(
      await request(server, 'POST', '/sms/v1/messages/quote', { key: tenant.key, body: { recipient: { to: 'abc' }, body: { text: 'x' } } }),
      400,
      '400.003',
      /recipient\.to/,
    );
    assertError(await request(server, 'POST', '/rcs/v1/messages/quote', { key: tenant.key, body: { body: { type: 'TEXT', text: 'x' } } }), 403, '403.005');

    const rcs = await createTenant(server, { type: 'RCS', balance: 5 });
    const basic = await request(server, 'POST', '/rcs/v1/messages/quote', {
      key: rcs.key,
      body: { recipient: { to: '33612345678' }, body: { type: 'TEXT', text: 'short' } },
    });
    assert.equal(basic.body.price.kind, 'BASIC');
    const single = await request(server, 'POST', '/rcs/v1/messages/quote', { key: rcs.key, body: { body: { type: 'TEXT', text: 'x'.repeat(161) } } });
    assert.equal(single.body.price.kind, 'SINGLE');
    const rcsSent = await request(server, 'POST', '/rcs/v1/messages', {
      key: rcs.key,
      body: { recipient: { to: '33612345678' }, body: { type: 'TEXT', text: 'short' } },
    });
    assert.equal(basic.body.price.amount, rcsSent.body.price.amount);
    assertError(
      await request(server, 'POST', '/rcs/v1/messages/quote', { key: rcs.key, body: { body: { type: 'TEXT' } } }),
      400,
      '400.001',
      /body\.body\.text/,
    );
    const voice = await createTenant(server, { type: 'VOICE' });
    const call = await request(server, 'POST', '/voice/v1/messages/quote', { key: voice.key, body: { recipient: { to: '33612345678' } } });
    assert.equal(call.body.price.kind, 'VOICE');
    assert.ok(call.body.price.unitAmount > 0);
    assert.equal(call.body.price.amount, undefined);
  });

  it('lets an ADMIN key create, list and revoke its channel’s API keys, but not revoke itself', async () => {
    const created = await request(server, 'POST', `/commons/v1/channels/${tenant.channelId}/credentials`, {
      key: tenant.key,
      body: { name: 'ci', roles: ['USER'] },
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.value, /^tern_/);
    assert.equal((await request(server, 'GET', '/commons/v1/channels', { key: created.body.value })).status, 200);
    const list = await request(server, 'GET', `/commons/v1/channels/${tenant.channelId}/credentials`, { key: tenant.key });
    assert.ok(list.body.items.some((c: any) => c.credentialId === created.body.credentialId && c.value === undefined));
    const revoked = await request(server, 'DELETE', `/commons/v1/channels/${tenant.channelId}/credentials/${created.body.credentialId}`, { key: tenant.key });
    assert.equal(revoked.body.state, 'REVOKED');
    assertError(await request(server, 'GET', '/commons/v1/channels', { key: created.body.value }), 401, '401.002');
    assertError(
      await request(server, 'DELETE', `/commons/v1/channels/${tenant.channelId}/credentials/${tenant.credentialId}`, { key: tenant.key }),
      409,
      '409.001',
      /making this request/,
    );
    const user = await createTenant(server, { roles: ['USER'] });
    assertError(await request(server, 'GET', `/commons/v1/channels/${user.channelId}/credentials`, { key: user.key }), 403, '403.001');
    assertError(await request(server, 'GET', `/commons/v1/channels/${user.channelId}/credentials`, { key: tenant.key }), 404, '404.001');
  });

  it('manages SMPP credentials and shows the sessions bound with them', async () => {
    const created = await request(server, 'POST', `/commons/v1/channels/${tenant.channelId}/smpp-credentials`, {
      key: tenant.key,
      body: { systemId: `c${dialect.slice(0, 3)}${Date.now() % 100000}`, password: 'secret1', maxBinds: 2 },
    });
    assert.equal(created.status, 201, created.text);
    const session = await packageClient(server.smppPort);
    const bound = await call(session, 'bind_transceiver', { system_id: created.body.systemId, password: 'secret1' });
    assert.equal(bound.command_status, 0);
    const sessions = await request(server, 'GET', `/commons/v1/channels/${tenant.channelId}/smpp-sessions`, { key: tenant.key });
    assert.equal(sessions.body.items.length, 1);
    assert.equal(sessions.body.items[0].systemId, created.body.systemId);
    assert.equal(sessions.body.items[0].bindMode, 'transceiver');
    const all = await request(server, 'GET', '/admin/v1/smpp-sessions', { key: server.adminKey });
    assert.ok(all.body.items.some((s: any) => s.smppCredentialId === created.body.smppCredentialId));
    session.close();
    const deleted = await request(server, 'DELETE', `/commons/v1/channels/${tenant.channelId}/smpp-credentials/${created.body.smppCredentialId}`, {
      key: tenant.key,
    });
    assert.equal(deleted.status, 200);
    const list = await request(server, 'GET', `/commons/v1/channels/${tenant.channelId}/smpp-credentials`, { key: tenant.key });
    assert.ok(!list.body.items.some((c: any) => c.smppCredentialId === created.body.smppCredentialId && c.state === 'ACTIVE'));
    const rcs = await createTenant(server, { type: 'RCS' });
    assertError(await request(server, 'GET', `/commons/v1/channels/${rcs.channelId}/smpp-credentials`, { key: rcs.key }), 403, '403.005');
  });

  it('answers the body a webhook delivery sent', async () => {
    const sent = await request(server, 'POST', '/sms/v1/messages', {
      key: tenant.key,
      body: { recipient: { to: '33612345678' }, body: { text: 'hook' }, callbackUrlStatus: `${receiver.url}/status` },
    });
    const list = await eventually(async () => {
      const r = await request(server, 'GET', `/commons/v1/webhooks/deliveries?searchBy[messageId]=${sent.body.messageId}`, { key: tenant.key });
      return r.body.items.length > 0 && r.body.items.every((d: any) => d.status === 'DELIVERED') ? r : undefined;
    });
    const d = list.body.items[0];
    assert.equal(JSON.parse(d.payload).messageId, sent.body.messageId);
    assert.ok(receiver.requests.some((r) => r.body === d.payload));
  });
});
