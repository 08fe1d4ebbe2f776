import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeWav } from '../../../src/speech/wav.ts';
import type { ReceiptEvent } from '../../../src/core/ports.ts';
import { finalAnswer } from '../../../src/connectors/sip/call.ts';
import { SipConnector } from '../../../src/connectors/sip/connector.ts';
import { decodeG711 } from '../../../src/connectors/sip/g711.ts';
import { parseSipSettings, type SipSettings } from '../../../src/connectors/sip/settings.ts';
import { connectorHarness, HarnessContext, outbound } from '../harness.ts';
import { type Behaviour, TestTrunk, TRUNK_ADDRESS, type UasOptions } from './uas.ts';

const bad = (field: string, reason: string): never => {
  throw new Error(`${field}: ${reason}`);
};

/** A 440 Hz tone of `ms` at 8 kHz, as the voice service stores a recording. */
function tone(ms: number): Buffer {
  const samples = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return writeWav(samples, 8000);
}

const RECORDING_MS = 600;
const recordings = async () => ({ wav: tone(RECORDING_MS), durationMs: RECORDING_MS });

/** The trunk's behaviour by the number's last four digits. */
const BY_ENDING: Record<string, Behaviour> = {
  '0001': 'busy',
  '0002': 'ring',
  '0003': 'not-found',
  '0004': 'busy-now',
  '0005': 'unavailable',
  '0006': 'hang-up',
  '0007': 'silent',
};
const behaviour = (n: string): Behaviour => BY_ENDING[n.slice(-4)] ?? 'answer';

function settings(trunk: TestTrunk, over: Record<string, unknown> = {}, password = false): SipSettings {
  return parseSipSettings(
    { host: TRUNK_ADDRESS, port: trunk.port, localAddress: '127.0.0.1', ringTimeoutSeconds: 1, trunkTimeoutMs: 300, callsPerSecond: 0, ...over },
    password,
    bad,
  );
}

