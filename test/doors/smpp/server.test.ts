import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type smpp from 'smpp';
import { parseReceiptText } from '../../../src/protocols/smpp/receipt.ts';
import { encodeGsm7 } from '../../../src/domain/text.ts';
import { buildMoDeliverSms, buildReceiptDeliverSm } from '../../../src/protocols/smpp/deliver-sm.ts';
import type {
  BindMode,
  SmppBindRequest,
  SmppBindResult,
  SmppCancel,
  SmppConcatExpired,
  SmppHandler,
  SmppPrincipal,
  SmppQuery,
  SmppQueryResult,
  SmppSubmitResult,
} from '../../../src/doors/smpp/handler.ts';
import { encodePdu, SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { createSmppServer, type SmppServer, type SmppServerOptions } from '../../../src/doors/smpp/server/index.ts';
import type { SmppSubmit } from '../../../src/protocols/smpp/submit.ts';
import { call, floodUntilBlocked, nextPdu, packageClient, RawClient } from '../../support/smpp.ts';
import { eventually, sleep } from '../../support/wait.ts';
import { selfSignedCertificate } from '../../support/certificate.ts';

interface TestPrincipal extends SmppPrincipal {
  password: string;
}

const ALICE: TestPrincipal = { key: 'org-1/alice', systemId: 'alice', password: 'secret', maxBinds: 3, tps: 0 };
const BOB: TestPrincipal = { key: 'org-2/bob', systemId: 'bob', password: 'pw', maxBinds: 10, tps: 5 };
const CAROL: TestPrincipal = { key: 'org-3/carol', systemId: 'carol', password: 'pw', maxBinds: 2, tps: 0 };

class FakeHandler implements SmppHandler<TestPrincipal> {
  readonly submits: Array<{ principal: TestPrincipal; submit: SmppSubmit }> = [];
  readonly expired: SmppConcatExpired[] = [];
  readonly bound: Array<[string, BindMode]> = [];
  readonly binds: SmppBindRequest[] = [];
  /** Lets a test hold submits back. */
  gate: ((submit: SmppSubmit) => Promise<void>) | undefined;
  private ids = 0;

  async bind(req: SmppBindRequest): Promise<SmppBindResult<TestPrincipal>> {
    this.binds.push(req);
    const p = [ALICE, BOB, CAROL].find((c) => c.systemId === req.systemId);
    if (!p) return { ok: false, status: SmppStatus.ESME_RINVSYSID };
    if (p.password !== req.password) return { ok: false, status: SmppStatus.ESME_RINVPASWD };
    return { ok: true, principal: p };
  }

  allocateMessageId(): string {
    return `msg-${++this.ids}`;
  }

  async submit(principal: TestPrincipal, submit: SmppSubmit): Promise<SmppSubmitResult> {
    this.submits.push({ principal, submit });
    if (this.gate) await this.gate(submit);
    if (submit.destination.addr === 'boom') throw new Error('storage down');
    if (submit.destination.addr.startsWith('000')) return { status: SmppStatus.ESME_RINVDSTADR };
    if (submit.text === 'no credit') return { status: SmppStatus.ESME_RSUBMITFAIL };
    return { messageId: submit.messageId ?? this.allocateMessageId() };
  }

  async query(_p: TestPrincipal, q: SmppQuery): Promise<SmppQueryResult> {
    if (q.messageId !== 'msg-known') return { status: SmppStatus.ESME_RQUERYFAIL };
    return { messageId: q.messageId, state: 2, finalDate: new Date('2026-05-01T10:00:00Z'), errorCode: 0 };
  }

  async cancel(_p: TestPrincipal, c: SmppCancel): Promise<{ status: number }> {
    return { status: c.messageId === 'msg-scheduled' ? 0 : SmppStatus.ESME_RCANCELFAIL };
  }

  concatExpired(_p: TestPrincipal, e: SmppConcatExpired): void {
    this.expired.push(e);
  }

  onBound(p: TestPrincipal, mode: BindMode): void {
    this.bound.push([p.systemId, mode]);
  }
}

type Metric = { name: string; labels: Record<string, string>; value: number };

let running: SmppServer[] = [];
let clients: Array<{ destroy(): void }> = [];

afterEach(async () => {
  for (const c of clients) c.destroy();
  await Promise.all(running.map((s) => s.close()));
  running = [];
  clients = [];
});

async function start(options: Partial<SmppServerOptions<TestPrincipal>> = {}) {
  const handler = new FakeHandler();
  const metrics: Metric[] = [];
  const server = createSmppServer<TestPrincipal>({
    host: '127.0.0.1',
    port: 0,
    handler,
    onMetric: (name, labels, value) => metrics.push({ name, labels, value }),
    ...options,
  });
  running.push(server);
  const ports = await server.listen();
  const sum = (name: string, systemId: string) => metrics.filter((m) => m.name === name && m.labels['system_id'] === systemId).reduce((a, m) => a + m.value, 0);
  return { server, handler, metrics, sum, ...ports };
}

async function client(port: number, tls = false): Promise<smpp.Session> {
  const c = await packageClient(port, { tls });
  clients.push(c);
  return c;
}

async function bound(port: number, command: string, who: TestPrincipal = ALICE): Promise<smpp.Session> {
  const c = await client(port);
  const resp = await call(c, command, { system_id: who.systemId, password: who.password });
  assert.equal(resp.command_status, 0, `${command} for ${who.systemId}`);
  return c;
}

async function raw(port: number): Promise<RawClient> {
  const r = await RawClient.connect(port);
  clients.push(r);
  return r;
}

describe('SMPP server: binds', { timeout: 30_000 }, () => {
  it('binds transmitter, receiver and transceiver, and tells the handler when a receiver is bound', async () => {
    const { port, handler, server, sum } = await start({ systemId: 'TERN-TEST' });
    for (const command of ['bind_transmitter', 'bind_receiver', 'bind_transceiver']) {
      const c = await client(port);
      const resp = await call(c, command, { system_id: 'alice', password: 'secret', system_type: 'kannel' });
      assert.equal(resp.command, `${command}_resp`);
      assert.equal(resp.command_status, 0);
      assert.equal(resp['system_id'], 'TERN-TEST');
    }
    assert.deepEqual(
      handler.binds.map((b) => [b.systemId, b.password, b.systemType, b.mode, b.remoteAddress]),
      [
        ['alice', 'secret', 'kannel', 'transmitter', '127.0.0.1'],
        ['alice', 'secret', 'kannel', 'receiver', '127.0.0.1'],
        ['alice', 'secret', 'kannel', 'transceiver', '127.0.0.1'],
      ],
    );
    assert.deepEqual(handler.bound, [
      ['alice', 'receiver'],
      ['alice', 'transceiver'],
    ]);
    assert.equal(server.sessionCount(ALICE.key), 3);
    assert.equal(sum('smpp_binds_total', 'alice'), 3);
  });

  it('refuses a wrong password, an unknown system_id and one bind too many', async () => {
    const { port, server, sum } = await start();
    const c = await client(port);
    const wrongPassword = await call(c, 'bind_transceiver', { system_id: 'alice', password: 'nope' });
    assert.equal(wrongPassword.command_status, SmppStatus.ESME_RINVPASWD);
    const unknown = await call(c, 'bind_transceiver', { system_id: 'mallory', password: 'x' });
    assert.equal(unknown.command_status, SmppStatus.ESME_RINVSYSID);
    // A refused bind leaves the session open for another try.
    assert.equal((await call(c, 'bind_transceiver', { system_id: 'carol', password: 'pw' })).command_status, 0);
    const second = await bound(port, 'bind_receiver', CAROL);
    const third = await client(port);
    const refused = await call(third, 'bind_transmitter', { system_id: 'carol', password: 'pw' });
    assert.equal(refused.command_status, SmppStatus.ESME_RBINDFAIL);
    assert.equal(server.sessionCount(CAROL.key), 2);
    assert.equal(sum('smpp_bind_failures_total', 'carol'), 1);
    assert.equal(sum('smpp_bind_failures_total', 'alice'), 1);

    // When one unbinds, its slot is free again.
    const unbound = await call(second, 'unbind');
    assert.equal(unbound.command, 'unbind_resp');
    assert.equal(unbound.command_status, 0);
    await eventually(() => server.sessionCount(CAROL.key) === 1, 5_000, 'unbound session released');
    assert.equal((await call(third, 'bind_transmitter', { system_id: 'carol', password: 'pw' })).command_status, 0);
    assert.equal(server.sessionCount(CAROL.key), 2);
  });

  it('answers enquire_link; refuses PDUs before bind and submits from a receiver with ESME_RINVBNDSTS', async () => {
    const { port } = await start();
    const c = await client(port);
    const el = await call(c, 'enquire_link');
    assert.equal(el.command, 'enquire_link_resp');
    assert.equal(el.command_status, 0);
    const early = await call(c, 'submit_sm', { destination_addr: '33600000001', short_message: Buffer.from('hi') });
    assert.equal(early.command, 'submit_sm_resp');
    assert.equal(early.command_status, SmppStatus.ESME_RINVBNDSTS);
    assert.equal((await call(c, 'query_sm', { message_id: 'x' })).command_status, SmppStatus.ESME_RINVBNDSTS);
    const rx = await bound(port, 'bind_receiver');
    const fromRx = await call(rx, 'submit_sm', { destination_addr: '33600000001', short_message: Buffer.from('hi') });
    assert.equal(fromRx.command_status, SmppStatus.ESME_RINVBNDSTS);
    assert.equal((await call(rx, 'enquire_link')).command_status, 0);
  });

  it('nacks an unknown command id and a malformed PDU, and the bound session goes on working', async () => {
    const { port, handler } = await start();
    const r = await raw(port);
    assert.equal((await r.call('bind_transceiver', { system_id: 'alice', password: 'secret' })).status, 0);
    const unknown = Buffer.alloc(20);
    unknown.writeUInt32BE(20, 0);
    unknown.writeUInt32BE(0x00000777, 4);
    unknown.writeUInt32BE(900, 12);
    r.write(unknown);
    const nack1 = await r.next();
    assert.deepEqual([nack1.command, nack1.status, nack1.sequence], ['generic_nack', SmppStatus.ESME_RINVCMDID, 900]);
    const bad = encodePdu('submit_sm', 901, 0, { destination_addr: '33600000001', short_message: Buffer.from('abc') });
    bad[bad.length - 4] = 0xff; // sm_length 255 with 3 octets left
    r.write(bad);
    const nack2 = await r.next();
    assert.deepEqual([nack2.command, nack2.status, nack2.sequence], ['generic_nack', SmppStatus.ESME_RINVCMDLEN, 901]);
    assert.equal(handler.submits.length, 0);
    const ok = await r.call('submit_sm', {
      destination_addr: '33600000001',
      data_coding: 0,
      short_message: Buffer.from('ok'),
    });
    assert.equal(ok.status, 0);
    assert.equal(ok.fields['message_id'], 'msg-1');
    assert.equal(handler.submits[0]!.submit.text, 'ok');
  });
});

describe('SMPP server: submit_sm', { timeout: 30_000 }, () => {
  it('decodes data_coding 0, 3 and 8 and message_payload, and answers with the Tern message id', async () => {
    const { port, handler, sum } = await start();
    const c = await bound(port, 'bind_transceiver');
    const gsmText = 'Hello @ £5 {x} €';
    const latin = 'Ça coûte très cher, garçon';
    const ucs = 'Привет 😀 世界';
    const long = 'A long text that does not fit. '.repeat(14);
    const sends = [
      { data_coding: 0, short_message: encodeGsm7(gsmText) },
      { data_coding: 3, short_message: Buffer.from(latin, 'latin1') },
      { data_coding: 8, short_message: Buffer.from(ucs, 'utf16le').swap16() },
      { data_coding: 0, message_payload: encodeGsm7(long) },
    ];
    const ids: string[] = [];
    for (const s of sends) {
      const resp = await call(c, 'submit_sm', { source_addr: 'ACME', destination_addr: '33612345678', ...s });
      assert.equal(resp.command_status, 0);
      ids.push(resp['message_id'] as string);
    }
    assert.deepEqual(ids, ['msg-1', 'msg-2', 'msg-3', 'msg-4']);
    assert.deepEqual(
      handler.submits.map((s) => [s.submit.text, s.submit.dataCoding, s.submit.parts]),
      [
        [gsmText, 0, 1],
        [latin, 3, 1],
        [ucs, 8, 1],
        [long, 0, 1],
      ],
    );
    const first = handler.submits[0]!;
    assert.equal(first.principal.key, ALICE.key);
    assert.deepEqual(first.submit.source, { addr: 'ACME', ton: 0, npi: 0 });
    assert.deepEqual(first.submit.destination, { addr: '33612345678', ton: 0, npi: 0 });
    assert.equal(first.submit.messageId, undefined);
    assert.equal(sum('smpp_submits_total', 'alice'), 4);
  });

  it("takes Kannel's esm_class 3 and registered_delivery 0x11, and schedule and validity times", async () => {
    const clock = Date.parse('2026-05-01T12:00:00Z');
    const { port, handler } = await start({ now: () => clock });
    const c = await bound(port, 'bind_transmitter');
    const resp = await call(c, 'submit_sm', {
      source_addr_ton: 5,
      source_addr: 'Kannel',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: '33612345678',
      esm_class: 3,
      registered_delivery: 0x11,
      data_coding: 0,
      schedule_delivery_time: '260502143000008+',
      validity_period: '000002000000000R',
      short_message: Buffer.from('Kannel says hi'),
    });
    assert.equal(resp.command_status, 0);
    const s = handler.submits[0]!.submit;
    assert.equal(s.esmClass, 3);
    assert.equal(s.receiptRequested, true);
    assert.equal(s.intermediateNotification, true);
    assert.deepEqual(s.source, { addr: 'Kannel', ton: 5, npi: 0 });
    assert.deepEqual(s.destination, { addr: '33612345678', ton: 1, npi: 1 });
    assert.deepEqual(s.scheduleAt, new Date('2026-05-02T12:30:00Z'));
    assert.deepEqual(s.validUntil, new Date('2026-05-03T12:00:00Z'));
    const bad = await call(c, 'submit_sm', {
      destination_addr: '33612345678',
      schedule_delivery_time: '261402143000008+',
      short_message: Buffer.from('x'),
    });
    assert.equal(bad.command_status, SmppStatus.ESME_RINVSCHED);
    assert.equal(handler.submits.length, 1);
  });

  it("maps the handler's refusals and failures to command_status", async () => {
    const { port, sum } = await start();
    const c = await bound(port, 'bind_transceiver');
    const sm = (destination_addr: string, text: string) => call(c, 'submit_sm', { destination_addr, data_coding: 0, short_message: Buffer.from(text) });
    assert.equal((await sm('000123', 'hi')).command_status, SmppStatus.ESME_RINVDSTADR);
    assert.equal((await sm('33600000001', 'no credit')).command_status, SmppStatus.ESME_RSUBMITFAIL);
    assert.equal((await sm('boom', 'hi')).command_status, SmppStatus.ESME_RSYSERR);
    assert.equal((await sm('', 'hi')).command_status, SmppStatus.ESME_RINVDSTADR);
    assert.equal((await sm('33600000001', 'fine')).command_status, 0);
    assert.equal(sum('smpp_errors_total', 'alice'), 3); // the handler's exception is logged, not counted as a refusal
    assert.equal(sum('smpp_submits_total', 'alice'), 1);
  });

  it('throttles above the principal tps with ESME_RTHROTTLED, shared by all its sessions', async () => {
    let clock = Date.parse('2026-05-01T12:00:00Z');
    const { port, handler, sum } = await start({ now: () => clock });
    const a = await bound(port, 'bind_transmitter', BOB);
    const b = await bound(port, 'bind_transceiver', BOB);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const resp = await call(i % 2 ? a : b, 'submit_sm', {
        destination_addr: '33600000001',
        short_message: Buffer.from(`m${i}`),
      });
      statuses.push(resp.command_status);
    }
    const T = SmppStatus.ESME_RTHROTTLED;
    assert.deepEqual(statuses, [0, 0, 0, 0, 0, T, T, T]);
    assert.equal(handler.submits.length, 5);
    assert.equal(sum('smpp_throttled_total', 'bob'), 3);
    clock += 400; // two tokens back at 5/s
    const after = [];
    for (let i = 0; i < 3; i++) {
      const resp = await call(a, 'submit_sm', { destination_addr: '33600000001', short_message: Buffer.from('x') });
      after.push(resp.command_status);
    }
    assert.deepEqual(after, [0, 0, T]);
    // Another principal is not affected.
    const alice = await bound(port, 'bind_transmitter', ALICE);
    const other = await call(alice, 'submit_sm', { destination_addr: '1', short_message: Buffer.from('x') });
    assert.equal(other.command_status, 0);
  });

  it('answers 100 submits in flight at once, as the handler completes them', async () => {
    const { port, handler } = await start({ maxConcurrentRequests: 128 });
    let release!: () => void;
    const barrier = new Promise<void>((r) => (release = r));
    let waiting = 0;
    let maxWaiting = 0;
    handler.gate = async () => {
      waiting++;
      maxWaiting = Math.max(maxWaiting, waiting);
      if (waiting === 100) release();
      await barrier;
      waiting--;
    };
    const c = await bound(port, 'bind_transmitter');
    const resps = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(c, 'submit_sm', { destination_addr: '33600000001', short_message: Buffer.from(`n${i}`) })),
    );
    assert.equal(maxWaiting, 100, 'all 100 were being handled at the same time');
    assert.ok(resps.every((r) => r.command_status === 0));
    assert.equal(new Set(resps.map((r) => r['message_id'])).size, 100);
    // Each answer carries the id of its own request.
    const textById = new Map(handler.submits.map((s, i) => [`msg-${i + 1}`, s.submit.text]));
    const idOfText = new Map([...textById].map(([id, text]) => [text, id]));
    resps.forEach((r, i) => assert.equal(r['message_id'], idOfText.get(`n${i}`)));
  });

  it('stops reading a client that floods while its submits are stuck', async () => {
    const { port, handler } = await start({ maxConcurrentRequests: 4 });
    handler.gate = () => new Promise<void>(() => {});
    const r = await raw(port);
    await r.call('bind_transmitter', { system_id: 'alice', password: 'secret' });
    const one = encodePdu('submit_sm', 1, 0, {
      destination_addr: '33600000001',
      short_message: Buffer.alloc(120, 0x41),
    });
    const written = await floodUntilBlocked(r.socket, one);
    assert.ok(written < 100 * 2 ** 20, 'the server stopped reading, so the client could not send everything');
    assert.equal(handler.submits.length, 4);
  });
});

