import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { selfSignedCertificate } from '../../support/certificate.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { connector, route, routedTo } from '../../support/connectors.ts';
import { eventually, sleep } from '../../support/wait.ts';
import { allFinal, live, SECRET_KEY, send, smppOperator } from './support.ts';

forEachDialect('SMPP connector against an operator SMSC', (dialect) => {
  let a: TestServer;
  let t: Tenant;
  let hooks: Receiver;
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    a = await startTestServer(dialect, { TERN_SECRET_KEY: SECRET_KEY, TERN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' });
    hooks = await startReceiver();
    t = await createTenant(a, {
      balance: 1_000,
      channel: { fromFieldList: ['Tern', '36111'], defaultCallbackUrlStatus: `${hooks.url}/status`, defaultCallbackUrlMo: `${hooks.url}/mo` },
    });
  });
  after(async () => {
    for (const c of closers) await c();
    await a.stop();
    await hooks.close();
  });

  test('each text reaches the SMSC once, its receipt makes it DELIVERED, and the status webhook says so', async () => {
    const op = await smppOperator(a, 'plain', '33611', { window: 5 });
    closers.push(() => op.smsc.close());
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => send(a, t, op.number(100 + i), `Hello ${i}`)));
    const rows = await allFinal(a, ids);
    assert.deepEqual(new Set(rows.map((r) => r.status)), new Set(['DELIVERED']));
    assert.ok(rows.every((r) => r.connector === 'plain'));
    assert.equal(op.smsc.submits.length, 30);
    assert.deepEqual(
      [...op.smsc.accepted().values()].filter((n) => n > 1),
      [],
      'none sent twice',
    );
    const s = op.smsc.submits[0]!;
    assert.equal(s.source, 'Tern');
    assert.equal(s.sourceTon, 5, 'an alphanumeric sender goes as TON 5');
    assert.equal(s.registeredDelivery, 1);
    await eventually(
      () => ids.every((id) => hooks.requests.some((r) => r.json?.messageId === id && r.json?.status?.value === 'DELIVERED')),
      10_000,
      'DELIVERED webhooks',
    );
    const state = await live(a, op.connectorId);
    assert.equal(state.state, 'UP');
    assert.equal(state.binds, 1);
    assert.equal(state.accepted, 30);
    assert.equal(state.receipts, 30);
  });

  test('long texts go as each connector is told (8- and 16-bit UDH, sar_*, message_payload) and are DELIVERED when every part is', async () => {
    const text = 'Long message. '.repeat(30); // 420 characters: 3 parts of 153
    const modes = ['UDH8', 'UDH16', 'SAR', 'PAYLOAD'] as const;
    for (const [i, mode] of modes.entries()) {
      const op = await smppOperator(a, `long-${mode.toLowerCase()}`, `3362${i}`, { longMessages: mode });
      closers.push(() => op.smsc.close());
      const id = await send(a, t, op.number(7), text);
      const [row] = await allFinal(a, [id]);
      assert.equal(row!.status, 'DELIVERED', mode);
      const subs = op.smsc.submits;
      if (mode === 'PAYLOAD') {
        assert.equal(subs.length, 1);
        assert.ok(subs[0]!.payload);
        assert.equal(subs[0]!.text, text);
        continue;
      }
      assert.equal(subs.length, 3, `${mode}: three parts`);
      assert.deepEqual(
        subs.map((s) => s.concat?.by),
        [mode, mode, mode],
      );
      assert.deepEqual(
        subs.map((s) => s.concat?.seq),
        [1, 2, 3],
      );
      assert.equal(new Set(subs.map((s) => s.concat?.ref)).size, 1, 'one reference');
      assert.equal(subs.map((s) => s.text).join(''), text);
    }
  });

  test('a part that fails fails the long message; a permanent refusal ends it UNDELIVERABLE with the reason, refunded', async () => {
    const op = await smppOperator(
      a,
      'refusing',
      '33630',
      {},
      {
        submitStatus: (s) => (s.destination.endsWith('99') ? SmppStatus.ESME_RINVDSTADR : 0),
        stat: (d) => (d.endsWith('98') ? 'UNDELIV' : 'DELIVRD'),
      },
    );
    closers.push(() => op.smsc.close());
    const refused = await send(a, t, op.number(99), 'Nobody here');
    const failed = await send(a, t, op.number(98), 'x'.repeat(300));
    const [r1, r2] = await allFinal(a, [refused, failed]).then((rows) => [rows.find((r) => r.id === refused)!, rows.find((r) => r.id === failed)!]);
    assert.equal(r1!.status, 'UNDELIVERABLE');
    assert.equal(r1!.status_detail, 'INVALID_PHONE_NUMBER');
    assert.equal(r1!.charged, 0, 'refunded');
    assert.equal(r2!.status, 'UNDELIVERED');
  });

  test('an inbound message (one part, and three parts put together once) reaches the channel’s MO webhook', async () => {
    const op = await smppOperator(a, 'inbound', '33640');
    closers.push(() => op.smsc.close());
    assert.deepEqual(await op.smsc.mo('33612340001', '36111', 'STOP'), [0]);
    const long = 'This reply was too long for one SMS, so the handset split it in three parts for us.';
    assert.deepEqual(await op.smsc.mo('33612340002', '36111', long, 3), [0, 0, 0]);
    const mo = await eventually(
      () => {
        const got = hooks.requests.filter((r) => r.url === '/mo' && r.json?.from?.startsWith('3361234000'));
        return got.length >= 2 ? got : undefined;
      },
      10_000,
      'two MO webhooks',
    );
    assert.deepEqual(mo.map((r) => r.json.body.text).sort(), [long, 'STOP'].sort());
    await sleep(300);
    const stored = await a.app.store.db
      .selectFrom('messages')
      .select(['body', 'upstream_id'])
      .where('direction', '=', 'MO')
      .where('connector', '=', 'inbound')
      .execute();
    assert.equal(stored.length, 2, 'the long one stored once');
  });

  test('TX+RX binds: submits on the transmitter, receipts and replies on the receiver', async () => {
    const op = await smppOperator(a, 'split-binds', '33660', { bindMode: 'TX+RX' });
    closers.push(() => op.smsc.close());
    await eventually(() => op.smsc.bound.length === 2, 10_000, 'two binds');
    assert.deepEqual(op.smsc.bound.map((b) => b.mode).sort(), ['receiver', 'transmitter']);
    const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => send(a, t, op.number(i + 10), `Split ${i}`)));
    assert.ok((await allFinal(a, ids)).every((r) => r.status === 'DELIVERED'));
    assert.deepEqual(await op.smsc.mo('33612340003', '36111', 'Reply on RX'), [0]);
    await eventually(() => hooks.requests.some((r) => r.url === '/mo' && r.json?.body?.text === 'Reply on RX'), 10_000, 'the MO webhook');
    assert.equal((await live(a, op.connectorId)).binds, 2);
  });

  test('over TLS: binds when the certificate is not checked, and is DOWN with the reason when it is and fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tern-smsc-tls-'));
    try {
      const { key, cert } = selfSignedCertificate(dir);
      const smsc = await TestSmsc.start({}, 0, { key: readFileSync(key), cert: readFileSync(cert) });
      closers.push(() => smsc.close());
      const base = {
        type: 'SMPP',
        host: '127.0.0.1',
        port: smsc.port,
        systemId: 'tern',
        password: 'secret',
        tls: true,
        reconnectMinSeconds: 1,
        reconnectMaxSeconds: 2,
      };
      const strict = await connector(a, { ...base, name: 'tls-checked' });
      await connector(a, { ...base, name: 'tls-unchecked', tlsVerify: false });
      await route(a, { name: 'tls', priority: 1, match: { prefix: '33670' }, connectors: [{ connector: 'tls-unchecked' }] });
      await routedTo(a, '33670000005', 'tls-unchecked');
      const id = await send(a, t, '33670000005', 'Over TLS');
      assert.equal((await allFinal(a, [id]))[0]!.status, 'DELIVERED');
      assert.equal(smsc.submits[0]!.text, 'Over TLS');
      const s = await eventually(
        async () => {
          const x = await live(a, strict);
          return x.state === 'DOWN' ? x : undefined;
        },
        10_000,
        'the checked one DOWN',
      );
      assert.match(s.lastError, /certificate/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
