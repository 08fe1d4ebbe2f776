// An operator's SMSC for tests, on the `smpp` package's server (a peer that is not Tern's code), with faults that
// real SMSCs show: refused binds, throttling, full queues, slow answers, connections dropped with a full window,
// receipts before the submit's answer, ids written differently in receipts, duplicate and unknown receipts.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import smpp from 'smpp';

export interface SmscSubmit {
  id: string;
  destination: string;
  source: string;
  sourceTon: number;
  text: string;
  dataCoding: number;
  esmClass: number;
  /** Concatenation as the part says (UDH or sar_*), when it is a part. */
  concat: { ref: number; total: number; seq: number; by: 'UDH8' | 'UDH16' | 'SAR' } | null;
  payload: boolean;
  registeredDelivery: number;
  systemId: string;
  /** Which connection carried it (numbered from 1 as they were accepted). */
  connection: number;
  at: number;
}

export interface SmscBehaviour {
  /** Answer binds with this command_status (0: accept). */
  bindStatus: number;
  /** command_status for a submit (`n`: how many arrived before it); 0 accepts it. */
  submitStatus: (s: Omit<SmscSubmit, 'id'>, n: number) => number;
  /** Delay before answering a submit. */
  answerDelayMs: number;
  /** After this many submits (counted from when it is set), the connection is dropped without answering them. */
  dropAfter: number | null;
  /** Receipts: after the answer, before it, or none. */
  receipts: 'after' | 'before' | 'none';
  /** The stat of a message's receipt. */
  stat: (destination: string) => string;
  /** How receipts write the id the answer gave in decimal. */
  receiptIds: 'same' | 'hex' | 'HEX-PADDED';
  /** Each receipt sent twice. */
  duplicateReceipts: boolean;
  /** Receipts carry the receipted_message_id and message_state TLVs (besides the text). */
  receiptTlvs: boolean;
  /**
   * A receipt left unanswered by a connection that closes (a bind unbinding as the receipt crossed it) is sent again
   * on another receiver, as SMSCs redeliver what was not acknowledged.
   */
  redeliverReceipts: boolean;
}

const DEFAULTS: SmscBehaviour = {
  bindStatus: 0,
  submitStatus: () => 0,
  answerDelayMs: 0,
  dropAfter: null,
  receipts: 'after',
  stat: () => 'DELIVRD',
  receiptIds: 'same',
  duplicateReceipts: false,
  receiptTlvs: true,
  redeliverReceipts: false,
};

const MESSAGE_STATE: Record<string, number> = { DELIVRD: 2, EXPIRED: 3, DELETED: 4, UNDELIV: 5, ACCEPTD: 6, UNKNOWN: 7, REJECTD: 8, ENROUTE: 1 };

interface Bound {
  session: smpp.Session;
  mode: 'transmitter' | 'receiver' | 'transceiver';
  systemId: string;
}

function text(value: unknown): string {
  const v = value as { message?: unknown } | Buffer | string | undefined;
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('latin1');
  return typeof v.message === 'string' ? v.message : Buffer.isBuffer(v.message) ? v.message.toString('latin1') : '';
}

function concatOf(pdu: smpp.PDU): SmscSubmit['concat'] {
  const udh = (pdu.short_message as { udh?: Buffer[] } | undefined)?.udh;
  for (const ie of udh ?? []) {
    if (ie[0] === 0x00) return { ref: ie[2]!, total: ie[3]!, seq: ie[4]!, by: 'UDH8' };
    if (ie[0] === 0x08) return { ref: (ie[2]! << 8) | ie[3]!, total: ie[4]!, seq: ie[5]!, by: 'UDH16' };
  }
  if (pdu.sar_msg_ref_num !== undefined) {
    return { ref: pdu.sar_msg_ref_num as number, total: pdu.sar_total_segments as number, seq: pdu.sar_segment_seqnum as number, by: 'SAR' };
  }
  return null;
}

export class TestSmsc {
  /** Submits taken (answered with 0, or taken and never answered when the connection is dropped). */
  readonly submits: SmscSubmit[] = [];
  /** Every submit_sm as it arrived, with the status it was (or is to be) answered with. */
  readonly arrivals: Array<{ at: number; status: number }> = [];
  /** The most submits one connection had unanswered at once. */
  maxOutstanding = 0;
  private readonly outstanding = new Map<smpp.Session, number>();
  private readonly connections = new WeakMap<smpp.Session, number>();
  private accepted_ = 0;
  readonly bound: Bound[] = [];
  /** Bind attempts (accepted or refused). */
  bindAttempts = 0;
  behaviour: SmscBehaviour = { ...DEFAULTS };
  private nextId = 1_000_000;
  private sinceDrop = 0;
  private turn = 0;