describe('SMPP server: concatenated submits', { timeout: 30_000 }, () => {
  function udh8(ref: number, total: number, seq: number) {
    return Buffer.from([5, 0, 3, ref, total, seq]);
  }
  function udh16(ref: number, total: number, seq: number) {
    return Buffer.from([6, 8, 4, ref >> 8, ref & 0xff, total, seq]);
  }

  it('reassembles 8-bit UDH parts sent out of order, answers each with the same id, submits once', async () => {
    const { port, handler, sum } = await start();
    const c = await bound(port, 'bind_transceiver');
    const parts = ['First part, ', 'second part, ', 'third part.'];
    const resps = [];
    for (const seq of [2, 3, 1]) {
      resps.push(
        await call(c, 'submit_sm', {
          source_addr: 'ACME',
          destination_addr: '33612345678',
          esm_class: 0x43, // Kannel: store and forward + UDHI
          registered_delivery: 0x11,
          data_coding: 0,
          short_message: Buffer.concat([udh8(0x2a, 3, seq), encodeGsm7(parts[seq - 1]!)]),
        }),
      );
    }
    assert.deepEqual(
      resps.map((r) => [r.command_status, r['message_id']]),
      [
        [0, 'msg-1'],
        [0, 'msg-1'],
        [0, 'msg-1'],
      ],
    );
    assert.equal(handler.submits.length, 1);
    const s = handler.submits[0]!.submit;
    assert.equal(s.text, parts.join(''));
    assert.equal(s.parts, 3);
    assert.equal(s.messageId, 'msg-1');
    assert.equal(s.receiptRequested, true);
    assert.equal(sum('smpp_submits_total', 'alice'), 1);
    assert.equal(sum('smpp_submit_parts_total', 'alice'), 3);
  });

  it('reassembles 16-bit UDH parts in UCS-2, a surrogate pair split between them, across two sessions', async () => {
    const { port, handler } = await start();
    const a = await bound(port, 'bind_transmitter');
    const b = await bound(port, 'bind_transceiver');
    const text = 'Bonjour 😀 à tous';
    const bytes = Buffer.from(text, 'utf16le').swap16();
    const cut = 18; // inside the surrogate pair of 😀
    const p1 = await call(b, 'submit_sm', {
      destination_addr: '33612345678',
      esm_class: 0x40,
      data_coding: 8,
      short_message: Buffer.concat([udh16(0x1234, 2, 2), bytes.subarray(cut)]),
    });
    assert.equal(handler.submits.length, 0);
    const p2 = await call(a, 'submit_sm', {
      destination_addr: '33612345678',
      esm_class: 0x40,
      data_coding: 8,
      short_message: Buffer.concat([udh16(0x1234, 2, 1), bytes.subarray(0, cut)]),
    });
    assert.equal(p1['message_id'], p2['message_id']);
    assert.equal(handler.submits.length, 1);
    assert.equal(handler.submits[0]!.submit.text, text);
  });

  it('reassembles sar_* TLV parts out of order, keeping different references apart', async () => {
    const { port, handler } = await start();
    const c = await bound(port, 'bind_transceiver');
    const sar = (ref: number, seq: number, text: string) =>
      call(c, 'submit_sm', {
        destination_addr: '33612345678',
        data_coding: 3,
        short_message: Buffer.from(text, 'latin1'),
        sar_msg_ref_num: ref,
        sar_total_segments: 2,
        sar_segment_seqnum: seq,
      });
    const r1 = await sar(500, 2, 'garçon');
    const r2 = await sar(501, 1, 'autre ');
    const r3 = await sar(500, 1, 'Ça va, ');
    assert.equal(r1['message_id'], r3['message_id']);
    assert.notEqual(r1['message_id'], r2['message_id']);
    assert.deepEqual(
      handler.submits.map((s) => [s.submit.text, s.submit.messageId]),
      [['Ça va, garçon', r1['message_id']]],
    );
  });

  it('tells the handler when the parts stop arriving, and never submits the fragment', async () => {
    const { port, handler, server } = await start({ concatTimeoutMs: 80 });
    const c = await bound(port, 'bind_transceiver');
    const resp = await call(c, 'submit_sm', {
      source_addr: 'ACME',
      destination_addr: '33612345678',
      esm_class: 0x40,
      data_coding: 0,
      short_message: Buffer.concat([udh8(7, 2, 1), encodeGsm7('half')]),
    });
    assert.equal(resp.command_status, 0);
    await eventually(() => handler.expired.length === 1, 5_000, 'concatExpired');
    assert.deepEqual(handler.expired[0], {
      messageId: resp['message_id'],
      source: { addr: 'ACME', ton: 0, npi: 0 },
      destination: { addr: '33612345678', ton: 0, npi: 0 },
      received: 1,
      total: 2,
    });
    assert.equal(handler.submits.length, 0);
    assert.equal(server.sessionCount(), 1);
  });

  it('answers ESME_RMSGQFUL when too many messages are being reassembled', async () => {
    const { port } = await start({ maxPendingConcat: 1 });
    const c = await bound(port, 'bind_transceiver');
    const part = (ref: number) =>
      call(c, 'submit_sm', {
        destination_addr: '33612345678',
        esm_class: 0x40,
        short_message: Buffer.concat([udh8(ref, 2, 1), encodeGsm7('x')]),
      });
    assert.equal((await part(1)).command_status, 0);
    assert.equal((await part(2)).command_status, SmppStatus.ESME_RMSGQFUL);
  });
});

