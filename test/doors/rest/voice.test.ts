import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createApp } from '../../../src/app/index.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { parseWav } from '../../../src/speech/wav.ts';
import { voiceBillingUnits, VOICE_BILLING_BLOCK_MS } from '../../../src/core/voice/service.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const VOICE_FR = 0.035;
const RETRY_MS = 150;
const SOXI = spawnSync('soxi', ['-h'], { stdio: 'ignore' }).error === undefined;

async function sendVoice(server: TestServer, t: Tenant, body: Record<string, unknown>) {
  return request(server, 'POST', '/voice/v1/messages', { key: t.key, body });
}

async function finalStatus(server: TestServer, t: Tenant, id: string): Promise<any> {
  return eventually(
    async () => {
      const r = await request(server, 'GET', `/voice/v1/messages/${id}`, { key: t.key });
      return ['ENROUTE', 'SCHEDULED'].includes(r.body.status.value) ? undefined : r.body;
    },
    15_000,
    `final status of ${id}`,
  );
}

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** Checks the WAV with sox's soxi, when installed: rate, channels, and the duration it measures. */
function soxiCheck(wav: Buffer, expectedMs: number): void {
  if (!SOXI) return;
  const dir = mkdtempSync(join(tmpdir(), 'tern-wav-'));
  try {
    const file = join(dir, 'a.wav');
    writeFileSync(file, wav);
    assert.equal(execFileSync('soxi', ['-r', file], { encoding: 'utf8' }).trim(), '8000');
    assert.equal(execFileSync('soxi', ['-c', file], { encoding: 'utf8' }).trim(), '1');
    assert.equal(execFileSync('soxi', ['-b', file], { encoding: 'utf8' }).trim(), '16');
    const seconds = Number(execFileSync('soxi', ['-D', file], { encoding: 'utf8' }).trim());
    assert.ok(Math.abs(seconds * 1000 - expectedMs) < 5, `soxi says ${seconds}s, Tern says ${expectedMs}ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('voice billing units', () => {
  test('one unit per started 30 s, at least one', () => {
    assert.equal(VOICE_BILLING_BLOCK_MS, 30_000);
    assert.equal(voiceBillingUnits(0), 1);
    assert.equal(voiceBillingUnits(1), 1);
    assert.equal(voiceBillingUnits(30_000), 1);
    assert.equal(voiceBillingUnits(30_001), 2);
    assert.equal(voiceBillingUnits(60_000), 2);
    assert.equal(voiceBillingUnits(95_000), 4);
  });
});

forEachDialect('Voice', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    server = await startTestServer(dialect, { TERN_SIMULATOR_VOICE_RETRY_MS: String(RETRY_MS) });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('send: 201 with the message object, real speech as 8 kHz mono WAV of plausible duration, billed per started 30 s', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 2 });
    const text = 'Votre rendez-vous de demain matin est confirmé pour neuf heures trente. Merci et à bientôt.';
    const res = await sendVoice(server, t, {
      recipient: { to: '+33612345678' },
      body: { text, title: 'Cabinet Martin' },
      refClient: 'rdv-42',
      callbackUrlStatus: `${receiver.url}/voice-status`,
    });
    assert.equal(res.status, 201, res.text);
    const m = res.body;
    assert.equal(m.type, 'VOICE');
    assert.equal(m.direction, 'MT');
    assert.equal(m.channel.type, 'VOICE');
    assert.equal(m.recipient.to, '33612345678');
    assert.deepEqual(m.body, { text, title: 'Cabinet Martin', language: 'fr-FR' });
    assert.equal(m.refClient, 'rdv-42');
    assert.equal(m.status.value, 'ENROUTE');
    assert.match(m.href, new RegExp(`/voice/v1/messages/${m.messageId}$`));
    assert.equal(typeof m.duration, 'number');
    // 15 words of message and 2 of title: between 1 and 5 words a second is speech at a plausible pace.
    const spoken = words(text) + 2;
    assert.ok(m.duration > spoken / 5 && m.duration < spoken, `duration ${m.duration}s for ${spoken} words`);
    const units = Math.ceil(m.duration / 30);
    assert.deepEqual(m.price, { amount: round6(units * VOICE_FR), currency: 'EUR', kind: 'VOICE' });

    const audio = await fetch(`${server.url}/voice/v1/messages/${m.messageId}/audio`, { headers: { 'x-api-key': t.key } });
    assert.equal(audio.status, 200);
    assert.equal(audio.headers.get('content-type'), 'audio/wav');
    const wav = Buffer.from(await audio.arrayBuffer());
    assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
    assert.equal(wav.toString('latin1', 8, 12), 'WAVE');
    const info = parseWav(wav);
    assert.equal(info.sampleRate, 8000);
    assert.equal(info.channels, 1);
    assert.equal(info.bitsPerSample, 16);
    assert.equal(info.audioFormat, 1);
    assert.equal(info.durationMs, Math.round(m.duration * 1000));
    assert.equal(Number(audio.headers.get('x-audio-duration-ms')), info.durationMs);
    soxiCheck(wav, info.durationMs);
    // Not silence: speech has energy.
    let peak = 0;
    for (let i = info.dataOffset; i + 1 < info.dataOffset + info.dataLength; i += 2) peak = Math.max(peak, Math.abs(wav.readInt16LE(i)));
    assert.ok(peak > 2000, `peak amplitude ${peak}`);

    const final = await finalStatus(server, t, m.messageId);
    assert.equal(final.status.value, 'DELIVERED');
    assert.equal(final.price.amount, round6(units * VOICE_FR));
    assert.equal(await balance(server, t), round6(2 - units * VOICE_FR));

    // The status webhook is the same JSON message object as for SMS.
    const hook = await eventually(
      async () => receiver.delivered().find((r) => r.url === '/voice-status' && r.json?.messageId === m.messageId && r.json.status.value === 'DELIVERED'),
      10_000,
      'voice status webhook',
    );
    assert.equal(hook.method, 'POST');
    assert.equal(hook.json.type, 'VOICE');
    assert.equal(hook.json.duration, m.duration);
  });

  test('language: each is rendered in its own voice; a longer text lasts longer', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 2 });
    const durations: Record<string, number> = {};
    for (const [language, text] of [
      ['en-GB', 'Your parcel will be delivered tomorrow between nine and eleven.'],
      ['de-DE', 'Ihr Paket wird morgen zwischen neun und elf Uhr geliefert.'],
      ['es-ES', 'Su paquete será entregado mañana entre las nueve y las once.'],
    ] as const) {
      const res = await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text, language } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.body.language, language);
      assert.ok(res.body.body.title.length > 0, 'a default title in the language');
      durations[language] = res.body.duration;
    }
    assert.equal(
      (await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Hi.', language: 'en-GB' } })).body.body.title,
      'Hello, here is a voice message.',
    );
    const short = (await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Bonjour.', title: 'Test' } })).body.duration;
    const long = (
      await sendVoice(server, t, {
        recipient: { to: '33612345678' },
        body: { text: 'Bonjour. Ceci est un message beaucoup plus long, avec plusieurs phrases, qui doit durer nettement plus longtemps.', title: 'Test' },
      })
    ).body.duration;
    assert.ok(long > short * 2, `long ${long}s vs short ${short}s`);
  });

  test('simulated calls: busy and no answer retried 3 times then UNDELIVERED and refunded; invalid refunded; answered charged', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const cases = [
      { to: '33612340001', status: 'UNDELIVERED', detail: 'BUSY', attempts: 3, charged: false },
      { to: '33612340002', status: 'UNDELIVERED', detail: 'NO_ANSWER', attempts: 3, charged: false },
      { to: '33612340003', status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER', attempts: 1, charged: false },
      { to: '33612340004', status: 'DELIVERED', detail: undefined, attempts: 1, charged: true },
    ];
    const sent = [];
    for (const c of cases) {
      const res = await sendVoice(server, t, { recipient: { to: c.to }, body: { text: 'Rappel de votre rendez-vous.' } });
      assert.equal(res.status, 201, res.text);
      assert.ok(res.body.price.amount > 0, 'charged at accept');
      sent.push({ ...c, m: res.body });
    }
    let expected = 1;
    for (const s of sent) {
      const final = await finalStatus(server, t, s.m.messageId);
      assert.equal(final.status.value, s.status, s.to);
      assert.equal(final.status.detail, s.detail, s.to);
      assert.equal(final.price.amount, s.charged ? s.m.price.amount : 0, `${s.to} price after the call`);
      if (s.charged) expected -= s.m.price.amount;
      // A call's outcome may be recorded a moment before its placement is (as a receipt may come before its submit's
      // answer): the count of placements catches up.
      const placements = async () =>
        (await server.app.store.db.selectFrom('messages').select('attempts').where('id', '=', s.m.messageId).executeTakeFirstOrThrow()).attempts;
      await eventually(async () => ((await placements()) === s.attempts ? true : undefined), 5_000, `${s.to}: ${s.attempts} calls placed`).catch(async () =>
        assert.equal(await placements(), s.attempts, `${s.to} calls placed`),
      );
      const events = await request(server, 'GET', `/voice/v1/messages/${s.m.messageId}/events`, { key: t.key });
      assert.deepEqual(
        events.body.items.map((e: any) => e.status),
        ['ENROUTE', s.status],
      );
      if (s.attempts === 3) {
        // Three attempts two retry intervals apart: the outcome cannot come before them.
        const [first, last] = events.body.items.map((e: any) => Date.parse(e.date));
        assert.ok(last - first >= 2 * RETRY_MS, `ended ${last - first} ms after the first attempt`);
      }
    }
    await eventually(async () => ((await balance(server, t)) === round6(expected) ? true : undefined), 5_000, 'refunds');
    const ledger = await server.app.store.db
      .selectFrom('ledger')
      .select(['kind', 'amount', 'message_id'])
      .where('organisation_id', '=', t.organisationId)
      .execute();
    assert.equal(ledger.filter((l) => l.kind === 'CHARGE').length, 4);
    assert.deepEqual(
      ledger
        .filter((l) => l.kind === 'REFUND')
        .map((l) => l.message_id)
        .sort(),
      sent
        .filter((s) => !s.charged)
        .map((s) => s.m.messageId)
        .sort(),
    );
  });

  test('consumption: voice quantity and charges under searchBy[channel.type]=VOICE, refunds subtracted', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const ok = await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Premier appel.' } });
    const busy = await sendVoice(server, t, { recipient: { to: '33612340001' }, body: { text: 'Second appel.' } });
    await finalStatus(server, t, ok.body.messageId);
    await finalStatus(server, t, busy.body.messageId);
    const res = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=VOICE', { key: t.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.items.length, 1);
    const record = res.body.items[0];
    assert.equal(record.type, 'VOICE');
    assert.equal(record.channel.channelId, t.channelId);
    assert.equal(record.quantity, Math.ceil(ok.body.duration / 30));
    assert.deepEqual(record.price, { amount: ok.body.price.amount, currency: 'EUR' });
    const statuses = record.items.flatMap((i: any) => i.statuses.map((s: any) => s.value)).sort();
    assert.deepEqual(statuses, ['DELIVERED', 'UNDELIVERED']);
    const sms = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=SMS', { key: t.key });
    assert.deepEqual(sms.body.items, []);
  });

  test('an invalid number is accepted UNDELIVERABLE at no charge; a scheduled call can be cancelled and is refunded', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const invalid = await sendVoice(server, t, { recipient: { to: '33012345678' }, body: { text: 'Bonjour.' } });
    assert.equal(invalid.status, 201, invalid.text);
    assert.equal(invalid.body.status.value, 'UNDELIVERABLE');
    assert.equal(invalid.body.status.detail, 'INVALID_PHONE_NUMBER');
    assert.equal(invalid.body.price.amount, 0);

    const at = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Plus tard.' }, sentDate: at });
    assert.equal(scheduled.status, 201);
    assert.equal(scheduled.body.status.value, 'SCHEDULED');
    assert.equal(scheduled.body.sentDate, at);
    assert.equal(await balance(server, t), round6(1 - scheduled.body.price.amount));
    const cancelled = await request(server, 'DELETE', `/voice/v1/messages/${scheduled.body.messageId}`, { key: t.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status.value, 'CANCELLED');
    assert.equal(await balance(server, t), 1);
    assertError(await request(server, 'DELETE', `/voice/v1/messages/${scheduled.body.messageId}`, { key: t.key }), 409, '409.001');

    const list = await request(server, 'GET', '/voice/v1/messages', { key: t.key });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.items.map((m: any) => m.messageId).sort(), [invalid.body.messageId, scheduled.body.messageId].sort());
  });

  test('Idempotency-Key: a retried send answers the first message and is charged once; another body is 422', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const headers = { 'idempotency-key': 'call-42' };
    const body = { recipient: { to: '33612345678' }, body: { text: 'Your code is 1 2 3 4', language: 'en-GB' } };
    const a = await request(server, 'POST', '/voice/v1/messages', { key: t.key, body, headers });
    const b = await request(server, 'POST', '/voice/v1/messages', { key: t.key, body, headers });
    assert.equal(a.status, 201, a.text);
    assert.equal(b.status, 201, b.text);
    assert.equal(b.body.messageId, a.body.messageId);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    const org = await request(server, 'GET', `/commons/v1/organisations/${t.organisationId}`, { key: t.key });
    assert.equal(org.body.balance.amount, Math.round((1 - a.body.price.amount) * 1e6) / 1e6);
    const other = await request(server, 'POST', '/voice/v1/messages', { key: t.key, body: { ...body, body: { text: 'Another', language: 'en-GB' } }, headers });
    assertError(other, 422, '422.001');
  });

  test('bad requests name the field; an SMS key gets 403.005; audio of another channel is 404', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const sms = await createTenant(server, { type: 'SMS', balance: 1 });
    const base = { recipient: { to: '33612345678' }, body: { text: 'Bonjour.' } };
    assertError(await sendVoice(server, sms, base), 403, '403.005');
    assertError(await sendVoice(server, t, { ...base, body: {} }), 400, '400.001', /body\.body\.text|body\.text/);
    assertError(await sendVoice(server, t, { ...base, body: { text: 'x'.repeat(161) } }), 400, '400.001', /text/);
    assertError(await sendVoice(server, t, { ...base, body: { text: 'Hi', language: 'ja-JP' } }), 400, '400.001', /language/);
    assertError(await sendVoice(server, t, { ...base, recipient: { to: 'not a number' } }), 400, '400.003', /recipient\.to/);
    assertError(await sendVoice(server, t, { ...base, sentDate: 'tomorrow' }), 400, '400.007', /sentDate/);
    assertError(await sendVoice(server, t, { ...base, callbackUrlStatus: 'ftp://x' }), 400, '400.001', /callbackUrlStatus/);
    assertError(await request(server, 'GET', '/voice/v1/messages', { key: sms.key }), 403, '403.005');

    const other = await createTenant(server, { type: 'VOICE', balance: 1 });
    const m = await sendVoice(server, other, base);
    assertError(await request(server, 'GET', `/voice/v1/messages/${m.body.messageId}/audio`, { key: t.key }), 404, '404.001');
    assertError(await request(server, 'GET', `/voice/v1/messages/${m.body.messageId}`, { key: t.key }), 404, '404.001');
    // An SMS message id is no voice message.
    const smsMessage = await request(server, 'POST', '/sms/v1/messages', { key: sms.key, body: { recipient: { to: '33612345678' }, body: { text: 'x' } } });
    assertError(await request(server, 'GET', `/voice/v1/messages/${smsMessage.body.messageId}`, { key: sms.key }), 403, '403.005');
  });

  test('text-to-speech unavailable: REST answers 503 naming the problem, the legacy interface 31', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const voice = server.app.services.voice;
    await voice.checkAvailability(async () => ({ ok: false, reason: 'espeak-ng not found: install the Debian package espeak-ng' }));
    try {
      const res = await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Bonjour.' } });
      assertError(res, 503, '503.001', /espeak-ng not found/);
      const legacy = await request(server, 'GET', `/http/1.6/sendVoiceMessage.do?accessToken=${t.key}&message=Bonjour&numero=0612345678`);
      assert.equal(legacy.status, 503);
      assert.match(legacy.text, /^31 \| Internal error: text-to-speech is unavailable: espeak-ng not found/);
      assert.equal(await balance(server, t), 1, 'nothing charged');
    } finally {
      await voice.checkAvailability();
    }
    assert.equal((await sendVoice(server, t, { recipient: { to: '33612345678' }, body: { text: 'Bonjour.' } })).status, 201);
  });
});

describe('Voice without espeak-ng installed', () => {
  /** A Tern on SQLite that finds no program at all on PATH while it starts and takes one voice send. */
  async function withoutPrograms(env: Record<string, string>, fn: (server: TestServer, lines: () => any[]) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), 'tern-test-'));
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const config = loadConfig({
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: '0',
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: '0',
      TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
      TERN_ADMIN_KEY: 'test-admin-key-0123456789',
      ...env,
    });
    const path = process.env.PATH;
    process.env.PATH = join(dir, 'no-programs-here');
    const app = await createApp(config, { logger });
    try {
      const { httpPort: port } = await app.start();
      const server = { url: `http://127.0.0.1:${port}`, adminKey: 'test-admin-key-0123456789' } as TestServer;
      await fn(server, () => lines.map((l) => JSON.parse(l)));
    } finally {
      process.env.PATH = path;
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('the built-in engine (the default) speaks: a voice send is accepted and its audio served', async () => {
    await withoutPrograms({}, async (server, lines) => {
      const t = await createTenant(server, { type: 'VOICE', balance: 1 });
      const res = await request(server, 'POST', '/voice/v1/messages', {
        key: t.key,
        body: { recipient: { to: '33612345678' }, body: { text: 'Votre code est 482913.' } },
      });
      assert.equal(res.status, 201, res.text);
      const audio = await fetch(`${server.url}/voice/v1/messages/${res.body.messageId}/audio`, { headers: { 'x-api-key': t.key } });
      assert.equal(audio.status, 200);
      const info = parseWav(Buffer.from(await audio.arrayBuffer()));
      assert.equal(info.sampleRate, 8000);
      assert.equal(info.durationMs, Math.round(res.body.duration * 1000));
      // The code is read digit by digit with pauses: far longer than "four hundred and eighty-two thousand…".
      assert.ok(res.body.duration > 4, `${res.body.duration} s`);
      const ready = lines().find((l) => /text-to-speech ready/.test(l.msg));
      assert.ok(ready, 'the engine is named in the log');
      assert.equal(ready.engine, 'eSpeak NG (WebAssembly)');
    });
  });

  test('TERN_TTS_ENGINE=espeak-ng without the program: the server starts, warns naming the problem, and refuses voice sends with 503', async () => {
    await withoutPrograms({ TERN_TTS_ENGINE: 'espeak-ng' }, async (server, lines) => {
      const t = await createTenant(server, { type: 'VOICE', balance: 1 });
      assertError(
        await request(server, 'POST', '/voice/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'Bonjour.' } } }),
        503,
        '503.001',
        /espeak-ng not found/,
      );
      const warning = lines().find((l) => l.level === 40 && /text-to-speech unavailable/.test(l.msg));
      assert.ok(warning, 'a warning in the log');
      assert.match(warning.msg, /espeak-ng not found: install the Debian package espeak-ng/);
    });
  });
});