  private constructor(
    private readonly server: ReturnType<typeof smpp.createServer>,
    readonly port: number,
  ) {}

  /** Listens on 127.0.0.1, on `port` when given (an SMSC coming back where it was), over TLS with a key and certificate. */
  static async start(behaviour: Partial<SmscBehaviour> = {}, port = 0, tls?: { key: Buffer; cert: Buffer }): Promise<TestSmsc> {
    const server = smpp.createServer({ ...tls }, (session) => smsc.accept(session));
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    // Over TLS the package emits sessions on secure connections; a failed handshake must not crash the test.
    server.on('tlsClientError', () => {});
    const smsc = new TestSmsc(server, (server.address() as AddressInfo).port);
    smsc.set(behaviour);
    return smsc;
  }

  set(behaviour: Partial<SmscBehaviour>): void {
    this.behaviour = { ...this.behaviour, ...behaviour };
    if (behaviour.dropAfter !== undefined) this.sinceDrop = 0;
  }

  /** Submits accepted per destination and text (more than one: sent twice). */
  accepted(): Map<string, number> {
    const n = new Map<string, number>();
    for (const s of this.submits) n.set(`${s.destination}|${s.text}`, (n.get(`${s.destination}|${s.text}`) ?? 0) + 1);
    return n;
  }

  private accept(session: smpp.Session): void {
    this.connections.set(session, ++this.accepted_);
    session.on('error', () => {});
    const onBind = (mode: Bound['mode']) => (pdu: smpp.PDU) => {
      this.bindAttempts++;
      if (this.behaviour.bindStatus !== 0) {
        session.send(pdu.response({ command_status: this.behaviour.bindStatus }));
        return;
      }
      session.send(pdu.response({ system_id: 'TESTSMSC' }));
      const entry: Bound = { session, mode, systemId: String(pdu.system_id) };
      this.bound.push(entry);
      session.on('close', () => this.bound.splice(this.bound.indexOf(entry), 1));
    };
    session.on('bind_transceiver', onBind('transceiver'));
    session.on('bind_transmitter', onBind('transmitter'));
    session.on('bind_receiver', onBind('receiver'));
    session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
    session.on('unbind', (pdu: smpp.PDU) => {
      session.send(pdu.response());
      session.close();
    });
    session.on('submit_sm', (pdu: smpp.PDU) => this.onSubmit(session, pdu));
  }

  private onSubmit(session: smpp.Session, pdu: smpp.PDU): void {
    const b = this.behaviour;
    const open = (this.outstanding.get(session) ?? 0) + 1;
    this.outstanding.set(session, open);
    this.maxOutstanding = Math.max(this.maxOutstanding, open);
    if (b.dropAfter !== null) {
      this.arrivals.push({ at: Date.now(), status: -1 });
      this.sinceDrop++;
      // The submit is taken, never answered, and the connection goes: the client cannot know what happened.
      this.record(pdu, session);
      if (this.sinceDrop >= b.dropAfter) {
        this.behaviour = { ...b, dropAfter: null };
        session.socket.destroy();
      }
      return;
    }
    const payload = pdu.message_payload !== undefined;
    const base = {
      destination: String(pdu.destination_addr),
      source: String(pdu.source_addr),
      sourceTon: pdu.source_addr_ton as number,
      text: payload ? text(pdu.message_payload) : text(pdu.short_message),
      dataCoding: pdu.data_coding as number,
      esmClass: pdu.esm_class as number,
      concat: concatOf(pdu),
      payload,
      registeredDelivery: pdu.registered_delivery as number,
      systemId: this.systemIdOf(session),
      connection: this.connections.get(session) ?? 0,
      at: Date.now(),
    };
    const status = b.submitStatus(base, this.arrivals.length);
    this.arrivals.push({ at: Date.now(), status });
    const answer = () => {
      this.outstanding.set(session, (this.outstanding.get(session) ?? 1) - 1);
      if (status !== 0) {
        session.send(pdu.response({ command_status: status }));
        return;
      }
      const s = this.record(pdu, session, base);
      if (b.receipts === 'before') this.receipt(s);
      session.send(pdu.response({ message_id: s.id }));
      if (b.receipts === 'after') setTimeout(() => this.receipt(s), 5);
    };
    if (b.answerDelayMs > 0) setTimeout(answer, b.answerDelayMs);
    else answer();
  }

  private systemIdOf(session: smpp.Session): string {
    return this.bound.find((x) => x.session === session)?.systemId ?? '';
  }

