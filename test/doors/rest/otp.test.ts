// The verify API over REST on a real server: a one-time password sent, read on the simulated handset the way a person
// reads it, checked; wrong codes, attempts used up, expiry, resends (cooldown, sends an hour), codes read out by a
// call, and the call that follows a text message not delivered in time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { parseWav } from '../../../src/speech/wav.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually, sleep } from '../../support/wait.ts';

const COOLDOWN_S = 1;
const SENDS_PER_HOUR = 4;

interface Org extends Tenant {
  voiceChannelId: string;
  voiceKey: string;
}

/** An organisation with an SMS channel (its status URL on `receiver`), a VOICE channel and a key for each. */
async function organisation(server: TestServer, receiver: Receiver, path: string): Promise<Org> {
  const t = await createTenant(server, { balance: 20, channel: { defaultCallbackUrlStatus: `${receiver.url}${path}` } });
  const voice = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
    key: server.adminKey,
    body: { name: 'Calls', type: 'VOICE', flow: 'TRANSACTIONAL' },
  });
  assert.equal(voice.status, 201, voice.text);
  const key = await request(server, 'POST', `/admin/v1/channels/${voice.body.channelId}/credentials`, {
    key: server.adminKey,
    body: { name: 'k', roles: ['ADMIN'] },
  });
  assert.equal(key.status, 201, key.text);
  return { ...t, voiceChannelId: voice.body.channelId, voiceKey: key.body.value };
}

function ask(server: TestServer, t: Tenant, body: Record<string, unknown>) {
  return request(server, 'POST', '/sms/v1/otp', { key: t.key, body });
}

async function sent(server: TestServer, t: Tenant, body: Record<string, unknown>): Promise<any> {
  const r = await ask(server, t, body);
  assert.equal(r.status, 201, r.text);
  return r.body;
}

function check(server: TestServer, t: Tenant, otpId: string, code: string) {
  return request(server, 'POST', `/sms/v1/otp/${otpId}/check`, { key: t.key, body: { code } });
}

/** What a simulated phone received, newest first. */
async function inbox(server: TestServer, msisdn: string): Promise<any[]> {
  const r = await request(server, 'GET', `/admin/v1/simulator/handsets/${msisdn}/messages`, { key: server.adminKey });
  assert.equal(r.status, 200, r.text);
  return r.body.items;
}

/** The code in the newest text the phone received once it holds `count` of them: digits of an SMS, or as a call read it out. */
async function codeOnHandset(server: TestServer, msisdn: string, count = 1): Promise<string> {
  const items = await eventually(
    async () => {
      const got = await inbox(server, msisdn);
      return got.length >= count ? got : undefined;
    },
    10_000,
    `message ${count} on handset ${msisdn}`,
  );
  const m = /code is ([0-9A-Z](?:, [0-9A-Z])+|[0-9A-Z]+)/.exec(items[0].text);
  assert.ok(m, `no code in "${items[0].text}"`);
  return m[1]!.replace(/, /g, '');
}

function webhooksFor(receiver: Receiver, path: string, event: string, otpId: string): ReceivedRequest[] {
  return receiver.requests.filter((r) => r.url === path && r.json?.event === event && r.json.otp?.otpId === otpId);
}

