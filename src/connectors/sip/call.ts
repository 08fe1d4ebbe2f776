import { randomBytes } from 'node:crypto';
import type { NameAddr, SipMessage } from 'sip';
import digest from 'sip/digest.js';
import type { G711Codec } from './g711.ts';
import { PAYLOAD_TYPES } from './g711.ts';
import { RtpSender } from './rtp.ts';
import { readSdpAnswer, sdpOffer } from './sdp.ts';
import type { SipEndpoint } from './stack.ts';

/** How a placed call ended, as the core hears it. */
export type CallOutcome =
  | { kind: 'answered'; answeredMs: number; playedMs: number; hungUpBy: 'tern' | 'callee' }
  | { kind: 'busy'; status: number }
  | { kind: 'no-answer'; status: number | null }
  | { kind: 'invalid'; status: number }
  | { kind: 'rejected'; status: number; reason: string };

/** Whether the trunk took the call (it answered the INVITE), or why not; only a temporary refusal goes elsewhere. */
export type Placement =
  | { placed: true }
  | { placed: false; temporary: true; code: 'TRUNK_UNAVAILABLE' | 'TRUNK_TIMEOUT' | 'AUTH_REFUSED'; reason: string }
  | { placed: false; temporary: false; outcome: CallOutcome };

/** What a final answer to the INVITE means (README "Voice over SIP"). */
export function finalAnswer(status: number, reason: string): { temporary: true } | CallOutcome {
  if (status === 486 || status === 600) return { kind: 'busy', status };
  if (status === 408 || status === 480 || status === 487) return { kind: 'no-answer', status };
  if (status === 404 || status === 484 || status === 604) return { kind: 'invalid', status };
  if (status >= 500 && status < 600) return { temporary: true };
  return { kind: 'rejected', status, reason };
}

export interface CallSpec {
  callId: string;
  /** The request URI and To: the number dialled at the trunk. */
  target: string;
  from: string;
  endpoint: SipEndpoint;
  codecs: readonly G711Codec[];
  credentials: { user: string; password: string } | null;
  ringTimeoutMs: number;
  trunkTimeoutMs: number;
  /** The recording to play, encoded per codec on demand (16-bit linear 8 kHz). */
  encode(codec: G711Codec): Buffer;
}

const tag = () => randomBytes(6).toString('hex');

/**
 * One outgoing call: INVITE (with digest authentication when challenged), CANCEL when it rings too long, ACK on
 * answer, the recording played as RTP, BYE once played — or the callee's BYE, answered, when they hang up first.
 */
export class OutgoingCall {
  private readonly fromTag = tag();
  private cseq = 1;
  private invite: SipMessage | null = null;
  private authTried = false;
  private provisional = false;
  private answered = false;
  private ended = false;
  private abandoned = false;
  private ringTimer: NodeJS.Timeout | null = null;
  private trunkTimer: NodeJS.Timeout | null = null;
  private rtp: RtpSender | null = null;
  private dialog: { to: NameAddr; target: string; route: NameAddr[] } | null = null;
  private answeredAt = 0;
  private placementDone: ((p: Placement) => void) | null = null;
  private outcomeDone: ((o: CallOutcome) => void) | null = null;
  /** Resolves when the trunk took the call or refused it. */
  readonly placement: Promise<Placement>;
  /** Resolves when a placed call ended. */
  readonly outcome: Promise<CallOutcome>;
  /** Called once the callee answered (the call is being played). */
  onAnswer: () => void = () => {};

  constructor(private readonly spec: CallSpec) {
    this.placement = new Promise((resolve) => (this.placementDone = resolve));
    this.outcome = new Promise((resolve) => (this.outcomeDone = resolve));
  }

  get callId(): string {
    return this.spec.callId;
  }

