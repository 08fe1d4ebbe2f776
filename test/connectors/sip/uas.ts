/**
 * An in-process SIP trunk for the SIP connector's tests, on the same `sip` package: it answers each call as its
 * number says (README "Voice over SIP" outcomes), challenges with digest authentication when asked to, receives
 * the RTP it is sent and keeps every packet with its arrival time.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import sip, { type SipMessage, type SipStack } from 'sip';
import digest, { type DigestSession } from 'sip/digest.js';
import { parseRtp } from '../../../src/connectors/sip/rtp.ts';

export type Behaviour =
  | 'answer' // 100, 180, then 200 after `answerAfterMs`
  | 'busy' // 100 then 486
  | 'busy-now' // 486 at once
  | 'unavailable' // 503 at once
  | 'not-found' // 404
  | 'ring' // 180 and never answers (the caller cancels)
  | 'silent' // says nothing at all
  | 'hang-up'; // answers, then hangs up (BYE) after `hangUpAfterMs`

export interface ReceivedPacket {
  at: number;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
}

export interface ReceivedCall {
  callId: string;
  number: string;
  from: string;
  invites: SipMessage[];
  answeredAt?: number;
  cancelled: boolean;
  ended?: { by: 'caller' | 'callee'; at: number };
  packets: ReceivedPacket[];
  codec?: string;
}

export interface UasOptions {
  transport?: 'UDP' | 'TCP';
  /** Digest credentials the trunk asks for; none: it takes every call. */
  credentials?: { user: string; password: string; realm: string };
  /** What the trunk does with a number (its last digits); default: answer. */
  behaviour?(number: string): Behaviour;
  answerAfterMs?: number;
  hangUpAfterMs?: number;
  /** Answer OPTIONS (else 405). */
  options?: boolean;
  /** Codecs the trunk takes, in its order. */
  codecs?: Array<'PCMA' | 'PCMU'>;
}

/** The trunk's address: another loopback address than Tern's (see `addressBesides`). */
export const TRUNK_ADDRESS = '127.0.0.2';

async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, TRUNK_ADDRESS, () => r()));
  const port = s.address().port;
  s.close();
  return port;
}

