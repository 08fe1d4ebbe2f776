// @tern/sdk against a real Tern: sends, reads and pages through messages, waits out a 429 as Retry-After asks,
// verifies a real webhook delivery, and throws typed errors.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  type RetryEvent,
  Tern,
  TernAuthError,
  TernInvalidRequestError,
  TernNotFoundError,
  TernRateLimitError,
  verifyWebhook,
  WebhookVerificationError,
} from '../../packages/sdk/src/index.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

/** A fetch that counts the requests a client makes, by method and path. */
function countingFetch(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    },
  };
}

forEachDialect('@tern/sdk', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  let tern: Tern;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 100 });
    tern = new Tern({ baseUrl: server.url, apiKey: t.key });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await server.stop();
  });

  test('sends, reads, and lists across pages with the iterator', async () => {
    const refClient = `sdk-${randomUUID()}`;
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await tern.sms.send({ recipient: { to: `3361234560${i}` }, body: { text: `sdk ${i}` }, refClient }));
    for (const m of sent) assert.ok(['ENROUTE', 'DELIVERED'].includes(m.status?.value ?? ''), m.status?.value);

    const read = await tern.sms.get(sent[0]!.messageId);
    assert.equal(read.messageId, sent[0]!.messageId);
    assert.equal(read.body?.text, 'sdk 0');
    assert.equal(read.recipient?.to, '33612345600');

    const counting = countingFetch();
    const paging = new Tern({ baseUrl: server.url, apiKey: t.key, fetch: counting.fetch });
    const seen = [];
    for await (const m of paging.sms.iterate({ 'searchBy[refClient]': refClient, pageSize: 2 })) seen.push(m.messageId);
    assert.deepEqual([...seen].sort(), sent.map((m) => m.messageId).sort());
    assert.deepEqual(counting.calls, ['GET /sms/v1/messages', 'GET /sms/v1/messages', 'GET /sms/v1/messages'], 'pages of 2, 2 and 1');

    const sizes = [];
    for await (const page of tern.sms.pages({ 'searchBy[refClient]': refClient, pageSize: 5 })) sizes.push(page.items.length);
    assert.deepEqual(sizes, [5], 'a full last page is followed by an empty one, which is not yielded');
  });

  test('a send repeated with its Idempotency-Key is answered with the same message', async () => {
    const idempotencyKey = randomUUID();
    const message = { recipient: { to: '33612345670' }, body: { text: 'once' } };
    const first = await tern.sms.send(message, { idempotencyKey });
    const again = await tern.sms.send(message, { idempotencyKey });
    assert.equal(again.messageId, first.messageId);
    const other = await tern.sms.send(message);
    assert.notEqual(other.messageId, first.messageId, 'each send has a key of its own');
  });

  test('a 429 is waited out as Retry-After asks, then the send goes through', async () => {
    const limited = await createTenant(server, { balance: 100, name: 'limited' });
    const admin = new Tern({ baseUrl: server.url, apiKey: server.adminKey });
    await admin.admin.setRateLimits(limited.organisationId, { send: { perKey: 1, perOrganisation: 1 } });

    const retries: RetryEvent[] = [];
    const patient = new Tern({ baseUrl: server.url, apiKey: limited.key, onRetry: (e) => retries.push(e) });
    const refClient = `limited-${randomUUID()}`;
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await patient.sms.send({ recipient: { to: '33612345680' }, body: { text: `limited ${i}` }, refClient }));
    // Three sends a few milliseconds apart fall in two clock seconds at most: one of them at least meets the limit
    // (two, unless a wait ends just before a second ends).
    assert.ok(retries.length >= 1, `3 sends at 1 a second wait at least once: ${JSON.stringify(retries)}`);
    for (const r of retries) {
      assert.equal(r.status, 429);
      assert.equal(r.delayMs, 1000, 'Retry-After: 1');
      assert.equal(r.path, '/sms/v1/messages');
    }
    const listed = [];
    for await (const m of patient.sms.iterate({ 'searchBy[refClient]': refClient })) listed.push(m.messageId);
    assert.equal(listed.length, 3, 'each send made one message, whatever its tries');

    // Without retries, the 429 itself: sent twice within the limit's second until one is refused.
    const impatient = new Tern({ baseUrl: server.url, apiKey: limited.key, retry: { retries: 0 } });
    let refused: unknown;
    for (let i = 0; i < 5 && refused === undefined; i++) {
      try {
        await impatient.sms.send({ recipient: { to: '33612345681' }, body: { text: 'impatient' } });
        await impatient.sms.send({ recipient: { to: '33612345681' }, body: { text: 'impatient' } });
      } catch (err) {
        refused = err;
      }
    }
    assert.ok(refused instanceof TernRateLimitError, String(refused));
    assert.equal(refused.status, 429);
    assert.equal(refused.errorCode, '429.001');
    assert.equal(refused.retryAfterSeconds, 1);
    assert.match(refused.detail, /send requests a second/);
  });

  test('a webhook delivered to a receiver verifies with the channel’s secret', async () => {
    const { secret } = await tern.webhooks.secret(t.channelId);
    const m = await tern.sms.send({ recipient: { to: '33612345690' }, body: { text: 'webhook' }, callbackUrlStatus: `${receiver.url}/sdk` });
    const delivery = await eventually(() => receiver.requests.find((r) => r.url === '/sdk' && r.json?.messageId === m.messageId), 10_000, 'a status webhook');

    const verified = verifyWebhook<{ messageId: string }>(secret, delivery.headers, delivery.body);
    assert.equal(verified.payload.messageId, m.messageId);
    assert.equal(verified.id, delivery.headers['webhook-id']);
    // The Standard Webhooks reference library agrees.
    new Webhook(secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    });

    assert.throws(() => verifyWebhook(secret, delivery.headers, delivery.body.replace(m.messageId, randomUUID())), WebhookVerificationError);
    assert.throws(() => verifyWebhook(`whsec_${Buffer.from('another secret').toString('base64')}`, delivery.headers, delivery.body), WebhookVerificationError);
    const later = new Date(Number(delivery.headers['webhook-timestamp']) * 1000 + 10 * 60_000);
    assert.throws(() => verifyWebhook(secret, delivery.headers, delivery.body, { now: later }), /too far from now/);
  });

  test('RCS, one-time passwords, lookup, balance and a transfer', async () => {
    const rcsTenant = await createTenant(server, { balance: 10, type: 'RCS' });
    const rcs = new Tern({ baseUrl: server.url, apiKey: rcsTenant.key });
    assert.equal((await rcs.rcs.capability('33612345678')).capable, true);
    const card = await rcs.rcs.send({
      recipient: { to: '33612345678' },
      body: { type: 'TEXT', text: 'rich hello', suggestions: [{ type: 'REPLY', text: 'Yes', postbackData: 'yes' }] },
    });
    assert.equal((await rcs.rcs.get(card.messageId)).messageId, card.messageId);

    const otp = await tern.otp.send({ recipient: { to: '33612345671' } });
    assert.equal((await tern.otp.get(otp.otpId)).status, 'PENDING');
    assert.notEqual((await tern.otp.check(otp.otpId, { code: '000000' })).status, 'APPROVED');

    const lookup = await tern.lookup('33612345678');
    assert.equal(lookup.valid, true);
    assert.equal(lookup.isoCountryCode, 'FR');

    const parent = await createTenant(server, { balance: 50, name: 'parent' });
    const child = await createTenant(server, { parentOrganisationId: parent.organisationId, name: 'child' });
    const funds = new Tern({ baseUrl: server.url, apiKey: parent.key });
    const before = await funds.organisations.balance(parent.organisationId);
    const transfer = await funds.organisations.transfer(parent.organisationId, {
      organisationDestination: { organisationId: child.organisationId },
      amount: 5,
    });
    assert.equal(transfer.amount, 5);
    assert.equal((await funds.organisations.balance(parent.organisationId)).amount, before.amount - 5);
    const transfers = [];
    for await (const tr of funds.organisations.transfers(parent.organisationId)) transfers.push(tr.transferId);
    assert.deepEqual(transfers, [transfer.transferId]);
  });

  test('bad input is a typed error, not tried again', async () => {
    const counting = countingFetch();
    const client = new Tern({ baseUrl: server.url, apiKey: t.key, fetch: counting.fetch });
    const invalid = await client.sms.send({ recipient: { to: 'not a number' }, body: { text: 'x' } }).catch((e: unknown) => e);
    assert.ok(invalid instanceof TernInvalidRequestError, String(invalid));
    assert.equal(invalid.status, 400);
    assert.equal(invalid.errorCode, '400.003');
    assert.match(invalid.detail, /recipient\.to/);
    assert.ok(invalid.requestId, 'the answer’s X-Request-Id');
    assert.equal(counting.calls.length, 1, 'a 400 is not retried');

    const missing = await client.sms.get(randomUUID()).catch((e: unknown) => e);
    assert.ok(missing instanceof TernNotFoundError, String(missing));
    assert.equal(missing.errorCode, '404.001');

    const badKey = await new Tern({ baseUrl: server.url, apiKey: 'not-a-key' }).sms.list().catch((e: unknown) => e);
    assert.ok(badKey instanceof TernAuthError, String(badKey));
    assert.equal(badKey.status, 401);
  });
});