  private record(pdu: smpp.PDU, session: smpp.Session, base?: Omit<SmscSubmit, 'id'>): SmscSubmit {
    const s: SmscSubmit = {
      id: String(this.nextId++),
      ...(base ?? {
        destination: String(pdu.destination_addr),
        source: String(pdu.source_addr),
        sourceTon: pdu.source_addr_ton as number,
        text: text(pdu.short_message),
        dataCoding: pdu.data_coding as number,
        esmClass: pdu.esm_class as number,
        concat: concatOf(pdu),
        payload: false,
        registeredDelivery: pdu.registered_delivery as number,
        systemId: this.systemIdOf(session),
        connection: this.connections.get(session) ?? 0,
        at: Date.now(),
      }),
    };
    this.submits.push(s);
    return s;
  }

  /** A receiver or transceiver, taken in turn (a receipt may come on another bind than its submit). */
  private receiver(): smpp.Session | null {
    const rx = this.bound.filter((x) => x.mode !== 'transmitter');
    if (rx.length === 0) return null;
    return rx[this.turn++ % rx.length]!.session;
  }

  private writtenId(id: string): string {
    switch (this.behaviour.receiptIds) {
      case 'same':
        return id;
      case 'hex':
        return BigInt(id).toString(16);
      case 'HEX-PADDED':
        return BigInt(id).toString(16).toUpperCase().padStart(10, '0');
    }
  }

  /** Sends the receipt for a submit (twice when asked to); returns false when no receiver is bound. */
  receipt(s: Pick<SmscSubmit, 'id' | 'destination' | 'source' | 'text'>, stat = this.behaviour.stat(s.destination)): boolean {
    const rx = this.receiver();
    if (!rx) return false;
    const id = this.writtenId(s.id);
    const date = '2611241200';
    const body = `id:${id} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:${date} done date:${date} stat:${stat} err:000 text:${s.text.slice(0, 20)}`;
    const fields: Record<string, unknown> = {
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: s.destination,
      dest_addr_ton: 5,
      dest_addr_npi: 0,
      destination_addr: s.source,
      esm_class: 0x04,
      data_coding: 0,
      short_message: Buffer.from(body, 'latin1'),
      ...(this.behaviour.receiptTlvs && { receipted_message_id: id, message_state: MESSAGE_STATE[stat] ?? 7 }),
    };
    const times = this.behaviour.duplicateReceipts ? 2 : 1;
    for (let i = 0; i < times; i++) this.deliver(rx, fields);
    return true;
  }

  /** A deliver_sm on `rx`; unanswered when `rx` closes, sent again on another receiver if the behaviour says so. */
  private deliver(rx: smpp.Session, fields: Record<string, unknown>): void {
    if (!this.behaviour.redeliverReceipts) {
      rx.deliver_sm(fields);
      return;
    }
    let answered = false;
    const again = () => {
      if (answered) return;
      setTimeout(() => {
        const next = this.receiver();
        if (next) this.deliver(next, fields);
      }, 50);
    };
    rx.socket.once('close', again);
    rx.deliver_sm(fields, () => {
      answered = true;
      rx.socket.off('close', again);
    });
  }

  /** A receipt for an id this SMSC never gave. */
  unknownReceipt(): boolean {
    return this.receipt({ id: String(9_000_000_000 + Math.floor(Math.random() * 1e6)), destination: '33600000000', source: 'X', text: '' });
  }

  /** A person's message, as deliver_sm(s) on a receiver: split in `parts` with an 8-bit UDH when more than one. */
  async mo(from: string, to: string, message: string, parts = 1): Promise<number[]> {
    const rx = this.receiver();
    if (!rx) throw new Error('no receiver bound');
    const chunks =
      parts === 1
        ? [message]
        : Array.from({ length: parts }, (_, i) => message.slice(Math.ceil((message.length / parts) * i), Math.ceil((message.length / parts) * (i + 1))));
    const ref = Math.floor(Math.random() * 256);
    const statuses: number[] = [];
    for (let i = 0; i < chunks.length; i++) {
      const bytes = Buffer.from(chunks[i]!, 'latin1');
      const short = parts === 1 ? bytes : Buffer.concat([Buffer.from([0x05, 0x00, 0x03, ref, parts, i + 1]), bytes]);
      const resp = await new Promise<smpp.PDU>((resolve) =>
        rx.deliver_sm(
          {
            source_addr_ton: 1,
            source_addr_npi: 1,
            source_addr: from,
            dest_addr_ton: /^\d{7,}$/.test(to) ? 1 : 3,
            dest_addr_npi: /^\d{7,}$/.test(to) ? 1 : 0,
            destination_addr: to,
            esm_class: parts === 1 ? 0 : 0x40,
            data_coding: 3,
            short_message: short,
          },
          resolve,
        ),
      );
      statuses.push(resp.command_status);
    }
    return statuses;
  }

  /** Drops every connection at once (an SMSC restart, a network cut). */
  dropAll(): void {
    for (const b of [...this.bound]) b.session.socket.destroy();
    for (const s of [...(this.server as unknown as { sessions: smpp.Session[] }).sessions]) s.socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
