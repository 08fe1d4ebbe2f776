import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { agentMessage, rbmBodyProblem, ttlOf } from '../../src/connectors/rbm/agent-message.ts';
import { AccessTokens } from '../../src/connectors/rbm/auth.ts';
import { rbmMessageId } from '../../src/connectors/rbm/connector.ts';
import { coreEvents, readWebhook, signatureHolds } from '../../src/connectors/rbm/events.ts';
import { RBM_KIND } from '../../src/connectors/rbm/kind.ts';
import { CoreError } from '../../src/core/errors.ts';
import { type RcsBody, rcsBodyProblem } from '../../src/domain/rcs.ts';
import { checkAgentMessage, FakeRbm } from '../support/rbm.ts';

const SEED = 4517;

const text = (max: number) => fc.string({ minLength: 1, maxLength: max, unit: 'grapheme' });
const fileUrl = fc.webUrl({ validSchemes: ['https'] }).filter((u) => u.length <= 255);
const suggestion = fc.oneof(
  fc.record({ type: fc.constant('REPLY'), text: text(25), postbackData: fc.string({ maxLength: 40 }) }),
  fc.record({ type: fc.constant('OPEN_URL'), text: text(25), postbackData: fc.string({ maxLength: 40 }), url: fileUrl }),
  fc.record({
    type: fc.constant('DIAL_PHONE'),
    text: text(25),
    postbackData: fc.string({ maxLength: 40 }),
    phoneNumber: fc.constantFrom('+33612345678', '33180000000', '0612345678', '0033 6 12 34 56 78'),
  }),
  fc.record({ type: fc.constant('REQUEST_LOCATION'), text: text(25), postbackData: fc.string({ maxLength: 40 }) }),
  fc.record(
    {
      type: fc.constant('SHOW_LOCATION'),
      text: text(25),
      postbackData: fc.string({ maxLength: 40 }),
      latitude: fc.double({ min: -90, max: 90, noNaN: true }),
      longitude: fc.double({ min: -180, max: 180, noNaN: true }),
      label: text(100),
    },
    { requiredKeys: ['type', 'text', 'postbackData', 'latitude', 'longitude'] },
  ),
  fc.record(
    {
      type: fc.constant('CREATE_CALENDAR_EVENT'),
      text: text(25),
      postbackData: fc.string({ maxLength: 40 }),
      startTime: fc.constant('2030-05-01T10:00:00+02:00'),
      endTime: fc.constant('2030-05-01T12:00'),
      title: text(100),
      description: fc.string({ maxLength: 500 }),
    },
    { requiredKeys: ['type', 'text', 'postbackData', 'startTime', 'endTime', 'title'] },
  ),
);
const card = fc.record(
  {
    title: text(200),
    description: fc.string({ maxLength: 2000 }),
    media: fc.record({ fileUrl, height: fc.constantFrom('SHORT', 'MEDIUM', 'TALL') }, { requiredKeys: ['fileUrl'] }),
    suggestions: fc.array(suggestion, { maxLength: 4 }),
  },
  { requiredKeys: [] },
);
const body: fc.Arbitrary<RcsBody> = fc.oneof(
  fc.record({ type: fc.constant('TEXT' as const), text: text(3072), suggestions: fc.array(suggestion, { maxLength: 11 }) }, { requiredKeys: ['type', 'text'] }),
  fc.record(
    {
      type: fc.constant('CARD' as const),
      content: card,
      orientation: fc.constantFrom('VERTICAL', 'HORIZONTAL'),
      suggestions: fc.array(suggestion, { maxLength: 11 }),
    },
    { requiredKeys: ['type', 'content'] },
  ),
  fc.record(
    {
      type: fc.constant('CAROUSEL' as const),
      contents: fc.array(
        fc.oneof(
          card,
          card.map((content) => ({ content })),
        ),
        { minLength: 2, maxLength: 10 },
      ),
      cardWidth: fc.constantFrom('SMALL', 'MEDIUM'),
    },
    { requiredKeys: ['type', 'contents'] },
  ),
  fc.record(
    { type: fc.constant('FILE' as const), fileUrl, thumbnailUrl: fileUrl, filename: fc.constant('a.pdf'), contentType: fc.constant('application/pdf') },
    { requiredKeys: ['type', 'fileUrl'] },
  ),
) as fc.Arbitrary<RcsBody>;

