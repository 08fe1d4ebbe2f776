// The SMPP door over real TCP against a real Tern: credentials, binds, every PDU, receipts, MO, and the same
// messages, billing and consumption as REST.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import smpp from 'smpp';
import { createApp } from '../../../src/app/index.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { parseReceiptText } from '../../../src/protocols/smpp/receipt.ts';
import { decodeSmppText, encodeGsm7, encodeUcs2 } from '../../../src/domain/text.ts';
import { encodePdu, SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { selfSignedCertificate } from '../../support/certificate.ts';
import { call, packageClient, RawClient } from '../../support/smpp.ts';
import { eventually, sleep } from '../../support/wait.ts';

/** An ESME on the `smpp` package that records the deliver_sm it gets and answers them (status 0 unless told). */
class Esme {
  readonly delivers: smpp.PDU[] = [];
  /** command_status for the next deliver_sm_resp; null: do not answer at all. */
  answer: number | null = 0;
  closed = false;

  private constructor(readonly session: smpp.Session) {
    session.on('deliver_sm', (pdu: smpp.PDU) => {
      this.delivers.push(pdu);
      if (this.answer !== null) session.send(pdu.response({ command_status: this.answer }));
    });
    session.on('close', () => {
      this.closed = true;
    });
  }

  static async connect(port: number): Promise<Esme> {
    const session = smpp.connect({ host: '127.0.0.1', port });
    session.on('error', () => {});
    session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
    session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response()));
    await once(session, 'connect');
    const esme = new Esme(session);
    esmes.push(esme);
    return esme;
  }

  static async bound(port: number, command: string, systemId: string, password: string): Promise<Esme> {
    const esme = await Esme.connect(port);
    const resp = await esme.call(command, { system_id: systemId, password, system_type: 'test' });
    assert.equal(resp.command_status, 0, `${command} as ${systemId}: status 0x${resp.command_status.toString(16)}`);
    return esme;
  }

  call(command: string, fields: Record<string, unknown> = {}): Promise<smpp.PDU> {
    return call(this.session, command, fields);
  }

  submit(fields: Record<string, unknown>): Promise<smpp.PDU> {
    return this.call('submit_sm', { data_coding: 0, ...fields });
  }

  async nextDeliver(match: (pdu: smpp.PDU) => boolean = () => true, timeoutMs = 10_000): Promise<smpp.PDU> {
    return eventually(async () => this.delivers.find(match), timeoutMs, 'a deliver_sm');
  }

  close(): void {
    this.session.close();
  }
}

let esmes: Esme[] = [];

function receiptText(pdu: smpp.PDU): string {
  return (pdu['short_message'] as { message: string }).message;
}

function receiptFor(id: string) {
  return (pdu: smpp.PDU) => pdu['receipted_message_id'] === id;
}

async function createSmppCredential(server: TestServer, channelId: string, body: Record<string, unknown>) {
  return request(server, 'POST', `/admin/v1/channels/${channelId}/smpp-credentials`, { key: server.adminKey, body });
}

async function message(server: TestServer, t: Tenant, id: string) {
  const r = await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function finalStatus(server: TestServer, t: Tenant, id: string) {
  return eventually(
    async () => {
      const m = await message(server, t, id);
      return ['ENROUTE', 'SCHEDULED'].includes(m.status.value) ? undefined : m;
    },
    15_000,
    `final status of ${id}`,
  );
}

async function outboxCount(server: TestServer, credentialId: string): Promise<number> {
  const rows = await server.app.store.db.selectFrom('smpp_outbox').select('id').where('credential_id', '=', credentialId).execute();
  return rows.length;
}

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

let seq = 0;
/** A fresh tenant with an SMPP credential; `systemId` is unique per call. */
async function smppTenant(server: TestServer, opts: { balance?: number; credential?: Record<string, unknown>; channel?: Record<string, unknown> } = {}) {
  const t = await createTenant(server, { balance: opts.balance ?? 10, channel: { defaultFromField: 'ACME', ...opts.channel } });
  const systemId = `esme${++seq}`;
  const password = 'pw' + seq;
  const res = await createSmppCredential(server, t.channelId, { systemId, password, ...opts.credential });
  assert.equal(res.status, 201, res.text);
  return { t, systemId, password, credentialId: res.body.smppCredentialId as string };
}

function udh8(ref: number, total: number, seqNo: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, ref, total, seqNo]);
}

function udh16(ref: number, total: number, seqNo: number): Buffer {
  return Buffer.from([0x06, 0x08, 0x04, ref >> 8, ref & 0xff, total, seqNo]);
}