describe('SMPP server: submit_multi, query_sm, cancel_sm, replace_sm', { timeout: 30_000 }, () => {
  it('submits once per destination and lists the failures in unsuccess_sme', async () => {
    const { port, handler } = await start();
    const c = await bound(port, 'bind_transmitter');
    const resp = await call(c, 'submit_multi', {
      source_addr: 'ACME',
      dest_address: [
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '33600000001' },
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '000999' },
        { dl_name: 'friends' },
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '33600000002' },
      ],
      data_coding: 0,
      short_message: Buffer.from('to many'),
    });
    assert.equal(resp.command_status, 0);
    assert.deepEqual(
      handler.submits.map((s) => [s.submit.destination.addr, s.submit.text]),
      [
        ['33600000001', 'to many'],
        ['000999', 'to many'],
        ['33600000002', 'to many'],
      ],
    );
    assert.equal(resp['message_id'], 'msg-1');
    assert.deepEqual(resp['unsuccess_sme'], [
      { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '000999', error_status_code: SmppStatus.ESME_RINVDSTADR },
      {
        dest_addr_ton: 0,
        dest_addr_npi: 0,
        destination_addr: 'friends',
        error_status_code: SmppStatus.ESME_RINVDLNAME,
      },
    ]);
    const none = await call(c, 'submit_multi', { dest_address: [], short_message: Buffer.from('x') });
    assert.equal(none.command_status, SmppStatus.ESME_RINVNUMDESTS);
  });

  it('answers query_sm and cancel_sm through the handler, replace_sm refused without one', async () => {
    const { port } = await start();
    const c = await bound(port, 'bind_transceiver');
    const q = await call(c, 'query_sm', { message_id: 'msg-known', source_addr: 'ACME' });
    assert.equal(q.command_status, 0);
    assert.equal(q['message_id'], 'msg-known');
    assert.equal(q['message_state'], 2);
    assert.equal(q['error_code'], 0);
    assert.equal((await call(c, 'query_sm', { message_id: 'nope' })).command_status, SmppStatus.ESME_RQUERYFAIL);
    assert.equal((await call(c, 'cancel_sm', { message_id: 'msg-scheduled' })).command_status, 0);
    assert.equal((await call(c, 'cancel_sm', { message_id: 'msg-sent' })).command_status, SmppStatus.ESME_RCANCELFAIL);
    const rep = await call(c, 'replace_sm', { message_id: 'msg-scheduled', short_message: Buffer.from('new') });
    assert.equal(rep.command, 'replace_sm_resp');
    assert.equal(rep.command_status, SmppStatus.ESME_RREPLACEFAIL);
  });
});