  async start(): Promise<Placement> {
    this.rtp = await RtpSender.open(this.spec.endpoint.address);
    this.trunkTimer = setTimeout(() => {
      if (this.provisional || this.ended) return;
      // The trunk said nothing: the call goes elsewhere, and this one is dropped if it ever comes to life.
      this.abandoned = true;
      this.place({
        placed: false,
        temporary: true,
        code: 'TRUNK_TIMEOUT',
        reason: `the trunk did not answer the INVITE within ${this.spec.trunkTimeoutMs} ms`,
      });
      this.finish(null);
    }, this.spec.trunkTimeoutMs);
    this.sendInvite(null);
    return this.placement;
  }

  private place(p: Placement): void {
    this.placementDone?.(p);
    this.placementDone = null;
  }

  private sendInvite(challenge: SipMessage | null): void {
    const offer = sdpOffer({ address: this.spec.endpoint.address, port: this.rtp!.port, codecs: this.spec.codecs, sessionId: Date.now() });
    const invite: SipMessage = {
      method: 'INVITE',
      uri: this.spec.target,
      headers: {
        to: { uri: this.spec.target, params: {} },
        from: { uri: this.spec.from, params: { tag: this.fromTag } },
        'call-id': this.spec.callId,
        cseq: { method: 'INVITE', seq: this.cseq },
        contact: [{ uri: this.spec.endpoint.contact(), params: {} }],
        'content-type': 'application/sdp',
        'max-forwards': 70,
        'user-agent': 'Tern',
      },
      content: offer,
    };
    if (challenge && this.spec.credentials) digest.signRequest(null, invite, challenge, this.spec.credentials);
    this.invite = invite;
    this.spec.endpoint.request(invite, (rs) => this.onInviteResponse(invite, rs));
  }

  private onInviteResponse(invite: SipMessage, rs: SipMessage): void {
    if (invite !== this.invite) return; // an answer to an INVITE sent again with credentials
    const status = rs.status ?? 0;
    if (status < 200) {
      if (this.abandoned) return this.cancel();
      if (!this.provisional) {
        this.provisional = true;
        clearTimeout(this.trunkTimer!);
        this.place({ placed: true });
        this.ringTimer = setTimeout(() => this.cancel(), this.spec.ringTimeoutMs);
      }
      return;
    }
    if (status < 300) return void this.onAnswered(rs);
    if ((status === 401 || status === 407) && this.spec.credentials && !this.authTried && !this.abandoned) {
      this.authTried = true;
      this.cseq++;
      return this.sendInvite(rs);
    }
    if (this.ended || this.abandoned) return;
    clearTimeout(this.trunkTimer!);
    const reason = rs.reason ?? '';
    if (status === 401 || status === 407) {
      return this.refuse({ placed: false, temporary: true, code: 'AUTH_REFUSED', reason: `the trunk refused the credentials (${status} ${reason})` });
    }
    // The cancel after the ring timeout comes back as 487: no answer.
    const meaning =
      this.ringTimer === null && this.provisional && status === 487 ? ({ kind: 'no-answer', status } as CallOutcome) : finalAnswer(status, reason);
    if ('temporary' in meaning) {
      if (!this.provisional)
        return this.refuse({ placed: false, temporary: true, code: 'TRUNK_UNAVAILABLE', reason: `the trunk answered ${status} ${reason}` });
      // Taken, then given up by the network: the call is placed again later, as for no answer.
      return this.finish({ kind: 'no-answer', status });
    }
    if (!this.provisional) return this.refuse({ placed: false, temporary: false, outcome: meaning });
    this.finish(meaning);
  }

  private refuse(p: Placement): void {
    this.place(p);
    this.finish(null);
  }