forEachDialect('SMPP gateway', (dialect) => {
  let server: TestServer;
  before(async () => {
    // Parts wait ten minutes here: the budget test's thousand first parts must all still wait when the last come, on
    // a machine however slow.
    server = await startTestServer(dialect, { TERN_MESSAGE_VALIDITY_SECONDS: '3', TERN_SMPP_WINDOW: '7', TERN_SMPP_CONCAT_TIMEOUT_SECONDS: '600' });
  });
  after(async () => {
    for (const e of esmes) e.close();
    esmes = [];
    await server.stop();
  });

  test('admin API: create, list and delete SMPP credentials; the password is hashed and never returned', async () => {
    const t = await createTenant(server, { balance: 1 });
    const res = await createSmppCredential(server, t.channelId, {
      systemId: 'admin-test',
      password: 'secret1',
      allowedIps: ['127.0.0.1', ' 10.0.0.0/8', '2001:db8::/32'],
      maxBinds: 3,
      tps: 50,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.systemId, 'admin-test');
    assert.equal(res.body.channelId, t.channelId);
    assert.equal(res.body.organisationId, t.organisationId);
    assert.deepEqual(res.body.allowedIps, ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32']);
    assert.equal(res.body.maxBinds, 3);
    assert.equal(res.body.tps, 50);
    assert.equal(res.body.state, 'ACTIVE');
    assert.ok(!('password' in res.body) && !res.text.includes('secret1'));
    const row = await server.app.store.db.selectFrom('smpp_credentials').selectAll().where('id', '=', res.body.smppCredentialId).executeTakeFirstOrThrow();
    assert.match(row.password_hash, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!row.password_hash.includes('secret1'));

    const defaults = await createSmppCredential(server, t.channelId, { systemId: 'admin-test2', password: 'x' });
    assert.equal(defaults.status, 201);
    assert.equal(defaults.body.maxBinds, 10);
    assert.equal(defaults.body.tps, 0);
    assert.equal(defaults.body.window, 0, "0: the server's window");
    assert.deepEqual(defaults.body.allowedIps, []);

    const list = await request(server, 'GET', `/admin/v1/channels/${t.channelId}/smpp-credentials`, { key: server.adminKey });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.items.map((c: any) => c.systemId),
      ['admin-test', 'admin-test2'],
    );
    assert.ok(!list.text.includes('password') && !list.text.includes('scrypt'));

    const dup = await createSmppCredential(server, t.channelId, { systemId: 'admin-test', password: 'other' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, '409.001');
    for (const [body, detail] of [
      [{ systemId: 'bad', password: 'x', allowedIps: ['10.0.0.300'] }, /allowedIps\[0\]/],
      [{ systemId: 'bad', password: 'x', allowedIps: ['10.0.0.0/33'] }, /allowedIps\[0\]/],
      [{ systemId: 'bad id', password: 'x' }, /systemId/],
      [{ systemId: 'bad', password: 'longer-than-8' }, /password/],
      [{ systemId: 'bad', password: 'x', maxBinds: 0 }, /maxBinds/],
      [{ systemId: 'bad', password: 'x', tps: -1 }, /tps/],
      [{ systemId: 'bad', password: 'x', window: -1 }, /window/],
      [{ systemId: 'bad', password: 'x', window: 1001 }, /window/],
      [{ systemId: 'bad', password: 'x', window: 2.5 }, /window/],
    ] as const) {
      const r = await createSmppCredential(server, t.channelId, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.detail, detail);
    }
    const rcs = await createTenant(server, { type: 'RCS' });
    const onRcs = await createSmppCredential(server, rcs.channelId, { systemId: 'rcs-one', password: 'x' });
    assert.equal(onRcs.status, 400);
    assert.match(onRcs.body.detail, /SMS channels/);
    const unknown = await createSmppCredential(server, '0190a0a0-0000-7000-8000-000000000000', { systemId: 'nochan', password: 'x' });
    assert.equal(unknown.status, 404);
    const asCustomer = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: t.key,
      body: { systemId: 'cust', password: 'x' },
    });
    assert.equal(asCustomer.status, 403);

    const del = await request(server, 'DELETE', `/admin/v1/smpp-credentials/${defaults.body.smppCredentialId}`, { key: server.adminKey });
    assert.equal(del.status, 200);
    assert.equal(del.body.systemId, 'admin-test2');
    const again = await request(server, 'DELETE', `/admin/v1/smpp-credentials/${defaults.body.smppCredentialId}`, { key: server.adminKey });
    assert.equal(again.status, 404);
    const esme = await Esme.connect(server.smppPort);
    const gone = await esme.call('bind_transceiver', { system_id: 'admin-test2', password: 'x' });
    assert.equal(gone.command_status, SmppStatus.ESME_RINVSYSID);
  });

  test('binds: every mode; wrong password, unknown system_id, too many binds, address not allowed', async () => {
    const { systemId, password } = await smppTenant(server, { credential: { maxBinds: 2 } });
    const tx = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const rx = await Esme.bound(server.smppPort, 'bind_receiver', systemId, password);
    const third = await Esme.connect(server.smppPort);
    assert.equal((await third.call('bind_transceiver', { system_id: systemId, password })).command_status, SmppStatus.ESME_RBINDFAIL);
    // A wrong password or system_id is answered a second late, and the connection closed: one guess a connection.
    for (const [fields, status] of [
      [{ system_id: systemId, password: 'wrong' }, SmppStatus.ESME_RINVPASWD],
      [{ system_id: 'nobody', password }, SmppStatus.ESME_RINVSYSID],
    ] as const) {
      const guess = await Esme.connect(server.smppPort);
      const started = Date.now();
      assert.equal((await guess.call('bind_transceiver', fields)).command_status, status);
      assert.ok(Date.now() - started >= 900, 'answered late');
      await eventually(() => guess.closed, 5_000, 'closed after a failed bind');
    }
    // unbind frees a slot
    const unbound = await tx.call('unbind');
    assert.equal(unbound.command, 'unbind_resp');
    assert.equal(unbound.command_status, 0);
    await eventually(async () => (tx.closed ? true : undefined), 5_000, 'unbound session closed');
    const trx = await third.call('bind_transceiver', { system_id: systemId, password });
    assert.equal(trx.command_status, 0);
    assert.equal(trx['system_id'], 'TERN');
    const el = await rx.call('enquire_link');
    assert.equal(el.command, 'enquire_link_resp');
    assert.equal(el.command_status, 0);

    const fenced = await smppTenant(server, { credential: { allowedIps: ['10.0.0.0/8'] } });
    const c = await Esme.connect(server.smppPort);
    const refused = await c.call('bind_transmitter', { system_id: fenced.systemId, password: fenced.password });
    assert.equal(refused.command_status, SmppStatus.ESME_RBINDFAIL);
    const open = await smppTenant(server, { credential: { allowedIps: ['192.0.2.1', '127.0.0.0/8'] } });
    assert.equal((await c.call('bind_transmitter', { system_id: open.systemId, password: open.password })).command_status, 0);

    // A suspended organisation cannot bind.
    const suspended = await smppTenant(server);
    const patch = await request(server, 'PATCH', `/admin/v1/organisations/${suspended.t.organisationId}`, {
      key: server.adminKey,
      body: { state: 'SUSPENDED' },
    });
    assert.equal(patch.status, 200);
    const s = await Esme.connect(server.smppPort);
    assert.equal((await s.call('bind_transceiver', { system_id: suspended.systemId, password: suspended.password })).command_status, SmppStatus.ESME_RBINDFAIL);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`tern_smpp_binds_total\\{system_id="${systemId}",mode="transmitter"\\} 1`));
    assert.match(metrics, new RegExp(`tern_smpp_bind_failures_total\\{system_id="${systemId}",status="0x0000000d"\\} 1`));
    assert.match(metrics, new RegExp(`tern_smpp_sessions\\{system_id="${systemId}"\\} 2`));
  });

  test('unknown and malformed PDUs get generic_nack and the session goes on', async () => {
    const { systemId, password } = await smppTenant(server);
    const raw = await RawClient.connect(server.smppPort);
    try {
      const bind = await raw.call('bind_transceiver', { system_id: systemId, password });
      assert.equal(bind.status, 0);
      // An unknown command id.
      const unknown = Buffer.alloc(16);
      unknown.writeUInt32BE(16, 0);
      unknown.writeUInt32BE(0x000000ff, 4);
      unknown.writeUInt32BE(0, 8);
      unknown.writeUInt32BE(4242, 12);
      raw.write(unknown);
      const nack1 = await raw.next();
      assert.equal(nack1.command, 'generic_nack');
      assert.equal(nack1.status, SmppStatus.ESME_RINVCMDID);
      assert.equal(nack1.sequence, 4242);
      // A submit_sm whose body stops in the middle of a field.
      const good = encodePdu('submit_sm', 77, 0, { destination_addr: '33612345678', short_message: Buffer.from('hi') });
      const truncated = Buffer.from(good.subarray(0, 24));
      truncated.writeUInt32BE(truncated.length, 0);
      raw.write(truncated);
      const nack2 = await raw.next();
      assert.equal(nack2.command, 'generic_nack');
      assert.equal(nack2.sequence, 77);
      assert.notEqual(nack2.status, 0);
      // Still bound: a real submit goes through.
      const ok = await raw.call('submit_sm', { destination_addr: '33612345678', short_message: encodeGsm7('after the nacks') });
      assert.equal(ok.command, 'submit_sm_resp');
      assert.equal(ok.status, 0);
      assert.match(String(ok.fields['message_id']), /^[0-9a-f-]{36}$/);
    } finally {
      raw.destroy();
    }
  });

  test('submit_sm in GSM 7-bit, Latin-1, UCS-2 and message_payload: messages like REST ones, listed and billed alike', async () => {
    const smppSide = await smppTenant(server, { balance: 5 });
    const rest = await createTenant(server, { balance: 5, channel: { defaultFromField: 'ACME' } });
    const esme = await Esme.bound(server.smppPort, 'bind_transceiver', smppSide.systemId, smppSide.password);
    const long = 'This text is longer than one part of a short message, so it travels in message_payload and counts as two parts. '.repeat(2).trim();
    const cases = [
      { fields: { destination_addr: '33612345678', short_message: encodeGsm7('Hello {world} €5'), data_coding: 0 }, text: 'Hello {world} €5' },
      { fields: { destination_addr: '+33612345679', short_message: Buffer.from('Café à Noël', 'latin1'), data_coding: 3 }, text: 'Café à Noël' },
      { fields: { destination_addr: '33612345670', short_message: encodeUcs2('Привет 😀'), data_coding: 8 }, text: 'Привет 😀', encoding: 'UNICODE' },
      { fields: { destination_addr: '33612345671', message_payload: encodeGsm7(long), data_coding: 0 }, text: long },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const resp = await esme.submit({ source_addr: 'ACME', ...c.fields });
      assert.equal(resp.command_status, 0, `submit ${c.text}`);
      ids.push(resp['message_id'] as string);
      const r = await request(server, 'POST', '/sms/v1/messages', {
        key: rest.key,
        body: { recipient: { to: String(c.fields.destination_addr) }, body: { text: c.text, ...(c.encoding && { encoding: c.encoding }) }, from: 'ACME' },
      });
      assert.equal(r.status, 201, r.text);
    }
    const mine = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { key: smppSide.t.key });
    const theirs = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { key: rest.key });
    assert.equal(mine.status, 200);
    assert.deepEqual(new Set(mine.body.items.map((m: any) => m.messageId)), new Set(ids));
    // Everything but ids, dates and the channel is the same as REST.
    const comparable = (m: any) => ({
      type: m.type,
      direction: m.direction,
      recipient: m.recipient,
      from: m.from,
      body: m.body,
      price: m.price,
      refClient: m.refClient,
      callbackUrlStatus: m.callbackUrlStatus,
      keys: Object.keys(m).sort(),
    });
    const byText = (items: any[]) => items.map(comparable).sort((a, b) => a.body.text.localeCompare(b.body.text));
    assert.deepEqual(byText(mine.body.items), byText(theirs.body.items));
    const m0 = await message(server, smppSide.t, ids[0]!);
    assert.deepEqual(m0.body, { text: 'Hello {world} €5', encoding: 'GSM7', messagePartCount: 1, length: 19, stop: false });
    const m2 = await message(server, smppSide.t, ids[2]!);
    assert.equal(m2.body.encoding, 'UNICODE');
    assert.equal(m2.body.text, 'Привет 😀');
    assert.equal((await message(server, smppSide.t, ids[3]!)).body.messagePartCount, 2);
    // Same charge, same consumption rollups.
    assert.equal(await balance(server, smppSide.t), await balance(server, rest));
    assert.ok((await balance(server, smppSide.t)) < 5);
    await Promise.all(ids.map((id) => finalStatus(server, smppSide.t, id)));
    await eventually(async () => {
      const r = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { key: rest.key });
      return r.body.items.every((m: any) => m.status.value === 'DELIVERED') ? true : undefined;
    });
    const rollups = async (t: Tenant) =>
      (
        await server.app.store.db
          .selectFrom('consumption_rollups')
          .select(['channel_type', 'status', 'price_kind', 'mcc_mnc'])
          .select((eb) => [
            eb.fn.sum<number>('quantity').as('quantity'),
            eb.fn.sum<number>('messages').as('messages'),
            eb.fn.sum<number>('amount').as('amount'),
          ])
          .where('organisation_id', '=', t.organisationId)
          .groupBy(['channel_type', 'status', 'price_kind', 'mcc_mnc'])
          .execute()
      )
        .map((r) => ({ ...r, quantity: Number(r.quantity), messages: Number(r.messages), amount: Number(r.amount) }))
        .filter((r) => r.messages !== 0 || r.quantity !== 0 || r.amount !== 0)
        .sort((a, b) => `${a.status}${a.mcc_mnc}`.localeCompare(`${b.status}${b.mcc_mnc}`));
    assert.deepEqual(await rollups(smppSide.t), await rollups(rest));
    const row = await server.app.store.db.selectFrom('messages').selectAll().where('id', '=', ids[0]!).executeTakeFirstOrThrow();
    assert.equal(row.source, 'SMPP');
    assert.equal(row.smpp_credential_id, smppSide.credentialId);
  });

  test('submit errors map to command_status: credit, destination, source, length, schedule', async () => {
    const broke = await smppTenant(server, { balance: 0 });
    const b = await Esme.bound(server.smppPort, 'bind_transmitter', broke.systemId, broke.password);
    const noCredit = await b.submit({ destination_addr: '33612345678', short_message: encodeGsm7('no money') });
    assert.equal(noCredit.command_status, SmppStatus.ESME_RSUBMITFAIL);
    // Stored like REST stores it: UNDELIVERABLE / INSUFFICIENT_CREDIT, not charged.
    const list = await request(server, 'GET', '/sms/v1/messages', { key: broke.t.key });
    assert.equal(list.body.items.length, 1);
    assert.equal(list.body.items[0].status.value, 'UNDELIVERABLE');
    assert.equal(list.body.items[0].status.detail, 'INSUFFICIENT_CREDIT');

    const ok = await smppTenant(server, { channel: { fromFieldList: ['ACME'] } });
    const e = await Esme.bound(server.smppPort, 'bind_transceiver', ok.systemId, ok.password);
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ destination_addr: 'not-a-number', short_message: encodeGsm7('x') }, SmppStatus.ESME_RINVDSTADR],
      [{ destination_addr: '', short_message: encodeGsm7('x') }, SmppStatus.ESME_RINVDSTADR],
      [{ destination_addr: '33000000000', short_message: encodeGsm7('x') }, SmppStatus.ESME_RINVDSTADR],
      [{ source_addr: 'OTHER', destination_addr: '33612345678', short_message: encodeGsm7('x') }, SmppStatus.ESME_RINVSRCADR],
      [{ destination_addr: '33612345678', message_payload: encodeGsm7('y'.repeat(1600)) }, SmppStatus.ESME_RINVMSGLEN],
      [{ destination_addr: '33612345678', short_message: Buffer.alloc(0) }, SmppStatus.ESME_RINVMSGLEN],
      [{ destination_addr: '33612345678', short_message: encodeGsm7('x'), schedule_delivery_time: 'garbage' }, SmppStatus.ESME_RINVSCHED],
      [{ destination_addr: '33612345678', short_message: encodeGsm7('x'), validity_period: '991399000000000+' }, SmppStatus.ESME_RINVEXPIRY],
    ];
    for (const [fields, status] of cases) {
      const r = await e.submit(fields);
      assert.equal(r.command_status, status, `${JSON.stringify(fields).slice(0, 80)} → 0x${r.command_status.toString(16)}`);
    }
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const errors = (status: string) =>
      Number(new RegExp(`tern_smpp_errors_total\\{[^}]*system_id="${ok.systemId}"[^}]*status="${status}"[^}]*\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    assert.equal(errors('0x0000000b'), 3, 'three invalid destinations');
    assert.equal(errors('0x00000001'), 2, 'two bad lengths');
    assert.equal(errors('0x0000000a'), 1);
    // Only the libphonenumber-invalid number was stored (UNDELIVERABLE at no charge, as REST does).
    const stored = await request(server, 'GET', '/sms/v1/messages', { key: ok.t.key });
    assert.deepEqual(
      stored.body.items.map((m: any) => [m.recipient.to, m.status.value, m.status.detail, m.price.amount]),
      [['33000000000', 'UNDELIVERABLE', 'INVALID_PHONE_NUMBER', 0]],
    );
  });

  test('throttling: above the credential TPS submits get ESME_RTHROTTLED', async () => {
    const { systemId, password } = await smppTenant(server, { credential: { tps: 3 } });
    const e = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => e.submit({ destination_addr: `3361234${String(5000 + i)}`, short_message: encodeGsm7(`burst ${i}`) })),
    );
    const statuses = answers.map((a) => a.command_status);
    const accepted = statuses.filter((s) => s === 0).length;
    const throttled = statuses.filter((s) => s === SmppStatus.ESME_RTHROTTLED).length;
    assert.equal(accepted + throttled, 12, statuses.join(','));
    assert.ok(accepted >= 3 && accepted < 12, `accepted ${accepted}`);
    assert.ok(throttled > 0);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`tern_smpp_throttled_total\\{system_id="${systemId}"\\} ${throttled}`));
    assert.match(metrics, new RegExp(`tern_smpp_submits_total\\{system_id="${systemId}"\\} ${accepted}`));
  });

  test('a real window: hundreds of submits in flight on one session, each answered with its own id', async () => {
    const { t, systemId, password } = await smppTenant(server, { balance: 100 });
    const e = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const n = 300;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) => e.submit({ destination_addr: `3365${String(1_000_000 + i)}`, short_message: encodeGsm7(`window ${i}`) })),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.command_status))], [0]);
    const ids = answers.map((a) => a['message_id'] as string);
    assert.equal(new Set(ids).size, n);
    const rows = await server.app.store.db.selectFrom('messages').select(['id', 'recipient']).where('channel_id', '=', t.channelId).execute();
    const byId = new Map(rows.map((r) => [r.id, r.recipient]));
    ids.forEach((id, i) => assert.equal(byId.get(id), `3365${String(1_000_000 + i)}`));
  });

  test('receipts go to a sibling receiver session, with the standard text and TLVs; failure-only receipts', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const tx = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const rx = await Esme.bound(server.smppPort, 'bind_receiver', systemId, password);
    const sent = await tx.submit({
      source_addr: 'ACME',
      destination_addr: '33612345678',
      short_message: encodeGsm7('Your code is 1234, valid 10 minutes'),
      registered_delivery: 1,
    });
    assert.equal(sent.command_status, 0);
    const id = sent['message_id'] as string;
    const pdu = await rx.nextDeliver(receiptFor(id));
    assert.equal(pdu['esm_class'], 0x04);
    assert.equal(pdu['source_addr'], '33612345678');
    assert.equal(pdu['destination_addr'], 'ACME');
    assert.equal(pdu['message_state'], 2);
    const text = receiptText(pdu);
    assert.match(text, new RegExp(`^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:Your code is 1234, v$`));
    const parsed = parseReceiptText(text)!;
    const m = await message(server, t, id);
    assert.equal(m.status.value, 'DELIVERED');
    assert.equal(parsed.doneDate!.getTime(), Math.floor(Date.parse(m.status.deliveryDate) / 60_000) * 60_000);
    assert.equal(tx.delivers.length, 0);
    await eventually(async () => ((await outboxCount(server, await credId(server, systemId))) === 0 ? true : undefined));

    // registered_delivery 2: only failures. 0001 is UNDELIVERED at the simulated operator, 0002 rejected.
    const okOne = await tx.submit({ destination_addr: '33612340009', short_message: encodeGsm7('fine'), registered_delivery: 2 });
    const failed = await tx.submit({ destination_addr: '33612340001', short_message: encodeGsm7('lost'), registered_delivery: 2 });
    const rejected = await tx.submit({ destination_addr: '33612340002', short_message: encodeGsm7('refused'), registered_delivery: 2 });
    const none = await tx.submit({ destination_addr: '33612340001', short_message: encodeGsm7('no receipt'), registered_delivery: 0 });
    const undeliv = await rx.nextDeliver(receiptFor(failed['message_id'] as string));
    assert.match(receiptText(undeliv), / stat:UNDELIV err:\d{3} /);
    assert.equal(undeliv['message_state'], 5);
    const rejectd = await rx.nextDeliver(receiptFor(rejected['message_id'] as string));
    assert.match(receiptText(rejectd), / stat:REJECTD /);
    assert.equal(rejectd['message_state'], 8);
    await finalStatus(server, t, okOne['message_id'] as string);
    await finalStatus(server, t, none['message_id'] as string);
    await sleep(200);
    assert.equal(rx.delivers.filter(receiptFor(okOne['message_id'] as string)).length, 0, 'no receipt for a delivered message under failure-only');
    assert.equal(rx.delivers.filter(receiptFor(none['message_id'] as string)).length, 0, 'no receipt when none was asked');
  });

  test('at most TERN_SMPP_WINDOW (7 here) deliver_sm wait for their response on a session; the rest follow as they are answered', async () => {
    assert.throws(() => loadConfig({ TERN_SMPP_WINDOW: '0' }), /TERN_SMPP_WINDOW/);
    assert.equal(loadConfig({}).smppWindow, 10);
    const { systemId, password } = await smppTenant(server);
    const trx = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    trx.answer = null;
    const sent = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        trx.submit({ destination_addr: `3361234${String(5000 + i)}`, short_message: encodeGsm7(`w${i}`), registered_delivery: 1 }),
      ),
    );
    assert.ok(sent.every((r) => r.command_status === 0));
    await eventually(async () => (trx.delivers.length >= 7 ? true : undefined), 10_000, 'seven receipts');
    await sleep(500);
    assert.equal(trx.delivers.length, 7, 'no more than the window while none is answered');
    for (const pdu of trx.delivers) trx.session.send(pdu.response());
    trx.answer = 0;
    await eventually(async () => (trx.delivers.length === 15 ? true : undefined), 10_000, 'the other eight');
    const ids = new Set(trx.delivers.map((p) => p['receipted_message_id']));
    assert.deepEqual([...ids].sort(), sent.map((r) => r['message_id']).sort());
  });

  test("a credential's window (3 here) replaces the server's for the sessions it binds; 0 gives the server's back to later binds", async () => {
    const { t, systemId, password, credentialId } = await smppTenant(server, { credential: { window: 3 } });
    const listed = await request(server, 'GET', `/admin/v1/channels/${t.channelId}/smpp-credentials`, { key: server.adminKey });
    assert.equal(listed.body.items[0].window, 3, listed.text);
    const unanswered = async (expected: number) => {
      const trx = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
      trx.answer = null;
      const sent = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          trx.submit({ destination_addr: `3361235${String(5000 + i)}`, short_message: encodeGsm7(`c${i}`), registered_delivery: 1 }),
        ),
      );
      assert.ok(sent.every((r) => r.command_status === 0));
      await eventually(async () => (trx.delivers.length >= expected ? true : undefined), 10_000, `${expected} receipts`);
      await sleep(500);
      assert.equal(trx.delivers.length, expected, 'no more than the window while none is answered');
      for (const pdu of trx.delivers) trx.session.send(pdu.response());
      trx.answer = 0;
      await eventually(async () => (trx.delivers.length === 9 ? true : undefined), 10_000, 'the others as they are answered');
      trx.close();
    };
    await unanswered(3);
    const reset = await request(server, 'PATCH', `/admin/v1/smpp-credentials/${credentialId}`, { key: server.adminKey, body: { window: 0 } });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.window, 0);
    await unanswered(7);
    const bad = await request(server, 'PATCH', `/admin/v1/smpp-credentials/${credentialId}`, { key: server.adminKey, body: { window: 5000 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail, /window/);
  });

  test("Kannel's defaults: registered_delivery 0x11 and esm_class 3 get a receipt", async () => {
    const { systemId, password } = await smppTenant(server);
    const trx = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    const sent = await trx.submit({
      source_addr: 'ACME',
      destination_addr: '33612345678',
      esm_class: 3,
      registered_delivery: 0x11,
      short_message: encodeGsm7('kannel style'),
    });
    assert.equal(sent.command_status, 0);
    const r = await trx.nextDeliver(receiptFor(sent['message_id'] as string));
    assert.match(receiptText(r), /stat:DELIVRD/);
  });

  test('receipts wait for a receiver, are sent when one binds, and are removed only on deliver_sm_resp', async () => {
    const { t, systemId, password, credentialId } = await smppTenant(server);
    const tx = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const sent = await tx.submit({ destination_addr: '33612345678', short_message: encodeGsm7('held'), registered_delivery: 1 });
    const id = sent['message_id'] as string;
    await finalStatus(server, t, id);
    await eventually(async () => ((await outboxCount(server, credentialId)) === 1 ? true : undefined), 5_000, 'receipt held');
    const held = await server.app.store.db.selectFrom('smpp_outbox').selectAll().where('credential_id', '=', credentialId).executeTakeFirstOrThrow();
    assert.equal(held.kind, 'RECEIPT');
    assert.equal(held.message_id, id);
    assert.ok(held.expires_at > Date.now() + 3_600_000);
    await sleep(300);
    assert.equal(await outboxCount(server, credentialId), 1, 'still waiting: a transmitter cannot take it');

    // A receiver that refuses the deliver_sm: the receipt stays.
    const rx = await Esme.connect(server.smppPort);
    rx.answer = SmppStatus.ESME_RX_T_APPN;
    assert.equal((await rx.call('bind_receiver', { system_id: systemId, password })).command_status, 0);
    await rx.nextDeliver(receiptFor(id));
    await sleep(200);
    assert.equal(await outboxCount(server, credentialId), 1, 'refused: kept');
    const row = await server.app.store.db.selectFrom('smpp_outbox').selectAll().where('credential_id', '=', credentialId).executeTakeFirstOrThrow();
    assert.equal(row.attempts, 1);
    rx.close();
    await eventually(async () => (rx.closed ? true : undefined));

    // A receiver that does not answer at all before it goes away: kept too.
    const silent = await Esme.connect(server.smppPort);
    silent.answer = null;
    assert.equal((await silent.call('bind_receiver', { system_id: systemId, password })).command_status, 0);
    await silent.nextDeliver(receiptFor(id));
    silent.session.socket.destroy();
    await eventually(async () => (silent.closed ? true : undefined));
    await sleep(100);
    assert.equal(await outboxCount(server, credentialId), 1, 'unanswered: kept');

    // A good receiver binds: it gets the receipt at once (the bind resets the backoff) and the row goes.
    const good = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    const r = await good.nextDeliver(receiptFor(id), 5_000);
    assert.match(receiptText(r), /stat:DELIVRD/);
    await eventually(async () => ((await outboxCount(server, credentialId)) === 0 ? true : undefined), 5_000, 'receipt removed');
  });

  test('concatenated input (8-bit UDH, 16-bit UDH, sar_* TLVs) becomes one message, billed and counted once', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    const before = await balance(server, t);
    const partA = 'A'.repeat(153);
    const partB = 'B'.repeat(153);
    const partC = 'end';
    const full = partA + partB + partC;
    const ids: string[] = [];
    // 8-bit reference, parts out of order.
    const r1 = [] as smpp.PDU[];
    for (const [seqNo, text] of [
      [2, partB],
      [1, partA],
      [3, partC],
    ] as const) {
      r1.push(
        await e.submit({
          destination_addr: '33612345678',
          esm_class: 0x40,
          registered_delivery: 1,
          short_message: Buffer.concat([udh8(7, 3, seqNo), encodeGsm7(text)]),
        }),
      );
    }
    assert.deepEqual(
      r1.map((r) => r.command_status),
      [0, 0, 0],
    );
    assert.equal(new Set(r1.map((r) => r['message_id'])).size, 1);
    ids.push(r1[0]!['message_id'] as string);
    // 16-bit reference.
    const r2 = [] as smpp.PDU[];
    for (const [seqNo, text] of [
      [1, partA],
      [2, partB],
      [3, partC],
    ] as const) {
      r2.push(
        await e.submit({
          destination_addr: '33612345679',
          esm_class: 0x40,
          short_message: Buffer.concat([udh16(0x1234, 3, seqNo), encodeGsm7(text)]),
        }),
      );
    }
    assert.equal(new Set(r2.map((r) => r['message_id'])).size, 1);
    ids.push(r2[0]!['message_id'] as string);
    // sar_* TLVs.
    const r3 = [] as smpp.PDU[];
    for (const [seqNo, text] of [
      [1, partA],
      [2, partB],
      [3, partC],
    ] as const) {
      r3.push(
        await e.submit({
          destination_addr: '33612345670',
          short_message: encodeGsm7(text),
          sar_msg_ref_num: 300,
          sar_total_segments: 3,
          sar_segment_seqnum: seqNo,
        }),
      );
    }
    assert.equal(new Set(r3.map((r) => r['message_id'])).size, 1);
    ids.push(r3[0]!['message_id'] as string);

    const list = await request(server, 'GET', '/sms/v1/messages?pageSize=100', { key: t.key });
    assert.equal(list.body.items.length, 3);
    for (const id of ids) {
      const m = await message(server, t, id);
      assert.equal(m.body.text, full);
      assert.equal(m.body.messagePartCount, 3);
    }
    const oneMessage = (await message(server, t, ids[0]!)).price.amount;
    assert.ok(Math.abs(before - (await balance(server, t)) - 3 * oneMessage) < 1e-9);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`tern_smpp_submits_total\\{system_id="${systemId}"\\} 3\\n`));
    assert.match(metrics, new RegExp(`tern_smpp_submit_parts_total\\{system_id="${systemId}"\\} 9\\n`));
    // The receipt of the reassembled message carries the id every part was answered with.
    const r = await e.nextDeliver(receiptFor(ids[0]!));
    assert.match(receiptText(r), /stat:DELIVRD.*text:A{20}$/);
  });

  test('a concatenated message refused when complete gets an error on its last part and a REJECTD receipt for its id', async () => {
    const parts = (dest: string, ref: number, source = 'ACME') =>
      [1, 2].map((seqNo) => ({
        source_addr: source,
        destination_addr: dest,
        esm_class: 0x40,
        registered_delivery: 1,
        short_message: Buffer.concat([udh8(ref, 2, seqNo), encodeGsm7(seqNo === 1 ? 'x'.repeat(153) : 'tail')]),
      }));
    // Stored UNDELIVERABLE for lack of credit.
    const broke = await smppTenant(server, { balance: 0 });
    const b = await Esme.bound(server.smppPort, 'bind_transceiver', broke.systemId, broke.password);
    const [first, last] = [await b.submit(parts('33612345678', 9)[0]!), await b.submit(parts('33612345678', 9)[1]!)];
    assert.equal(first!.command_status, 0);
    assert.equal(last!.command_status, SmppStatus.ESME_RSUBMITFAIL);
    const id = first!['message_id'] as string;
    const receipt = await b.nextDeliver(receiptFor(id));
    assert.match(receiptText(receipt), new RegExp(`^id:${id} .* stat:REJECTD err:007 `));
    assert.equal((await message(server, broke.t, id)).status.detail, 'INSUFFICIENT_CREDIT');
    // Refused before anything is stored (a sender the channel does not allow).
    const strict = await smppTenant(server, { channel: { fromFieldList: ['ACME'] } });
    const e = await Esme.bound(server.smppPort, 'bind_transceiver', strict.systemId, strict.password);
    const [p1, p2] = parts('33612345678', 10, 'OTHER');
    const r1 = await e.submit(p1!);
    const r2 = await e.submit(p2!);
    assert.equal(r1.command_status, 0);
    assert.equal(r2.command_status, SmppStatus.ESME_RINVSRCADR);
    const refused = await e.nextDeliver(receiptFor(r1['message_id'] as string));
    assert.match(receiptText(refused), / stat:REJECTD err:099 /);
    const none = await request(server, 'GET', `/sms/v1/messages/${r1['message_id']}`, { key: strict.t.key });
    assert.equal(none.status, 404);
  });

  test('schedule_delivery_time, validity_period, query_sm and cancel_sm', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    const start = await balance(server, t);
    // Relative schedule: one hour from now; absolute validity in local time two hours ahead of UTC.
    const scheduled = await e.submit({
      destination_addr: '33612345678',
      short_message: encodeGsm7('later'),
      schedule_delivery_time: '000000010000000R',
      validity_period: '301231220000008+',
      registered_delivery: 1,
    });
    assert.equal(scheduled.command_status, 0);
    const id = scheduled['message_id'] as string;
    const m = await message(server, t, id);
    assert.equal(m.status.value, 'SCHEDULED');
    const sendAt = Date.parse(m.sentDate);
    assert.ok(Math.abs(sendAt - (Date.now() + 3_600_000)) < 60_000, m.sentDate);
    const row = await server.app.store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(row.validity_until), Date.UTC(2030, 11, 31, 20, 0, 0));
    assert.ok((await balance(server, t)) < start, 'a scheduled message is charged when accepted');

    const q1 = await e.call('query_sm', { message_id: id, source_addr: '' });
    assert.equal(q1.command_status, 0);
    assert.equal(q1['message_id'], id);
    assert.equal(q1['message_state'], 1);
    assert.equal(q1['final_date'], '');

    const cancelled = await e.call('cancel_sm', { message_id: id, source_addr: '', destination_addr: '33612345678' });
    assert.equal(cancelled.command_status, 0);
    assert.equal((await message(server, t, id)).status.value, 'CANCELLED');
    assert.equal(await balance(server, t), start, 'refunded');
    const q2 = await e.call('query_sm', { message_id: id, source_addr: '' });
    assert.equal(q2['message_state'], 4);
    // The package's client reads final_date into a Date.
    assert.ok(q2['final_date'] instanceof Date && Math.abs(q2['final_date'].getTime() - Date.now()) < 60_000, String(q2['final_date']));
    const deleted = await e.nextDeliver(receiptFor(id));
    assert.match(receiptText(deleted), / stat:DELETED /);
    // Cancelling again, or a message that is not scheduled, fails; an unknown id is invalid.
    assert.equal((await e.call('cancel_sm', { message_id: id })).command_status, SmppStatus.ESME_RCANCELFAIL);
    assert.equal((await e.call('cancel_sm', { message_id: '0190a0a0-0000-7000-8000-000000000000' })).command_status, SmppStatus.ESME_RINVMSGID);

    // cancel_sm without message_id: every scheduled message from source_addr to destination_addr.
    const later = Array.from({ length: 2 }, () =>
      e.submit({ source_addr: 'ACME', destination_addr: '33611111111', short_message: encodeGsm7('bulk later'), schedule_delivery_time: '000001000000000R' }),
    );
    const other = await e.submit({
      source_addr: 'ACME',
      destination_addr: '33622222222',
      short_message: encodeGsm7('keep'),
      schedule_delivery_time: '000001000000000R',
    });
    const laterIds = (await Promise.all(later)).map((p) => p['message_id'] as string);
    const bulk = await e.call('cancel_sm', { message_id: '', source_addr: 'ACME', destination_addr: '+33611111111' });
    assert.equal(bulk.command_status, 0);
    for (const lid of laterIds) assert.equal((await message(server, t, lid)).status.value, 'CANCELLED');
    assert.equal((await message(server, t, other['message_id'] as string)).status.value, 'SCHEDULED');
    assert.equal(
      (await e.call('cancel_sm', { message_id: '', source_addr: 'ACME', destination_addr: '33611111111' })).command_status,
      SmppStatus.ESME_RCANCELFAIL,
    );

    // query_sm of a delivered message; of another channel's message; of nothing.
    const now = await e.submit({ destination_addr: '33612345678', short_message: encodeGsm7('now') });
    const nid = now['message_id'] as string;
    await finalStatus(server, t, nid);
    const q3 = await e.call('query_sm', { message_id: nid, source_addr: '' });
    assert.equal(q3['message_state'], 2);
    assert.equal(q3['error_code'], 0);
    assert.ok(q3['final_date'] instanceof Date && Math.abs(q3['final_date'].getTime() - Date.now()) < 60_000, String(q3['final_date']));
    const stranger = await smppTenant(server);
    const s = await Esme.bound(server.smppPort, 'bind_transmitter', stranger.systemId, stranger.password);
    assert.equal((await s.call('query_sm', { message_id: nid, source_addr: '' })).command_status, SmppStatus.ESME_RINVMSGID);
    assert.equal((await s.call('cancel_sm', { message_id: other['message_id'] })).command_status, SmppStatus.ESME_RINVMSGID);
    assert.equal((await e.call('query_sm', { message_id: 'nope', source_addr: '' })).command_status, SmppStatus.ESME_RINVMSGID);
    // replace_sm is not offered.
    assert.equal(
      (await e.call('replace_sm', { message_id: other['message_id'], short_message: encodeGsm7('new') })).command_status,
      SmppStatus.ESME_RREPLACEFAIL,
    );
  });

  test('an unused validity period expires the message: EXPIRED receipt', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transceiver', systemId, password);
    // 0003: the simulated operator never sends a receipt; validity 2 s (relative).
    const sent = await e.submit({
      destination_addr: '33612340003',
      short_message: encodeGsm7('ttl'),
      validity_period: '000000000002000R',
      registered_delivery: 1,
    });
    assert.equal(sent.command_status, 0);
    const id = sent['message_id'] as string;
    const r = await e.nextDeliver(receiptFor(id), 20_000);
    assert.match(receiptText(r), / stat:EXPIRED /);
    assert.equal(r['message_state'], 3);
    const m = await message(server, t, id);
    assert.equal(m.status.value, 'UNDELIVERED');
    assert.equal(m.status.detail, 'EXPIRED');
  });

  test('submit_multi: one message per destination, failures listed', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const resp = await e.call('submit_multi', {
      dest_address: [
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '33612345601' },
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '33612345602' },
        { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: 'nonsense' },
      ],
      data_coding: 0,
      short_message: encodeGsm7('to many'),
    });
    assert.equal(resp.command_status, 0);
    assert.match(String(resp['message_id']), /^[0-9a-f-]{36}$/);
    const failures = resp['unsuccess_sme'] as Array<{ destination_addr: string; error_status_code: number }>;
    assert.deepEqual(
      failures.map((f) => [f.destination_addr, f.error_status_code]),
      [['nonsense', SmppStatus.ESME_RINVDSTADR]],
    );
    const list = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.deepEqual(list.body.items.map((m: any) => m.recipient.to).sort(), ['33612345601', '33612345602']);
  });

  test('MO for the channel goes out as deliver_sm (long ones split with UDH), held until a receiver binds', async () => {
    const { t, systemId, password, credentialId } = await smppTenant(server, { channel: { defaultFromField: '36180' } });
    // Nobody bound: the MO waits.
    const inject = (from: string, text: string) =>
      request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from, to: '36180', text } });
    assert.equal((await inject('33698765432', 'Bonjour')).status, 202);
    await eventually(async () => ((await outboxCount(server, credentialId)) === 1 ? true : undefined), 5_000, 'MO held');
    const rx = await Esme.bound(server.smppPort, 'bind_receiver', systemId, password);
    const mo = await rx.nextDeliver((p) => p['esm_class'] === 0);
    assert.equal(mo['source_addr'], '33698765432');
    assert.equal(mo['destination_addr'], '36180');
    assert.deepEqual(
      [mo['source_addr_ton'], mo['source_addr_npi'], mo['dest_addr_ton'], mo['dest_addr_npi']],
      [1, 1, 3, 0],
      'international handset, short code',
    );
    assert.equal(mo['data_coding'], 0);
    assert.equal((mo['short_message'] as { message: string }).message, 'Bonjour');
    await eventually(async () => ((await outboxCount(server, credentialId)) === 0 ? true : undefined), 5_000, 'MO removed');

    // The MO is a message of the channel too, as for REST customers.
    const list = await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key });
    assert.equal(list.status, 200);
    assert.ok(list.body.items.some((m: any) => m.body.text === 'Bonjour'));

    // A long MO, read by a raw client to see the bytes: concatenation UDH, GSM 7-bit, in order on one session.
    rx.close();
    await eventually(async () => (rx.closed ? true : undefined));
    const raw = await RawClient.connect(server.smppPort);
    try {
      assert.equal((await raw.call('bind_receiver', { system_id: systemId, password })).status, 0);
      const long = 'Réponse longue: ' + 'merci pour votre message, '.repeat(8);
      assert.equal((await inject('33698765433', long)).status, 202);
      const first = await raw.next();
      assert.equal(first.command, 'deliver_sm');
      const sm1 = first.fields['short_message'] as Buffer;
      assert.deepEqual([...sm1.subarray(0, 3)], [0x05, 0x00, 0x03], 'concatenation IE, 8-bit reference');
      const total = sm1[4]!;
      const parts = [first];
      raw.write(encodePdu('deliver_sm_resp', first.sequence, 0, { message_id: '' }));
      while (parts.length < total) {
        const p = await raw.next();
        parts.push(p);
        raw.write(encodePdu('deliver_sm_resp', p.sequence, 0, { message_id: '' }));
      }
      assert.ok(total >= 2);
      const rebuilt = parts.map((p) => {
        assert.equal(p.fields['esm_class'], 0x40);
        assert.equal(p.fields['data_coding'], 0);
        assert.equal(p.fields['source_addr'], '33698765433');
        const b = p.fields['short_message'] as Buffer;
        assert.equal(b[3], sm1[3], 'one reference for all parts');
        return { seq: b[5]!, text: decodeSmppText(b.subarray(6), 0) };
      });
      assert.deepEqual(
        rebuilt.map((r) => r.seq),
        Array.from({ length: total }, (_, i) => i + 1),
        'in order',
      );
      assert.equal(rebuilt.map((r) => r.text).join(''), long);
      await eventually(async () => ((await outboxCount(server, credentialId)) === 0 ? true : undefined), 5_000, 'MO removed');
    } finally {
      raw.destroy();
    }
  });

  test('a deleted credential cannot submit on its still-open session', async () => {
    const { systemId, password, credentialId } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    assert.equal((await e.submit({ destination_addr: '33612345678', short_message: encodeGsm7('before') })).command_status, 0);
    const del = await request(server, 'DELETE', `/admin/v1/smpp-credentials/${credentialId}`, { key: server.adminKey });
    assert.equal(del.status, 200);
    assert.equal((await e.submit({ destination_addr: '33612345678', short_message: encodeGsm7('after') })).command_status, SmppStatus.ESME_RINVBNDSTS);
  });

  test('metrics: receipts pending per credential', async () => {
    const { t, systemId, password } = await smppTenant(server);
    const e = await Esme.bound(server.smppPort, 'bind_transmitter', systemId, password);
    const sent = await e.submit({ destination_addr: '33612345678', short_message: encodeGsm7('pending'), registered_delivery: 1 });
    await finalStatus(server, t, sent['message_id'] as string);
    const text = await eventually(
      async () => {
        const m = await (await fetch(`${server.url}/metrics`)).text();
        return new RegExp(`tern_smpp_outbox_pending\\{system_id="${systemId}",kind="RECEIPT"\\} 1`).test(m) ? m : undefined;
      },
      15_000,
      'pending gauge',
    );
    assert.match(text, /# TYPE tern_smpp_outbox_pending gauge/);
  });

  test('reassembly budgets: a credential flooding first parts is refused alone; impossible UDH numbering is an error', async () => {
    const flood = await smppTenant(server, { balance: 10 });
    const calm = await smppTenant(server, { balance: 10 });
    const flooder = await Esme.bound(server.smppPort, 'bind_transmitter', flood.systemId, flood.password);
    const statuses = new Map<number, number>();
    for (let i = 0; i < 1_050; i += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          flooder.submit({
            source_addr: 'ACME',
            destination_addr: `3361${String(i + j).padStart(7, '0')}`,
            esm_class: 0x40,
            short_message: Buffer.concat([udh8(1, 2, 1), Buffer.from('first half')]),
          }),
        ),
      );
      for (const a of answers) statuses.set(a.command_status, (statuses.get(a.command_status) ?? 0) + 1);
    }
    assert.equal(statuses.get(0), 1_000, 'a thousand parts wait');
    assert.equal(statuses.get(SmppStatus.ESME_RMSGQFUL), 50, 'the rest of this credential’s are refused');
    // Another customer's long message goes through meanwhile.
    const other = await Esme.bound(server.smppPort, 'bind_transceiver', calm.systemId, calm.password);
    const p1 = await other.submit({
      source_addr: 'ACME',
      destination_addr: '33612345678',
      esm_class: 0x40,
      short_message: Buffer.concat([udh8(9, 2, 1), Buffer.from('Hello ')]),
    });
    const p2 = await other.submit({
      source_addr: 'ACME',
      destination_addr: '33612345678',
      esm_class: 0x40,
      short_message: Buffer.concat([udh8(9, 2, 2), Buffer.from('world')]),
    });
    assert.deepEqual([p1.command_status, p2.command_status], [0, 0]);
    assert.equal((await message(server, calm.t, String(p1.message_id))).body.text, 'Hello world');
    for (const bad of [udh8(3, 0, 1), udh8(3, 2, 0), udh8(3, 2, 3)]) {
      const r = await other.submit({
        source_addr: 'ACME',
        destination_addr: '33612345678',
        esm_class: 0x40,
        short_message: Buffer.concat([bad, Buffer.from('x')]),
      });
      assert.equal(r.command_status, SmppStatus.ESME_RINVMSGLEN, bad.toString('hex'));
    }
  });
});

async function credId(server: TestServer, systemId: string): Promise<string> {
  const row = await server.app.store.db.selectFrom('smpp_credentials').select('id').where('system_id', '=', systemId).executeTakeFirstOrThrow();
  return row.id;
}

test('the TLS listener from TERN_SMPP_TLS_*; stopping Tern unbinds its SMPP clients first', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tern-smpp-tls-'));
  const { key, cert } = selfSignedCertificate(dir);
  const config = loadConfig({
    TERN_HTTP_HOST: '127.0.0.1',
    TERN_HTTP_PORT: '0',
    TERN_SMPP_HOST: '127.0.0.1',
    TERN_SMPP_PORT: '0',
    TERN_SMPP_TLS_PORT: '0',
    TERN_SMPP_TLS_CERT: cert,
    TERN_SMPP_TLS_KEY: key,
    TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
    TERN_ADMIN_KEY: 'tls-test-admin-key-0123456789',
    TERN_LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, { logger: pino({ level: 'silent' }) });
  let stopped = false;
  try {
    const ports = await app.start();
    assert.ok(ports.smppTlsPort && ports.smppTlsPort !== ports.smppPort && ports.smppPort > 0);
    const server = { url: `http://127.0.0.1:${ports.httpPort}` };
    const t = await createTenant({ ...server, adminKey: 'tls-test-admin-key-0123456789' } as TestServer, { balance: 1 });
    const cred = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: 'tls-test-admin-key-0123456789',
      body: { systemId: 'tls', password: 'tls' },
    });
    assert.equal(cred.status, 201);
    const secure = await packageClient(ports.smppTlsPort!, { tls: true });
    assert.equal((secure.socket as unknown as { encrypted?: boolean }).encrypted, true);
    assert.equal((await call(secure, 'bind_transceiver', { system_id: 'tls', password: 'tls' })).command_status, 0);
    const sent = await call(secure, 'submit_sm', { destination_addr: '33612345678', data_coding: 0, short_message: encodeGsm7('over TLS') });
    assert.equal(sent.command_status, 0);

    const plain = await Esme.bound(ports.smppPort, 'bind_receiver', 'tls', 'tls');
    const unbinds: string[] = [];
    plain.session.on('unbind', () => unbinds.push('plain'));
    secure.on('unbind', () => unbinds.push('tls'));
    await app.stop();
    stopped = true;
    assert.deepEqual(unbinds.sort(), ['plain', 'tls']);
    await eventually(async () => (plain.closed ? true : undefined), 5_000, 'plain session closed');
  } finally {
    if (!stopped) await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