describe('SMPP server: deliver_sm', { timeout: 30_000 }, () => {
  it('sends a receipt to a receiver of the same credential, not to the submitting transmitter', async () => {
    const { port, server, sum } = await start();
    const tx = await bound(port, 'bind_transmitter');
    const rx = await bound(port, 'bind_receiver');
    let txGot = 0;
    tx.on('deliver_sm', () => txGot++);
    const sub = await call(tx, 'submit_sm', {
      source_addr: 'ACME',
      destination_addr: '33612345678',
      short_message: Buffer.from('Your code is 1234, valid 10 min'),
    });
    const messageId = sub['message_id'] as string;
    const arriving = nextPdu(rx, 'deliver_sm');
    const delivered = server.deliver(
      ALICE.key,
      buildReceiptDeliverSm({
        messageId,
        source: '33612345678',
        destination: 'ACME',
        stat: 'DELIVRD',
        err: 0,
        submitDate: new Date('2026-05-01T12:00:00Z'),
        doneDate: new Date('2026-05-01T12:00:07Z'),
        text: 'Your code is 1234, valid 10 min',
      }),
    );
    const pdu = await arriving;
    assert.equal(pdu['esm_class'], 0x04);
    assert.equal(pdu['source_addr'], '33612345678');
    assert.equal(pdu['destination_addr'], 'ACME');
    assert.equal(pdu['receipted_message_id'], messageId);
    assert.equal(pdu['message_state'], 2);
    const text = (pdu['short_message'] as { message: string }).message;
    assert.equal(text, `id:${messageId} sub:001 dlvrd:001 submit date:2605011200 done date:2605011200 stat:DELIVRD err:000 ` + 'text:Your code is 1234, v');
    assert.equal(parseReceiptText(text)?.stat, 'DELIVRD');
    // Not answered yet: the receipt is not delivered until deliver_sm_resp comes.
    const state = await Promise.race([delivered, sleep(50).then(() => 'pending')]);
    assert.equal(state, 'pending');
    rx.send(pdu.response());
    assert.equal(await delivered, true);
    assert.equal(txGot, 0);
    assert.equal(sum('smpp_delivers_total', 'alice'), 1);
  });

  it('takes turns between receiver and transceiver sessions', async () => {
    const { port, server } = await start();
    const rx = await bound(port, 'bind_receiver');
    const trx = await bound(port, 'bind_transceiver');
    const got: string[] = [];
    for (const [name, s] of [
      ['rx', rx],
      ['trx', trx],
    ] as const) {
      s.on('deliver_sm', (pdu: smpp.PDU) => {
        got.push(name);
        s.send(pdu.response());
      });
    }
    const mo = (t: string) => buildMoDeliverSms({ source: '33612345678', destination: '36111', text: t, ref: 1 });
    assert.equal(await server.deliver(ALICE.key, mo('one')), true);
    assert.equal(await server.deliver(ALICE.key, mo('two')), true);
    assert.equal(await server.deliver(ALICE.key, mo('three')), true);
    assert.deepEqual(got, ['rx', 'trx', 'rx']);
  });

  it('splits a long MO with UDH, all parts through one session, in order', async () => {
    const { port, server } = await start();
    const rx = await bound(port, 'bind_receiver');
    const parts: Array<{ esm: number; udh: Buffer[]; message: string }> = [];
    rx.on('deliver_sm', (pdu: smpp.PDU) => {
      const sm = pdu['short_message'] as { udh?: Buffer[]; message: string };
      parts.push({ esm: pdu['esm_class'] as number, udh: sm.udh ?? [], message: sm.message });
      rx.send(pdu.response());
    });
    const text = 'STOP '.repeat(40); // 200 GSM characters: two parts
    const mo = buildMoDeliverSms({ source: '33612345678', destination: '36111', text, ref: 0x155 });
    assert.equal(await server.deliver(ALICE.key, mo), true);
    assert.equal(parts.length, 2);
    assert.deepEqual(
      parts.map((p) => p.esm),
      [0x40, 0x40],
    );
    assert.deepEqual(
      parts.map((p) => [...p.udh[0]!]),
      [
        [0, 3, 0x55, 2, 1],
        [0, 3, 0x55, 2, 2],
      ],
    );
    assert.equal(parts.map((p) => p.message).join(''), text);
  });

  it('resolves false when no receiver is bound or the client refuses the deliver_sm', async () => {
    const { port, server } = await start();
    const receipt = buildReceiptDeliverSm({
      messageId: 'm',
      source: '33612345678',
      destination: 'ACME',
      stat: 'UNDELIV',
      submitDate: new Date(),
      doneDate: new Date(),
    });
    assert.equal(await server.deliver(ALICE.key, receipt), false);
    await bound(port, 'bind_transmitter');
    assert.equal(await server.deliver(ALICE.key, receipt), false, 'a transmitter cannot take deliver_sm');
    const rx = await bound(port, 'bind_receiver');
    rx.on('deliver_sm', (pdu: smpp.PDU) => rx.send(pdu.response({ command_status: SmppStatus.ESME_RX_T_APPN })));
    assert.equal(await server.deliver(ALICE.key, receipt), false);
    assert.equal(await server.deliver(BOB.key, receipt), false);
  });

  it('resolves false when the receiver never answers', async () => {
    const { port, server } = await start({ responseTimeoutMs: 100 });
    await bound(port, 'bind_receiver');
    const receipt = buildReceiptDeliverSm({
      messageId: 'm',
      source: '1',
      destination: '2',
      stat: 'EXPIRED',
      submitDate: new Date(),
      doneDate: new Date(),
    });
    assert.equal(await server.deliver(ALICE.key, receipt), false);
  });
});

