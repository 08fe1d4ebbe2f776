import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, connector, route } from '../../support/connectors.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';
import { type Behaviour, TestTrunk, TRUNK_ADDRESS } from './uas.ts';

const RETRY_MS = 150;
const VOICE_FR = 0.035;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The trunk's behaviour by the number's last four digits. */
const BY_ENDING: Record<string, Behaviour> = { '0001': 'busy', '0005': 'unavailable', '0006': 'hang-up' };

forEachDialect('Voice over SIP', (dialect) => {
  let server: TestServer;
  let trunk: TestTrunk;
  let t: Tenant;
  before(async () => {
    trunk = await TestTrunk.start({ behaviour: (n) => BY_ENDING[n.slice(-4)] ?? 'answer', answerAfterMs: 30, hangUpAfterMs: 1_000 });
    server = await startTestServer(dialect, { TERN_VOICE_RETRY_MS: String(RETRY_MS) });
    t = await createTenant(server, { type: 'VOICE', balance: 5 });
    await connector(server, {
      name: 'trunk',
      type: 'SIP',
      host: TRUNK_ADDRESS,
      port: trunk.port,
      callerId: '33100000000',
      ringTimeoutSeconds: 2,
      trunkTimeoutMs: 500,
      callsPerSecond: 0,
    });
    await route(server, {
      name: 'calls',
      priority: 1,
      match: { type: 'VOICE', prefix: '336' },
      connectors: [{ connector: 'trunk' }],
      failover: [{ connector: 'simulator-voice' }],
    });
    await eventually(
      async () =>
        (await admin(server, 'GET', '/admin/v1/connectors')).body.items.find((c: any) => c.name === 'trunk')?.live?.state === 'UP' ? true : undefined,
      10_000,
      'the trunk UP',
    );
  });
  after(async () => {
    await server?.stop();
    await trunk?.close();
  });

  const send = async (to: string, text = 'Votre code est 482913.') => {
    const r = await request(server, 'POST', '/voice/v1/messages', { key: t.key, body: { recipient: { to }, body: { text } } });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const final = (id: string, ms = 20_000) =>
    eventually(
      async () => {
        const r = await request(server, 'GET', `/voice/v1/messages/${id}`, { key: t.key });
        return ['ENROUTE', 'SCHEDULED'].includes(r.body.status.value) ? undefined : r.body;
      },
      ms,
      `final status of ${id}`,
    );
  const row = (id: string) =>
    server.app.store.db.selectFrom('messages').select(['connector', 'attempts', 'part_count', 'charged']).where('id', '=', id).executeTakeFirstOrThrow();

  test('a call answered and played in full: DELIVERED through the trunk, the TTS audio played, charged at its length', async () => {
    const m = await send('33612345678');
    const done = await final(m.messageId);
    assert.equal(done.status.value, 'DELIVERED');
    assert.equal((await row(m.messageId)).connector, 'trunk');
    assert.equal(done.price.amount, m.price.amount);
    const call = trunk.callsTo('33612345678')[0]!;
    assert.equal(call.from, '33100000000', 'the caller id');
    await eventually(async () => call.ended, 5_000, 'the BYE');
    assert.equal(call.ended?.by, 'caller');
    // The recording is played whole: 20 ms a packet.
    await eventually(async () => (call.packets.length >= Math.floor((m.duration * 1000) / 20) ? true : undefined), 5_000, 'every packet');
    assert.ok(Math.abs(call.packets.length * 20 - m.duration * 1000) <= 20, `${call.packets.length} packets for ${m.duration} s`);
  });

  test('billed on the answered duration: a callee who hangs up after a second pays one started 30 s, the rest is refunded', async () => {
    // A long code read digit by digit lasts well over 30 s.
    const m = await send('33612340006', `Code ${'1234567890'.repeat(15)}`);
    assert.ok(m.duration > 30, `${m.duration} s of audio`);
    const units = Math.ceil(m.duration / 30);
    assert.equal(m.price.amount, round6(units * VOICE_FR));
    const done = await final(m.messageId);
    assert.equal(done.status.value, 'DELIVERED');
    assert.equal(done.price.amount, VOICE_FR, 'one started 30 s');
    const stored = await row(m.messageId);
    assert.equal(stored.part_count, 1);
    const refund = await server.app.store.db
      .selectFrom('ledger')
      .select(['amount', 'description'])
      .where('message_id', '=', m.messageId)
      .where('kind', '=', 'REFUND')
      .executeTakeFirstOrThrow();
    assert.equal(refund.amount, Math.round((units - 1) * VOICE_FR * 1e6));
    assert.match(refund.description!, /answered for 1 of the \d+ started 30 s charged/);
    const consumption = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=VOICE', { key: t.key });
    assert.equal(consumption.status, 200);
  });

  test('busy: placed again on the voice retry schedule, 3 calls in all, then UNDELIVERED / BUSY and refunded', async () => {
    const m = await send('33612340001');
    const done = await final(m.messageId);
    assert.equal(done.status.value, 'UNDELIVERED');
    assert.equal(done.status.detail, 'BUSY');
    assert.equal(done.price.amount, 0);
    assert.equal((await row(m.messageId)).attempts, 3);
    assert.equal(trunk.callsTo('33612340001').length, 3);
  });

  test('503 from the trunk: the call fails over to the route’s next connector in the same pass', async () => {
    const m = await send('33612340005');
    const done = await final(m.messageId);
    assert.equal(done.status.value, 'DELIVERED');
    assert.equal((await row(m.messageId)).connector, 'simulator-voice');
    assert.equal(trunk.callsTo('33612340005').length, 1);
  });

  test('the admin API: SIP settings checked naming the field, the password never answered', async () => {
    assertError(
      await admin(server, 'POST', '/admin/v1/connectors', { name: 'bad', type: 'SIP', host: 'trunk.example.net', transport: 'TLS' }),
      400,
      '400.001',
      /transport/,
    );
    assertError(
      await admin(server, 'POST', '/admin/v1/connectors', { name: 'bad', type: 'SIP', host: 'trunk.example.net', username: 'tern' }),
      400,
      '400.001',
      /password/,
    );
    const created = await admin(server, 'POST', '/admin/v1/connectors', {
      name: 'registrar',
      type: 'SIP',
      host: 'sip.example.net',
      username: 'tern',
      password: 's3cret',
      register: true,
      enabled: false,
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(JSON.stringify(created.body).includes('s3cret'), false);
    assert.equal(created.body.type, 'SIP');
  });
});