forEachDialect('one-time passwords (verify API)', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer(dialect, {
      TERN_OTP_COOLDOWN_SECONDS: String(COOLDOWN_S),
      TERN_OTP_SENDS_PER_HOUR: String(SENDS_PER_HOUR),
    });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('a code is sent masked, read on the handset, approved once, with an otp.approved webhook', async () => {
    const t = await organisation(server, receiver, '/approved');
    const before = Date.now();
    const otp = await sent(server, t, { recipient: { to: '+33612340101' }, refClient: 'signup-42' });
    assert.equal(otp.status, 'PENDING');
    assert.equal(otp.channel, 'SMS');
    assert.deepEqual(otp.recipient, { to: '33612340101' });
    assert.deepEqual(otp.attempts, { max: 5, used: 0 });
    assert.equal(otp.refClient, 'signup-42');
    const ttl = Date.parse(otp.expiresAt) - before;
    assert.ok(ttl > 299_000 && ttl <= 301_000, `expires in ${ttl} ms`);
    assert.equal(otp.href.endsWith(`/sms/v1/otp/${otp.otpId}`), true);

    const code = await codeOnHandset(server, '33612340101');
    assert.match(code, /^\d{6}$/);
    assert.equal(JSON.stringify(otp).includes(code), false, 'the answer never carries the code');

    // The message is an ordinary, billed message whose text is masked everywhere it is shown.
    const m = await request(server, 'GET', `/sms/v1/messages/${otp.messageId}`, { key: t.key });
    assert.equal(m.status, 200, m.text);
    assert.equal(m.body.body.text, 'Your code is ******');
    assert.equal(m.body.body.masked, true);
    assert.equal(m.body.otpId, otp.otpId);
    assert.ok(m.body.price.amount > 0, 'billed like any message');
    const list = await request(server, 'GET', '/sms/v1/messages?searchBy[refClient]=signup-42', { key: t.key });
    assert.deepEqual(
      list.body.items.map((x: any) => x.body.text),
      ['Your code is ******'],
    );
    assert.equal(list.text.includes(code), false);

    const wrong = await check(server, t, otp.otpId, code === '000000' ? '111111' : '000000');
    assert.equal(wrong.status, 200, wrong.text);
    assert.deepEqual(wrong.body, { status: 'PENDING', attempts: { max: 5, used: 1 } });
    const right = await check(server, t, otp.otpId, ` ${code.slice(0, 3)} ${code.slice(3)} `);
    assert.deepEqual(right.body, { status: 'APPROVED', attempts: { max: 5, used: 2 } });

    const hook = await eventually(() => webhooksFor(receiver, '/approved', 'otp.approved', otp.otpId)[0], 10_000, 'otp.approved webhook');
    assert.equal(hook.json.otp.status, 'APPROVED');
    assert.equal(hook.json.otp.messageId, otp.messageId);
    assert.equal(hook.body.includes(code), false);
    const { secret } = (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body;
    new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });

    // An approved code never approves again, and is settled.
    assertError(await check(server, t, otp.otpId, code), 409, '409.001', /approved already/);
    assert.equal((await request(server, 'GET', `/sms/v1/otp/${otp.otpId}`, { key: t.key })).body.status, 'APPROVED');
    assertError(await request(server, 'DELETE', `/sms/v1/otp/${otp.otpId}`, { key: t.key }), 409, '409.001', /APPROVED/);

    const metrics = (await request(server, 'GET', '/metrics')).text;
    assert.match(metrics, /tern_otp_sent_total\{channel="SMS"\} [1-9]/);
    assert.match(metrics, /tern_otp_checks_total\{result="APPROVED"\} [1-9]/);
    assert.match(metrics, /tern_otp_conversion_ratio (0\.\d+|1)/);
  });

  test('wrong codes use up the attempts: the last one cancels the code, which then never approves', async () => {
    const t = await organisation(server, receiver, '/attempts');
    const otp = await sent(server, t, { recipient: { to: '33612340102' }, maxAttempts: 3, alphabet: 'ALPHANUMERIC', codeLength: 8 });
    const code = await codeOnHandset(server, '33612340102');
    assert.match(code, /^[2-9A-HJKMNP-Z]{8}$/);
    const bad = code === '22222222' ? '33333333' : '22222222';
    assert.deepEqual((await check(server, t, otp.otpId, bad)).body, { status: 'PENDING', attempts: { max: 3, used: 1 } });
    assert.deepEqual((await check(server, t, otp.otpId, bad)).body, { status: 'PENDING', attempts: { max: 3, used: 2 } });
    assert.deepEqual((await check(server, t, otp.otpId, bad)).body, { status: 'CANCELLED', detail: 'MAX_ATTEMPTS', attempts: { max: 3, used: 3 } });
    assert.deepEqual((await check(server, t, otp.otpId, code.toLowerCase())).body, {
      status: 'CANCELLED',
      detail: 'MAX_ATTEMPTS',
      attempts: { max: 3, used: 3 },
    });
    // The number may have a new code at once: the cancelled one is not pending any more.
    const next = await sent(server, t, { recipient: { to: '33612340102' } });
    assert.notEqual(next.otpId, otp.otpId);
  });

  test('a code ends by time: EXPIRED, an otp.expired webhook, and it never approves', async () => {
    const t = await organisation(server, receiver, '/expired');
    const otp = await sent(server, t, { recipient: { to: '33612340103' }, ttlSeconds: 30 });
    assert.equal(Date.parse(otp.expiresAt) - Date.parse(otp.createdAt), 30_000);
    const code = await codeOnHandset(server, '33612340103');
    // 30 s is the shortest validity: the test makes those 30 s pass by moving the code's end to just ahead.
    const end = Date.now() + 300;
    await server.app.store.db.updateTable('otps').set({ expires_at: end, due_at: end }).where('id', '=', otp.otpId).execute();
    server.app.store.signals.fire('otp');
    const hook = await eventually(() => webhooksFor(receiver, '/expired', 'otp.expired', otp.otpId)[0], 10_000, 'otp.expired webhook');
    assert.equal(hook.json.otp.status, 'EXPIRED');
    assert.ok(Date.now() >= end);
    assert.equal((await request(server, 'GET', `/sms/v1/otp/${otp.otpId}`, { key: t.key })).body.status, 'EXPIRED');
    assert.deepEqual((await check(server, t, otp.otpId, code)).body, { status: 'EXPIRED', attempts: { max: 5, used: 0 } });
    assert.equal(webhooksFor(receiver, '/expired', 'otp.expired', otp.otpId).length, 1, 'one otp.expired');
    assertError(await request(server, 'DELETE', `/sms/v1/otp/${otp.otpId}`, { key: t.key }), 409, '409.001', /EXPIRED/);
  });

  test('resend: the same code again, refused inside the cooldown and past the sends an hour', async () => {
    const t = await organisation(server, receiver, '/resend');
    const first = await sent(server, t, { recipient: { to: '33612340104' } });
    const code = await codeOnHandset(server, '33612340104');

    const early = await ask(server, t, { recipient: { to: '33612340104' } });
    assertError(early, 429, '429.001', /^recipient\.to: a code was sent to this number 0 s ago; it can be sent again in 1 s$/);
    assert.equal(early.headers.get('retry-after'), '1');

    const seen = new Set([first.messageId]);
    for (let n = 2; n <= SENDS_PER_HOUR; n++) {
      await sleep(COOLDOWN_S * 1000 + 50);
      const again = await sent(server, t, { recipient: { to: '33612340104' } });
      assert.equal(again.otpId, first.otpId, 'the pending code is sent again');
      assert.equal(seen.has(again.messageId), false, 'in a new message');
      seen.add(again.messageId);
      assert.equal(await codeOnHandset(server, '33612340104', n), code, 'with the same code');
    }
    await sleep(COOLDOWN_S * 1000 + 50);
    const capped = await ask(server, t, { recipient: { to: '33612340104' } });
    assertError(
      capped,
      429,
      '429.001',
      new RegExp(`^recipient\\.to: ${SENDS_PER_HOUR} codes were sent to this number in the last hour; at most ${SENDS_PER_HOUR}$`),
    );
    assert.ok(Number(capped.headers.get('retry-after')) > 3_590, `retry-after ${capped.headers.get('retry-after')}`);
    // Another number is not concerned.
    await sent(server, t, { recipient: { to: '33612340105' } });
    assert.deepEqual((await check(server, t, first.otpId, code)).body.status, 'APPROVED');
  });

  test('channel VOICE: a call reads the code out digit by digit, its audio rendered and never served', async () => {
    const t = await organisation(server, receiver, '/voice');
    const otp = await sent(server, t, { recipient: { to: '33612340106' }, channel: 'VOICE', codeLength: 4, locale: 'en-GB' });
    assert.equal(otp.channel, 'VOICE');
    const heard = await eventually(async () => (await inbox(server, '33612340106'))[0], 15_000, 'the call');
    assert.equal(heard.type, 'VOICE');
    assert.match(heard.text, /^Hello, here is a voice message\.\nYour code is \d, \d, \d, \d$/);
    const code = await codeOnHandset(server, '33612340106');

    const call = await eventually(
      async () => {
        const r = await request(server, 'GET', `/voice/v1/messages/${otp.messageId}`, { key: t.voiceKey });
        assert.equal(r.status, 200, r.text);
        return r.body.status.value === 'DELIVERED' ? r : undefined;
      },
      10_000,
      'the call answered',
    );
    assert.equal(call.body.body.text, 'Your code is ****');
    assert.equal(call.body.body.masked, true);
    assert.ok(call.body.duration > 1, `duration ${call.body.duration}`);
    const row = await server.app.store.db.selectFrom('voice_audio').selectAll().where('message_id', '=', otp.messageId).executeTakeFirstOrThrow();
    const wav = parseWav(Buffer.from(row.wav));
    assert.equal(wav.sampleRate, 8000);
    assert.ok(wav.durationMs > 1_000, `audio of ${wav.durationMs} ms`);
    assertError(await request(server, 'GET', `/voice/v1/messages/${otp.messageId}/audio`, { key: t.voiceKey }), 404, '404.001', /one-time password/);

    assert.equal((await check(server, t, otp.otpId, code)).body.status, 'APPROVED');
  });

  test('a text message not delivered in time is followed by a call that reads the same code out', async () => {
    const t = await organisation(server, receiver, '/fallback');
    // Text messages to 3361239… go through a simulated operator that takes them and reports them delivered only after
    // 10 minutes; calls still go through the simulated voice network.
    const slow = await request(server, 'POST', '/admin/v1/connectors', {
      key: server.adminKey,
      body: { name: 'slow-sms', type: 'SIMULATOR', receiptLatencyMs: 600_000 },
    });
    assert.equal(slow.status, 201, slow.text);
    const route = await request(server, 'POST', '/admin/v1/routes', {
      key: server.adminKey,
      body: { name: 'slow texts', priority: 1, match: { prefix: '3361239', type: 'SMS' }, connectors: [{ connector: 'slow-sms' }] },
    });
    assert.equal(route.status, 201, route.text);
    const otp = await sent(server, t, { recipient: { to: '33612390101' }, fallbackAfterSeconds: 5 });
    assert.equal(otp.channel, 'SMS');
    // A text message that is delivered in time has no call after it.
    const ok = await sent(server, t, { recipient: { to: '33612340107' }, fallbackAfterSeconds: 5 });
    const after = await eventually(
      async () => {
        const r = await request(server, 'GET', `/sms/v1/otp/${otp.otpId}`, { key: t.key });
        return r.body.channel === 'VOICE' ? r.body : undefined;
      },
      15_000,
      'the fallback call',
    );
    assert.notEqual(after.messageId, otp.messageId);
    assert.equal(after.status, 'PENDING');
    const heard = await eventually(async () => (await inbox(server, '33612390101'))[0], 10_000, 'the call');
    assert.equal(heard.type, 'VOICE');
    assert.equal(heard.messageId, after.messageId);
    const code = await codeOnHandset(server, '33612390101');
    assert.equal((await check(server, t, otp.otpId, code)).body.status, 'APPROVED');
    const sms = await request(server, 'GET', `/sms/v1/messages/${otp.messageId}`, { key: t.key });
    assert.equal(sms.body.status.value, 'ENROUTE', 'the text message is still on its way');

    await codeOnHandset(server, '33612340107');
    await sleep(Math.max(0, Date.parse(ok.createdAt) + 5_500 - Date.now()));
    const still = await request(server, 'GET', `/sms/v1/otp/${ok.otpId}`, { key: t.key });
    assert.equal(still.body.channel, 'SMS');
    assert.equal(still.body.messageId, ok.messageId);
    assert.equal((await inbox(server, '33612340107')).length, 1);
  });

  test('cancelled by the client, and requests refused with the field named', async () => {
    const t = await organisation(server, receiver, '/errors');
    const otp = await sent(server, t, { recipient: { to: '33612340108' } });
    const cancelled = await request(server, 'DELETE', `/sms/v1/otp/${otp.otpId}`, { key: t.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'CANCELLED');
    assert.equal(cancelled.body.detail, 'CANCELLED_BY_USER');
    const code = await codeOnHandset(server, '33612340108');
    assert.equal((await check(server, t, otp.otpId, code)).body.status, 'CANCELLED');

    assertError(await ask(server, t, { recipient: { to: '33612340109' }, template: 'Hello' }), 400, '400.001', /^body\.template: must contain \{code\}/);
    assertError(await ask(server, t, { recipient: { to: '33612340109' }, codeLength: 3 }), 400, '400.001', /^body\.codeLength/);
    assertError(await ask(server, t, { recipient: { to: '33612340109' }, ttlSeconds: 20 }), 400, '400.001', /^body\.ttlSeconds/);
    assertError(await ask(server, t, { recipient: { to: '0612340109' } }), 400, '400.003', /^body\.recipient\.to/);
    assertError(
      await ask(server, t, { recipient: { to: '33612340109' }, channel: 'VOICE', fallbackAfterSeconds: 10 }),
      400,
      '400.001',
      /^body\.fallbackAfterSeconds: a call is a fallback/,
    );
    assertError(
      await ask(server, t, { recipient: { to: '33612340109' }, fallbackAfterSeconds: 60, ttlSeconds: 60 }),
      400,
      '400.001',
      /^body\.fallbackAfterSeconds: must be shorter than ttlSeconds/,
    );
    assertError(
      await ask(server, t, { recipient: { to: '33612340109' }, channel: 'VOICE', template: `${'x'.repeat(150)} {code}` }),
      400,
      '400.001',
      /^body\.template: read out with its code/,
    );
    assertError(await check(server, t, otp.otpId, ' - '), 400, '400.001', /^body\.code: is required/);

    const smsOnly = await createTenant(server, { balance: 5 });
    assertError(
      await ask(server, smsOnly, { recipient: { to: '33612340109' }, channel: 'VOICE' }),
      409,
      '409.001',
      /^body\.channel: the organisation has no VOICE channel/,
    );
    assertError(await request(server, 'GET', `/sms/v1/otp/${otp.otpId}`, { key: smsOnly.key }), 404, '404.001');
    assertError(await check(server, smsOnly, otp.otpId, code), 404, '404.001');
    assertError(await request(server, 'POST', '/sms/v1/otp', { key: t.voiceKey, body: { recipient: { to: '33612340109' } } }), 403, '403.005');
    assertError(await request(server, 'GET', '/sms/v1/otp/0190a0a0-0000-7000-8000-000000000000', { key: t.key }), 404, '404.001');
    assert.equal((await inbox(server, '33612340109')).length, 0, 'nothing was sent for a refused request');
  });
});