describe('SMPP server: TLS', { timeout: 30_000 }, () => {
  it('binds and submits over the TLS listener', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tern-smpp-tls-'));
    try {
      const { key, cert } = selfSignedCertificate(dir);
      const { tlsPort, port, handler } = await start({
        tls: { port: 0, key: readFileSync(key), cert: readFileSync(cert) },
      });
      assert.ok(tlsPort && tlsPort !== port);
      const c = await client(tlsPort!, true);
      assert.equal((c.socket as unknown as { encrypted?: boolean }).encrypted, true);
      assert.equal((await call(c, 'bind_transceiver', { system_id: 'alice', password: 'secret' })).command_status, 0);
      const resp = await call(c, 'submit_sm', {
        destination_addr: '33612345678',
        data_coding: 0,
        short_message: Buffer.from('over TLS'),
      });
      assert.equal(resp.command_status, 0);
      assert.equal(handler.submits[0]!.submit.text, 'over TLS');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SMPP server: watchdog and shutdown', { timeout: 30_000 }, () => {
  it('closes a bound session that stops answering enquire_link', async () => {
    const { port, server } = await start({ enquireLinkIntervalMs: 40, enquireLinkTimeoutMs: 60 });
    const r = await raw(port);
    await r.call('bind_transceiver', { system_id: 'alice', password: 'secret' });
    const el = await r.next();
    assert.equal(el.command, 'enquire_link');
    await eventually(() => r.closed, 5_000, 'server closes the silent session');
    assert.equal(server.sessionCount(ALICE.key), 0);
  });

  it('unbinds its clients on close', async () => {
    const { port, server } = await start();
    const c = await bound(port, 'bind_transceiver');
    const unbind = nextPdu(c, 'unbind');
    await server.close();
    running = [];
    assert.equal((await unbind).command, 'unbind');
    assert.equal(server.sessionCount(), 0);
  });
});