async function until<T>(check: () => T | undefined | false, what: string, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const voice = (recipient: string, over = {}) => outbound(recipient, { type: 'VOICE', body: { text: 'Bonjour', title: 'Test', language: 'fr-FR' }, ...over });

connectorHarness('SIP', {
  idempotentSubmit: true,
  template: { type: 'VOICE', body: { text: 'Bonjour', language: 'fr-FR' } },
  async create(name) {
    const trunk = await TestTrunk.start({ answerAfterMs: 20 });
    // The trunk answers in milliseconds; a loaded machine's pauses can make that more than the 300 ms the tests of
    // an unanswering trunk use.
    const connector = new SipConnector(name, settings(trunk, { trunkTimeoutMs: 3_000 }), null, recordings);
    return {
      connector,
      operator: {
        deliverable: ['33612345678', '33612345679', '33612345680'],
        async settle(ctx, c) {
          await until(() => [...trunk.calls.values()].every((call) => call.ended), 'every call ended');
          await until(() => {
            void ctx.runDue(c);
            return [...ctx.store.values()].every((r) => r.dueAt === null);
          }, 'outcomes reported');
        },
        close: () => trunk.close(),
      },
    };
  },
});

describe('SIP connector against an in-process trunk', () => {
  let trunk: TestTrunk;
  let ctx: HarnessContext;
  let connector: SipConnector;

  async function started(o: UasOptions = {}, over: Record<string, unknown> = {}, password: string | null = null): Promise<void> {
    trunk = await TestTrunk.start({ behaviour, answerAfterMs: 30, hangUpAfterMs: 250, ...o });
    ctx = new HarnessContext('sip');
    connector = new SipConnector('sip', settings(trunk, over, password !== null), password, recordings);
    await connector.start(ctx);
    await until(() => ctx.states.includes('UP'), 'the trunk answers OPTIONS');
  }
  async function stopped(): Promise<void> {
    await connector.stop();
    await trunk.close();
  }

  /** Reports the connector's due outcomes until one comes for the message. */
  async function receipt(messageId: string, ms = 8_000): Promise<ReceiptEvent> {
    return until(
      () => {
        void ctx.runDue(connector);
        return ctx.events.find((e): e is ReceiptEvent => e.kind === 'receipt' && e.messageId === messageId);
      },
      `the receipt of ${messageId}`,
      ms,
    );
  }

  describe('calls', () => {
    before(() => started());
    after(() => stopped());

    test('answered: the recording is played as 20 ms G.711 RTP, paced, with one SSRC and consecutive numbers, then BYE', async () => {
      const m = voice('33612345678');
      const [r] = await connector.submit([m]);
      assert.ok(r?.ok, JSON.stringify(r));
      const delivered = await receipt(m.id);
      assert.equal(delivered.status, 'DELIVERED');
      assert.equal(delivered.upstreamId, r.upstreamId);
      assert.ok(delivered.answeredMs! >= RECORDING_MS - 20 && delivered.answeredMs! < RECORDING_MS + 500, `answered ${delivered.answeredMs} ms`);

      const call = trunk.callsTo('33612345678')[0]!;
      assert.equal(call.codec, 'PCMA', 'the first codec offered that the trunk takes');
      // The BYE is on its way when the outcome is reported.
      assert.equal((await until(() => call.ended, 'the BYE')).by, 'caller', 'Tern hung up once played');
      await until(() => call.packets.length >= RECORDING_MS / 20, 'every packet');
      const packets = call.packets;
      assert.equal(packets.length, RECORDING_MS / 20);
      assert.ok(packets.every((p) => p.payloadType === 8 && p.payload.length === 160));
      assert.equal(new Set(packets.map((p) => p.ssrc)).size, 1);
      assert.ok(packets[0]!.marker && packets.slice(1).every((p) => !p.marker));
      for (let i = 1; i < packets.length; i++) {
        assert.equal(packets[i]!.sequence, (packets[i - 1]!.sequence + 1) & 0xffff);
        assert.equal(packets[i]!.timestamp, (packets[i - 1]!.timestamp + 160) >>> 0);
      }
      // Paced by a timer: the packets span the recording's length, never sent in a burst.
      const span = packets.at(-1)!.at - packets[0]!.at;
      assert.ok(span >= RECORDING_MS - 20 - 60 && span < RECORDING_MS + 200, `packets spread over ${span} ms`);
      const early = packets.filter((p, i) => p.at - packets[0]!.at < i * 20 - 40).length;
      assert.equal(early, 0, 'no packet ahead of its time');
      // What was heard is the recording: A-law decoded back, the tone is there.
      const heard = decodeG711(Buffer.concat(packets.map((p) => p.payload)), 'PCMA');
      assert.ok(Math.max(...heard) > 7000 && Math.min(...heard) < -7000);
    });

    test('outcomes: busy and ring timeout are UNDELIVERED (retried by the core), 404 UNDELIVERABLE, a 486 before ringing too', async () => {
      const cases = [
        { to: '33612340001', status: 'UNDELIVERED', detail: 'BUSY' },
        { to: '33612340002', status: 'UNDELIVERED', detail: 'NO_ANSWER' },
        { to: '33612340003', status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' },
        { to: '33612340004', status: 'UNDELIVERED', detail: 'BUSY' },
      ];
      const batch = cases.map((c) => voice(c.to));
      const results = await connector.submit(batch);
      assert.ok(
        results.every((r) => r.ok),
        JSON.stringify(results),
      );
      for (const [i, c] of cases.entries()) {
        const r = await receipt(batch[i]!.id);
        assert.equal(r.status, c.status, c.to);
        assert.equal(r.detail, c.detail, c.to);
        assert.equal(r.answeredMs, undefined);
      }
      const ringing = trunk.callsTo('33612340002')[0]!;
      assert.equal(ringing.cancelled, true, 'the ring timeout cancels the call');
    });

    test('the callee hangs up mid-message: its BYE is answered and the call is DELIVERED with what was heard', async () => {
      const m = voice('33612340006');
      assert.ok((await connector.submit([m]))[0]!.ok);
      const r = await receipt(m.id);
      assert.equal(r.status, 'DELIVERED');
      assert.ok(r.answeredMs! >= 200 && r.answeredMs! < RECORDING_MS - 100, `answered ${r.answeredMs} ms of ${RECORDING_MS}`);
      const call = trunk.callsTo('33612340006')[0]!;
      assert.equal(call.ended?.by, 'callee');
      assert.ok(call.packets.length < RECORDING_MS / 20, 'the audio stopped');
    });

    test('503 and a trunk that does not answer the INVITE are temporary errors (the route’s next connector takes the call)', async () => {
      const [unavailable, silent] = await connector.submit([voice('33612340005'), voice('33612340007')]);
      assert.deepEqual(unavailable?.ok === false && [unavailable.temporary, unavailable.code], [true, 'TRUNK_UNAVAILABLE']);
      assert.deepEqual(silent?.ok === false && [silent.temporary, silent.code], [true, 'TRUNK_TIMEOUT']);
      assert.equal(connector.stats().inFlight, 0);
    });

    test('a message that is no voice message, or has no recording, is refused for good', async () => {
      const [sms] = await connector.submit([outbound('33612345678')]);
      assert.deepEqual(sms?.ok === false && [sms.temporary, sms.code], [false, 'NOT_VOICE']);
      const none = new SipConnector('none', settings(trunk), null, async () => null);
      const c2 = new HarnessContext('none');
      await none.start(c2);
      try {
        const [r] = await none.submit([voice('33612345678')]);
        assert.deepEqual(r?.ok === false && [r.temporary, r.code], [false, 'NO_AUDIO']);
      } finally {
        await none.stop();
      }
    });
  });

  describe('limits', () => {
    before(() => started({ answerAfterMs: 300 }, { maxCalls: 2, repeat: true }));
    after(() => stopped());

    test('maxCalls: calls past it wait (temporary, with the time to try again); repeat plays the message twice', async () => {
      const batch = [voice('33612345001'), voice('33612345002'), voice('33612345003')];
      const results = await connector.submit(batch);
      assert.ok(results[0]!.ok && results[1]!.ok);
      const third = results[2]!;
      assert.ok(!third.ok && third.temporary && third.code === 'MAX_CALLS' && third.retryAt! > Date.now());
      const r = await receipt(batch[0]!.id);
      assert.equal(r.status, 'DELIVERED');
      // Twice the recording with a pause between.
      assert.ok(r.answeredMs! > RECORDING_MS * 2 + 1_000, `answered ${r.answeredMs} ms`);
      const expected = (RECORDING_MS * 2 + 1_500) / 20;
      await until(() => trunk.callsTo('33612345001')[0]!.packets.length >= expected, 'every packet');
      assert.equal(trunk.callsTo('33612345001')[0]!.packets.length, expected);
    });
  });

  describe('digest authentication', () => {
    before(() => started({ credentials: { user: 'tern', password: 's3cret', realm: 'trunk.test' } }, { username: 'tern', register: true }, 's3cret'));
    after(() => stopped());

    test('REGISTER and INVITE are challenged (401) and sent again with credentials; the call goes through', async () => {
      const registers = trunk.requests.filter((r) => r.method === 'REGISTER');
      assert.ok(registers.length >= 2 && registers.at(-1)!.headers.authorization, 'registered with credentials');
      const m = voice('33612345678');
      assert.ok((await connector.submit([m]))[0]!.ok);
      assert.equal((await receipt(m.id)).status, 'DELIVERED');
      const call = trunk.callsTo('33612345678')[0]!;
      assert.equal(call.invites.length, 2);
      assert.equal(call.invites[0]!.headers.authorization, undefined);
      assert.ok(call.invites[1]!.headers.authorization, 'the second INVITE carries Authorization');
    });

    test('wrong credentials: the call is a temporary error and the connector goes DOWN naming why', async () => {
      const wrong = new SipConnector('wrong', settings(trunk, { username: 'tern' }, true), 'nope', recordings);
      const c2 = new HarnessContext('wrong');
      await wrong.start(c2);
      try {
        const [r] = await wrong.submit([voice('33612345678')]);
        assert.ok(r && !r.ok && r.temporary && r.code === 'AUTH_REFUSED', JSON.stringify(r));
        assert.ok(c2.states.includes('DOWN'));
      } finally {
        await wrong.stop();
      }
    });
  });

  test('a trunk that does not answer at all is DOWN', async () => {
    const c = new HarnessContext('nowhere');
    const nowhere = new SipConnector(
      'nowhere',
      parseSipSettings({ host: '127.0.0.1', port: 9, localAddress: '127.0.0.1', keepaliveSeconds: 1 }, false, bad),
      null,
      recordings,
    );
    await nowhere.start(c);
    try {
      await until(() => c.states.includes('DOWN'), 'DOWN', 8_000);
    } finally {
      await nowhere.stop();
    }
  });
});

test('final answers: what each means', () => {
  assert.deepEqual(finalAnswer(486, 'Busy Here'), { kind: 'busy', status: 486 });
  assert.deepEqual(finalAnswer(600, 'Busy Everywhere'), { kind: 'busy', status: 600 });
  for (const s of [408, 480, 487]) assert.deepEqual(finalAnswer(s, ''), { kind: 'no-answer', status: s });
  for (const s of [404, 484, 604]) assert.deepEqual(finalAnswer(s, ''), { kind: 'invalid', status: s });
  for (const s of [500, 502, 503, 504]) assert.deepEqual(finalAnswer(s, ''), { temporary: true });
  assert.deepEqual(finalAnswer(403, 'Forbidden'), { kind: 'rejected', status: 403, reason: 'Forbidden' });
});

test('settings: defaults, and every bad value named', () => {
  const s = parseSipSettings({ host: 'trunk.example.net' }, false, bad);
  assert.equal(s.port, 5060);
  assert.equal(s.transport, 'UDP');
  assert.deepEqual(s.codecs, ['PCMA', 'PCMU']);
  assert.equal(s.maxCalls, 10);
  assert.equal(s.callsPerSecond, 5);
  assert.equal(s.ringTimeoutSeconds, 30);
  assert.equal(s.domain, 'trunk.example.net');
  for (const [settings, password, message] of [
    [{}, false, /host: is required/],
    [{ host: 'bad host' }, false, /host/],
    [{ host: 'h', transport: 'TLS' }, false, /transport: UDP or TCP/],
    [{ host: 'h', codecs: ['G729'] }, false, /codecs/],
    [{ host: 'h', codecs: [] }, false, /codecs/],
    [{ host: 'h', username: 'u' }, false, /password: is required with a username/],
    [{ host: 'h' }, true, /username: is required with a password/],
    [{ host: 'h', register: true }, false, /username: is required to register/],
    [{ host: 'h', callerId: 'Tern' }, false, /callerId/],
    [{ host: 'h', maxCalls: 0 }, false, /maxCalls/],
    [{ host: 'h', ringTimeoutSeconds: 'x' }, false, /ringTimeoutSeconds/],
    [{ host: 'h', dialPrefix: '0' }, false, /dialPrefix/],
    [{ host: 'h', localAddress: 'here' }, false, /localAddress/],
    [{ host: 'h', secretSauce: 1 }, false, /secretSauce: is not a setting of a SIP connector/],
  ] as const) {
    assert.throws(() => parseSipSettings(settings as Record<string, unknown>, password, bad), message as RegExp, JSON.stringify(settings));
  }
});
