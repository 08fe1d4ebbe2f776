import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../../src/core/tenancy/keys.ts';
import { signWebhook } from '../../../src/doors/webhooks/signing.ts';
import { WebhookHttpClient } from '../../../src/doors/webhooks/http-client.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';

const SECRET_A = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SECRET_B = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

function hmac(secret: string, content: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(content).digest('base64');
}

describe('generateWebhookSecret', () => {
  it('is whsec_ followed by 24 random bytes in base64', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 24);
    assert.notEqual(generateWebhookSecret(), secret);
  });

  it('is accepted by standardwebhooks', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ secrets: [secret], id: 'evt_1', timestamp: new Date(), body: '{"a":1}' });
    assert.deepEqual(new Webhook(secret).verify('{"a":1}', { ...headers }), { a: 1 });
  });
});

describe('signWebhook', () => {
  const timestamp = new Date('2026-01-02T03:04:05.678Z');
  const body = '{"messageId":"m1","status":{"value":"DELIVERED"}}';

  it('produces the three Standard Webhooks headers with an HMAC-SHA256 v1 signature', () => {
    const headers = signWebhook({ secrets: [SECRET_A], id: 'evt_42', timestamp, body });
    assert.deepEqual(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    assert.equal(headers['webhook-id'], 'evt_42');
    assert.equal(headers['webhook-timestamp'], '1767323045');
    assert.equal(headers['webhook-signature'], `v1,${hmac(SECRET_A, `evt_42.1767323045.${body}`)}`);
  });

  it('signs with every secret during a rotation, in order, separated by one space', () => {
    const headers = signWebhook({ secrets: [SECRET_A, SECRET_B], id: 'evt_42', timestamp, body });
    const content = `evt_42.1767323045.${body}`;
    assert.equal(headers['webhook-signature'], `v1,${hmac(SECRET_A, content)} v1,${hmac(SECRET_B, content)}`);
  });

  it('changes with the id, the timestamp and the body', () => {
    const base = signWebhook({ secrets: [SECRET_A], id: 'evt_1', timestamp, body })['webhook-signature'];
    const sign = (id: string, at: Date, text: string) => signWebhook({ secrets: [SECRET_A], id, timestamp: at, body: text })['webhook-signature'];
    assert.notEqual(sign('evt_2', timestamp, body), base);
    assert.notEqual(sign('evt_1', new Date(timestamp.getTime() + 1_000), body), base);
    assert.notEqual(sign('evt_1', timestamp, `${body} `), base);
    assert.equal(sign('evt_1', new Date(timestamp.getTime() + 1), body), base, 'sub-second part is not signed');
  });

  it('is verified by standardwebhooks with either rotated secret, and not with another', () => {
    const now = new Date();
    const headers = { ...signWebhook({ secrets: [SECRET_A, SECRET_B], id: 'evt_9', timestamp: now, body }) };
    assert.deepEqual(new Webhook(SECRET_A).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(SECRET_B).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /No matching signature/);
    assert.throws(() => new Webhook(SECRET_A).verify(`${body}x`, headers), /No matching signature/);
  });

  it('signs exactly as standardwebhooks does, for any secret, id, time and body (seeded)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.string({ unit: 'binary', maxLength: 2_000 }),
        (bytes, id, ms, text) => {
          const secret = `whsec_${Buffer.from(bytes).toString('base64')}`;
          const at = new Date(ms);
          const headers = signWebhook({ secrets: [secret], id, timestamp: at, body: text });
          assert.equal(headers['webhook-signature'], new Webhook(secret).sign(id, at, text));
        },
      ),
      { seed: 20261128, numRuns: 300 },
    );
  });

  it('rejects missing or malformed input without echoing secrets', () => {
    const ok = { secrets: [SECRET_A], id: 'evt_1', timestamp, body };
    assert.throws(() => signWebhook({ ...ok, secrets: [] }), /without a secret/);
    assert.throws(() => signWebhook({ ...ok, id: '' }), /id must not be empty/);
    assert.throws(() => signWebhook({ ...ok, timestamp: new Date('nope') }), /invalid date/);
    assert.throws(
      () => signWebhook({ ...ok, secrets: [SECRET_A, 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
      (err: Error) => {
        assert.match(err.message, /secret #2 does not start with whsec_/);
        assert.doesNotMatch(err.message, /MfKQ9r8/);
        return true;
      },
    );
    assert.throws(
      () => signWebhook({ ...ok, secrets: ['whsec_not base64!!'] }),
      (err: Error) => {
        assert.match(err.message, /secret #1 is empty or not valid base64/);
        assert.doesNotMatch(err.message, /not base64!!/);
        return true;
      },
    );
    assert.throws(() => signWebhook({ ...ok, secrets: ['whsec_'] }), /secret #1 is empty/);
  });
});

describe('signed deliveries to a receiver verifying with standardwebhooks', () => {
  let client: WebhookHttpClient;
  const receivers: Receiver[] = [];

  /** A receiver that answers 204 when `Webhook.verify` accepts the request with `secret`, 401 otherwise. */
  async function verifyingReceiver(secret: string): Promise<Receiver & { verified: unknown[] }> {
    const verified: unknown[] = [];
    const receiver = await startReceiver((request, res) => {
      try {
        verified.push(new Webhook(secret).verify(request.body, request.headers as Record<string, string>));
        res.writeHead(204).end();
      } catch (err) {
        res.writeHead(401).end((err as Error).message);
      }
    });
    receivers.push(receiver);
    return Object.assign(receiver, { verified });
  }

  function deliver(url: string, secrets: string[], body: string) {
    const headers = signWebhook({ secrets, id: 'evt_0195', timestamp: new Date(), body });
    return client.send({ method: 'POST', url: `${url}/hooks/status`, body, headers: { ...headers } });
  }

  before(() => {
    client = new WebhookHttpClient({ allowPrivate: true, timeoutMs: 5_000 });
  });

  after(async () => {
    await client.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  it('accepts a single-secret signature', async () => {
    const receiver = await verifyingReceiver(SECRET_A);
    const body = JSON.stringify({ messageId: 'm1', status: { value: 'DELIVERED' }, text: 'héllo €' });
    const result = await deliver(receiver.origin, [SECRET_A], body);
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(result.httpStatus, 204);
    assert.deepEqual(receiver.verified, [JSON.parse(body)]);
    assert.equal(receiver.requests[0]!.headers['webhook-id'], 'evt_0195');
  });

  it('accepts rotation signatures whichever of the two secrets the receiver holds', async () => {
    const oldSecretReceiver = await verifyingReceiver(SECRET_A);
    const newSecretReceiver = await verifyingReceiver(SECRET_B);
    const body = JSON.stringify({ messageId: 'm2' });
    for (const receiver of [oldSecretReceiver, newSecretReceiver]) {
      const result = await deliver(receiver.origin, [SECRET_A, SECRET_B], body);
      assert.equal(result.outcome, 'delivered', result.error ?? '');
      assert.deepEqual(receiver.verified, [{ messageId: 'm2' }]);
      assert.equal(String(receiver.requests[0]!.headers['webhook-signature']).split(' ').length, 2);
    }
  });

  it('is rejected by a receiver holding another secret', async () => {
    const receiver = await verifyingReceiver(generateWebhookSecret());
    const result = await deliver(receiver.origin, [SECRET_A, SECRET_B], '{"messageId":"m3"}');
    assert.equal(result.outcome, 'retry');
    assert.equal(result.httpStatus, 401);
    assert.equal(result.responseSnippet, 'No matching signature found');
    assert.deepEqual(receiver.verified, []);
  });
});