export class TestTrunk {
  readonly calls = new Map<string, ReceivedCall>();
  readonly requests: SipMessage[] = [];
  private readonly sockets: dgram.Socket[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly pending = new Map<string, SipMessage>();
  private readonly auth = new Map<string, DigestSession>();
  private stack!: SipStack;
  port = 0;

  constructor(private readonly o: UasOptions = {}) {}

  static async start(o: UasOptions = {}): Promise<TestTrunk> {
    const t = new TestTrunk(o);
    t.port = await freeUdpPort();
    t.stack = sip.create(
      { address: TRUNK_ADDRESS, port: t.port, udp: (o.transport ?? 'UDP') === 'UDP', tcp: o.transport === 'TCP' },
      (rq) => void t.onRequest(rq),
    );
    return t;
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private respond(rq: SipMessage, status: number, reason: string, extra: { headers?: Record<string, unknown>; content?: string } = {}, toTag?: string): void {
    const rs = sip.makeResponse(rq, status, reason);
    if (toTag) rs.headers.to = { ...rs.headers.to!, params: { ...rs.headers.to!.params, tag: toTag } };
    Object.assign(rs.headers, extra.headers ?? {});
    if (extra.content !== undefined) rs.content = extra.content;
    this.stack.send(rs);
  }

  private async onRequest(rq: SipMessage): Promise<void> {
    this.requests.push(rq);
    const callId = rq.headers['call-id']!;
    switch (rq.method) {
      case 'OPTIONS':
        return this.o.options === false ? this.respond(rq, 405, 'Method Not Allowed', {}, 'uas') : this.respond(rq, 200, 'OK', {}, 'uas');
      case 'REGISTER':
        if (!this.authorised(rq)) return;
        return this.respond(rq, 200, 'OK', { headers: { contact: rq.headers.contact, expires: rq.headers.expires } }, 'uas');
      case 'INVITE':
        return this.onInvite(rq);
      case 'CANCEL': {
        this.respond(rq, 200, 'OK');
        const invite = this.pending.get(callId);
        const call = this.calls.get(callId);
        if (invite && call) {
          call.cancelled = true;
          this.pending.delete(callId);
          this.respond(invite, 487, 'Request Terminated', {}, 'uas');
        }
        return;
      }
      case 'BYE': {
        this.respond(rq, 200, 'OK');
        const call = this.calls.get(callId);
        if (call && !call.ended) call.ended = { by: 'caller', at: Date.now() };
        return;
      }
      case 'ACK':
        return;
      default:
        return this.respond(rq, 405, 'Method Not Allowed');
    }
  }

  /** Digest check: challenges a request without (valid) credentials and answers false. */
  private authorised(rq: SipMessage): boolean {
    const c = this.o.credentials;
    if (!c) return true;
    const key = rq.headers['call-id']!;
    const session = this.auth.get(key);
    if (session && digest.authenticateRequest(session, rq, { user: c.user, password: c.password, realm: c.realm })) return true;
    const fresh: DigestSession = { realm: c.realm };
    this.auth.set(key, fresh);
    const rs = digest.challenge(fresh, sip.makeResponse(rq, 401, 'Unauthorized'));
    rs.headers.to = { ...rs.headers.to!, params: { ...rs.headers.to!.params, tag: 'uas' } };
    this.stack.send(rs);
    return false;
  }

  private async onInvite(rq: SipMessage): Promise<void> {
    const callId = rq.headers['call-id']!;
    const uri = sip.parseUri(rq.uri!);
    const number = uri.user ?? '';
    const call: ReceivedCall = this.calls.get(callId) ?? {
      callId,
      number,
      from: String(sip.parseUri(rq.headers.from!.uri).user),
      invites: [],
      cancelled: false,
      packets: [],
    };
    call.invites.push(rq);
    this.calls.set(callId, call);
    if (!this.authorised(rq)) return;
    const behaviour = this.o.behaviour?.(number) ?? 'answer';
    if (behaviour === 'silent') return;
    if (behaviour === 'busy-now') return this.respond(rq, 486, 'Busy Here', {}, 'uas');
    if (behaviour === 'unavailable') return this.respond(rq, 503, 'Service Unavailable', {}, 'uas');
    if (behaviour === 'not-found') return this.respond(rq, 404, 'Not Found', {}, 'uas');
    this.respond(rq, 100, 'Trying');
    if (behaviour === 'busy') return this.later(30, () => this.respond(rq, 486, 'Busy Here', {}, 'uas'));
    this.respond(rq, 180, 'Ringing', {}, 'uas');
    this.pending.set(callId, rq);
    if (behaviour === 'ring') return;
    this.later(this.o.answerAfterMs ?? 50, () => void this.answer(rq, call, behaviour === 'hang-up'));
  }

  private async answer(rq: SipMessage, call: ReceivedCall, hangUp: boolean): Promise<void> {
    if (!this.pending.delete(call.callId)) return; // cancelled meanwhile
    const offer = rq.content ?? '';
    const offered = /m=audio \d+ RTP\/AVP((?: \d+)+)/.exec(offer)![1]!.trim().split(' ').map(Number);
    const names: Record<number, 'PCMA' | 'PCMU'> = { 0: 'PCMU', 8: 'PCMA' };
    const wanted = this.o.codecs ?? ['PCMA', 'PCMU'];
    const codec = wanted.find((c) => offered.some((pt) => names[pt] === c));
    const socket = dgram.createSocket('udp4');
    this.sockets.push(socket);
    await new Promise<void>((r) => socket.bind(0, TRUNK_ADDRESS, () => r()));
    socket.on('message', (packet) => {
      const p = parseRtp(packet);
      call.packets.push({
        at: performance.now(),
        payloadType: p.payloadType,
        sequence: p.sequence,
        timestamp: p.timestamp,
        ssrc: p.ssrc,
        marker: p.marker,
        payload: Buffer.from(p.payload),
      });
    });
    const pt = codec === 'PCMU' ? 0 : 8;
    const sdp = codec
      ? [
          'v=0',
          'o=trunk 1 1 IN IP4 127.0.0.1',
          's=-',
          `c=IN IP4 ${TRUNK_ADDRESS}`,
          't=0 0',
          `m=audio ${socket.address().port} RTP/AVP ${pt}`,
          `a=rtpmap:${pt} ${codec}/8000`,
          'a=recvonly',
          '',
        ].join('\r\n')
      : ['v=0', 'o=trunk 1 1 IN IP4 127.0.0.1', 's=-', `c=IN IP4 ${TRUNK_ADDRESS}`, 't=0 0', 'm=audio 0 RTP/AVP 18', ''].join('\r\n');
    call.codec = codec;
    call.answeredAt = Date.now();
    this.respond(
      rq,
      200,
      'OK',
      { headers: { contact: [{ uri: `sip:trunk@${TRUNK_ADDRESS}:${this.port}`, params: {} }], 'content-type': 'application/sdp' }, content: sdp },
      'uas',
    );
    if (hangUp) this.later(this.o.hangUpAfterMs ?? 500, () => this.bye(rq, call));
  }

  private bye(invite: SipMessage, call: ReceivedCall): void {
    if (call.ended) return;
    call.ended = { by: 'callee', at: Date.now() };
    const contact = invite.headers.contact![0]!.uri;
    this.stack.send({
      method: 'BYE',
      uri: typeof contact === 'string' ? contact : sip.stringifyUri(contact),
      headers: {
        to: invite.headers.from,
        from: { ...invite.headers.to!, params: { ...invite.headers.to!.params, tag: 'uas' } },
        'call-id': call.callId,
        cseq: { method: 'BYE', seq: 1 },
        'max-forwards': 70,
        via: [],
      },
    });
  }

  /** The calls to `number`, in the order they came. */
  callsTo(number: string): ReceivedCall[] {
    return [...this.calls.values()].filter((c) => c.number.endsWith(number));
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.close();
    // Answers sent last go out on the next tick.
    await new Promise((r) => setTimeout(r, 20));
    this.stack.destroy();
  }
}

export const newTag = () => randomBytes(4).toString('hex');