test('every body Tern accepts either is refused for RBM with a reason, or maps to an AgentMessage RBM takes', () => {
  let mapped = 0;
  let refused = 0;
  fc.assert(
    fc.property(body, fc.constantFrom('OTP', 'TRANSACTIONAL', 'MARKETING', undefined), fc.integer({ min: 1, max: 20 * 86_400 }), (b, flow, validity) => {
      fc.pre(rcsBodyProblem(b) === null);
      const problem = rbmBodyProblem(b);
      if (problem) {
        refused++;
        assert.ok(problem.path.length > 0 && problem.message.length > 0);
        return;
      }
      mapped++;
      const now = Date.now();
      const m = agentMessage(b, flow, now + validity * 1000, now);
      assert.doesNotThrow(
        () => checkAgentMessage(JSON.parse(JSON.stringify(m))),
        (err: Error) => `${err.message} for ${JSON.stringify(m)}`,
      );
    }),
    { seed: SEED, numRuns: 400 },
  );
  assert.ok(mapped > 50 && refused > 10, `${mapped} mapped, ${refused} refused`);
});

test('ttl: what is left of the validity, whole seconds, at least 1 s and at most 15 days', () => {
  assert.equal(ttlOf(null, 0), undefined);
  assert.equal(ttlOf(10_500, 0), '11s');
  assert.equal(ttlOf(-5_000, 0), '1s');
  assert.equal(ttlOf(30 * 86_400_000, 0), `${15 * 86_400}s`);
});

test('messageId: the message id for its first placement, another stable UUID for each later one', () => {
  const id = '01937d2e-8f00-7abc-8def-0123456789ab';
  assert.equal(rbmMessageId({ id, attempt: 1 }), id);
  const second = rbmMessageId({ id, attempt: 2 });
  assert.match(second, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(rbmMessageId({ id, attempt: 2 }), second);
  assert.notEqual(rbmMessageId({ id, attempt: 3 }), second);
});

test('X-Goog-Signature holds for the client token’s HMAC of the data, and for nothing else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.string({ minLength: 1, maxLength: 40 }), fc.nat(), (bytes, token, flip) => {
      const data = Buffer.from(bytes);
      const sig = createHmac('sha512', token).update(data).digest();
      assert.ok(signatureHolds(data, sig.toString('base64'), token));
      const bad = Buffer.from(sig);
      bad[flip % bad.length] = bad[flip % bad.length]! ^ 1;
      assert.ok(!signatureHolds(data, bad.toString('base64'), token));
      assert.ok(!signatureHolds(data, sig.toString('base64'), `${token}x`));
      assert.ok(!signatureHolds(data, undefined, token));
    }),
    { seed: SEED, numRuns: 200 },
  );
});

test('webhook bodies that are not RBM requests, and data that is not an event, are told apart', () => {
  for (const b of [undefined, null, 'x', [], {}, { message: {} }, { message: { data: 42 } }, { message: { data: '***' } }, { clientToken: 'a' }]) {
    assert.equal(readWebhook(b).kind, 'invalid', JSON.stringify(b));
  }
  assert.equal(coreEvents(Buffer.from('not json'), 'c', 'agent'), null);
  assert.equal(coreEvents(Buffer.from('[]'), 'c', 'agent'), null);
  assert.deepEqual(coreEvents(Buffer.from(JSON.stringify({ eventType: 'AGENT_LAUNCHED', messageId: 'm' })), 'c', 'agent'), []);
  const [mo] = coreEvents(
    Buffer.from(
      JSON.stringify({
        senderPhoneNumber: '+33612345678',
        messageId: 'M1',
        userFile: { payload: { mimeType: 'image/png', fileSizeBytes: 3, fileName: 'a.png', fileUri: 'https://rcs.example/a.png' } },
      }),
    ),
    'c',
    'agent',
  )!;
  assert.deepEqual(mo, {
    kind: 'mo',
    connector: 'c',
    type: 'RCS',
    from: '33612345678',
    to: 'agent',
    body: { type: 'FILE', fileUrl: 'https://rcs.example/a.png', filename: 'a.png', contentType: 'image/png' },
    at: (mo as { at: number }).at,
    upstreamId: 'M1',
  });
});