  /** Ring timeout (or a call given up): CANCEL, once a provisional answer allows it. */
  private cancel(): void {
    if (this.ringTimer) clearTimeout(this.ringTimer);
    this.ringTimer = null;
    if (this.answered || !this.invite || (this.ended && !this.abandoned)) return;
    const invite = this.invite;
    const cancel: SipMessage = {
      method: 'CANCEL',
      uri: invite.uri,
      headers: {
        to: invite.headers.to,
        from: invite.headers.from,
        'call-id': invite.headers['call-id'],
        cseq: { method: 'CANCEL', seq: invite.headers.cseq!.seq },
        via: invite.headers.via ? [structuredClone(invite.headers.via[0]!)] : [],
        'max-forwards': 70,
      },
    };
    this.spec.endpoint.request(cancel);
    if (!this.abandoned) {
      // A trunk that never confirms the cancel: the call still ends as unanswered.
      setTimeout(() => this.finish({ kind: 'no-answer', status: null }), 5_000).unref();
    }
  }

  private async onAnswered(rs: SipMessage): Promise<void> {
    const to = rs.headers.to!;
    const contact = rs.headers.contact?.[0]?.uri;
    const route = [...(rs.headers['record-route'] ?? [])].reverse();
    const first = this.dialog === null;
    this.dialog ??= { to, target: contact ? (typeof contact === 'string' ? contact : String(contact)) : this.spec.target, route };
    this.ack(rs); // every 200 (they are retransmitted until acknowledged)
    if (!first) return;
    if (this.ringTimer) clearTimeout(this.ringTimer);
    this.ringTimer = null;
    clearTimeout(this.trunkTimer!);
    if (this.ended || this.abandoned) return this.bye();
    this.answered = true;
    this.answeredAt = Date.now();
    if (!this.provisional) {
      this.provisional = true;
      this.place({ placed: true });
    }
    const media = readSdpAnswer(rs.content ?? '', this.spec.codecs);
    if (!media) {
      this.bye();
      return this.finish({ kind: 'rejected', status: 488, reason: 'the answer takes none of the offered codecs (PCMA, PCMU)' });
    }
    this.onAnswer();
    const started = Date.now();
    await this.rtp!.play(this.spec.encode(media.codec), media, PAYLOAD_TYPES[media.codec]);
    if (this.ended) return;
    this.bye();
    this.finish({ kind: 'answered', answeredMs: Date.now() - this.answeredAt, playedMs: Date.now() - started, hungUpBy: 'tern' });
  }

  private inDialog(method: 'ACK' | 'BYE', seq: number): SipMessage {
    const d = this.dialog!;
    return {
      method,
      uri: d.target,
      headers: {
        to: d.to,
        from: { uri: this.spec.from, params: { tag: this.fromTag } },
        'call-id': this.spec.callId,
        cseq: { method, seq },
        ...(d.route.length > 0 ? { route: d.route } : {}),
        'max-forwards': 70,
        via: [],
      },
    };
  }

  private ack(rs: SipMessage): void {
    this.spec.endpoint.request(this.inDialog('ACK', rs.headers.cseq?.seq ?? this.cseq));
  }

  private bye(): void {
    if (!this.dialog) return;
    const bye = this.inDialog('BYE', this.cseq + 1);
    this.spec.endpoint.request(bye);
  }

  /** The callee hung up: their BYE is answered and the call ends with what was heard. */
  onByeFromCallee(request: SipMessage): void {
    this.spec.endpoint.respond(request, 200, 'OK');
    if (this.ended) return;
    this.rtp?.stop();
    this.finish({ kind: 'answered', answeredMs: Date.now() - this.answeredAt, playedMs: Date.now() - this.answeredAt, hungUpBy: 'callee' });
  }

  /** Stops a call at once (the connector stops): hung up if answered, cancelled if ringing. */
  hangUp(): void {
    if (this.ended) return;
    if (this.answered) this.bye();
    else this.cancel();
    this.place({ placed: false, temporary: true, code: 'TRUNK_UNAVAILABLE', reason: 'the connector stopped' });
    this.finish({ kind: 'no-answer', status: null });
  }

  private finish(outcome: CallOutcome | null): void {
    if (this.ended) return;
    this.ended = true;
    if (this.ringTimer) clearTimeout(this.ringTimer);
    if (this.trunkTimer) clearTimeout(this.trunkTimer);
    this.rtp?.close();
    if (outcome) this.outcomeDone?.(outcome);
  }
}