test('an RBM definition is checked field by field', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const key = JSON.stringify({
    client_email: 'a@b.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    token_uri: 'https://oauth2.googleapis.com/token',
  });
  const secrets = { serviceAccountKey: key, webhookClientToken: 't' };
  const ok = RBM_KIND.validate({ agentId: 'my_agent' }, secrets);
  assert.equal(ok.settings.baseUrl, 'https://europe-rcsbusinessmessaging.googleapis.com');
  const refused = (settings: Record<string, unknown>, s: Record<string, string>, field: string) =>
    assert.throws(
      () => RBM_KIND.validate(settings, s),
      (e: unknown) => e instanceof CoreError && e.field === field,
    );
  refused({}, secrets, 'agentId');
  refused({ agentId: 'a', tps: 3 }, secrets, 'tps');
  refused({ agentId: 'a', baseUrl: 'ftp://x' }, secrets, 'baseUrl');
  refused({ agentId: 'a' }, { ...secrets, serviceAccountKey: '{}' }, 'serviceAccountKey');
  refused({ agentId: 'a' }, { ...secrets, serviceAccountKey: JSON.stringify({ ...JSON.parse(key), private_key: 'nope' }) }, 'serviceAccountKey');
  refused({ agentId: 'a' }, { serviceAccountKey: key }, 'webhookClientToken');
});

test('the fake RBM refuses what RBM refuses, in Google’s error shape', async () => {
  const bad = (m: unknown, why: RegExp) => assert.throws(() => checkAgentMessage(m), why);
  const text = (t: string, more: Record<string, unknown> = {}) => ({ contentMessage: { text: t, ...more } });
  bad({ contentMessage: { text: 'a' }, priority: 1 }, /Unknown name "priority"/);
  bad(text('x'.repeat(3073)), /maximum length of 3072/);
  bad(text('a', { suggestions: Array.from({ length: 12 }, () => ({ reply: { text: 'a', postbackData: 'a' } })) }), /more than 11/);
  bad(text('a', { suggestions: [{ reply: { text: 'x'.repeat(26), postbackData: 'a' } }] }), /maximum length of 25/);
  bad(text('a', { suggestions: [{ reply: { text: 'a' }, action: { text: 'a', shareLocationAction: {} } }] }), /exactly one of reply, action/);
  bad(text('a', { richCard: { carouselCard: { cardWidth: 'MEDIUM', cardContents: [{ title: 'a' }] } } }), /exactly one of text/);
  bad({ contentMessage: { richCard: { carouselCard: { cardWidth: 'MEDIUM', cardContents: [{ title: 'a' }] } } } }, /2 to 10 cards/);
  bad({ ...text('a'), ttl: `${15 * 86_400 + 1}s` }, /at most 15 days/);
  bad({ ...text('a'), ttl: '10s', expireTime: '2030-01-01T00:00:00Z' }, /only one of ttl and expireTime/);
  bad({ ...text('a'), messageTrafficType: 'OTP' }, /message_traffic_type/);

  const fake = await new FakeRbm({ agentId: 'agent', clientToken: 't' }).start();
  try {
    const url = `${fake.url}/v1/phones/+33612345678/agentMessages?messageId=01937d2e-8f00-7abc-8def-0123456789ab&agentId=agent`;
    const post = (token: string, body: unknown) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const noToken = await post('nope', text('a'));
    assert.equal(noToken.status, 401);
    assert.deepEqual(Object.keys(((await noToken.json()) as { error: object }).error).sort(), ['code', 'message', 'status']);
    const token = await new AccessTokens(JSON.parse(fake.serviceAccountKey()), 5_000).token();
    const unknown = await post(token, { contentMessage: { text: 'a', colour: 'red' } });
    assert.equal(unknown.status, 400);
    assert.equal(((await unknown.json()) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
    assert.equal((await post(token, text('a'))).status, 200);
    const again = await post(token, text('a'));
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: { status: string } }).error.status, 'ALREADY_EXISTS');
    const forged = {
      ...JSON.parse(fake.serviceAccountKey()),
      private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    };
    await assert.rejects(new AccessTokens(forged, 5_000).token(), /invalid_grant: Invalid JWT Signature/);
  } finally {
    await fake.close();
  }
});
