import { randomBytes, randomInt } from 'node:crypto';
import dgram from 'node:dgram';

/** 20 ms of 8 kHz audio: the packet size every G.711 trunk expects. */
export const PACKET_MS = 20;
export const SAMPLES_PER_PACKET = 160;

/** An RTP packet (RFC 3550): version 2, no padding, extension or CSRC; the marker set on the first of a talkspurt. */
export function rtpPacket(h: { payloadType: number; sequence: number; timestamp: number; ssrc: number; marker: boolean }, payload: Uint8Array): Buffer {
  const packet = Buffer.alloc(12 + payload.length);
  packet[0] = 0x80;
  packet[1] = (h.marker ? 0x80 : 0) | (h.payloadType & 0x7f);
  packet.writeUInt16BE(h.sequence & 0xffff, 2);
  packet.writeUInt32BE(h.timestamp >>> 0, 4);
  packet.writeUInt32BE(h.ssrc >>> 0, 8);
  packet.set(payload, 12);
  return packet;
}

/** Reads an RTP packet's header (for checks and tests). */
export function parseRtp(packet: Buffer): {
  version: number;
  marker: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Buffer;
} {
  if (packet.length < 12) throw new Error('an RTP packet is at least 12 bytes');
  return {
    version: packet[0]! >> 6,
    marker: (packet[1]! & 0x80) !== 0,
    payloadType: packet[1]! & 0x7f,
    sequence: packet.readUInt16BE(2),
    timestamp: packet.readUInt32BE(4),
    ssrc: packet.readUInt32BE(8),
    payload: packet.subarray(12 + (packet[0]! & 0x0f) * 4),
  };
}

/**
 * Sends one call's audio as RTP: 20 ms packets paced by a timer on the wall clock (a late tick sends what is due,
 * never a burst ahead of time), sequence numbers and timestamps starting at random values (RFC 3550) and one SSRC.
 * Packets that arrive are read and dropped: the remote side's audio is not used, but its address is learnt.
 */
export class RtpSender {
  private readonly socket: dgram.Socket;
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  private sequence = randomInt(0, 0x10000);
  private timestamp = randomBytes(4).readUInt32BE(0);
  private timer: NodeJS.Timeout | null = null;
  private finish: (() => void) | null = null;
  /** Packets sent so far. */
  sent = 0;

  private constructor(socket: dgram.Socket) {
    this.socket = socket;
    socket.on('message', () => {});
    socket.on('error', () => {});
  }

  /** Opens a socket on a free port of `address`. */
  static async open(address: string): Promise<RtpSender> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new RtpSender(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /**
   * Plays `audio` (already encoded, one byte a sample) to `to`; resolves when the last packet is sent, or early when
   * stopped. The first packet carries the marker bit.
   */
  play(audio: Buffer, to: { address: string; port: number }, payloadType: number): Promise<void> {
    const packets = Math.ceil(audio.length / SAMPLES_PER_PACKET);
    let next = 0;
    const started = performance.now();
    return new Promise<void>((resolve) => {
      this.finish = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.finish = null;
        resolve();
      };
      const tick = () => {
        const due = Math.min(packets, Math.floor((performance.now() - started) / PACKET_MS) + 1);
        while (next < due) {
          const chunk = audio.subarray(next * SAMPLES_PER_PACKET, (next + 1) * SAMPLES_PER_PACKET);
          const payload =
            chunk.length === SAMPLES_PER_PACKET ? chunk : Buffer.concat([chunk, Buffer.alloc(SAMPLES_PER_PACKET - chunk.length, chunk[chunk.length - 1] ?? 0)]);
          this.socket.send(
            rtpPacket({ payloadType, sequence: this.sequence, timestamp: this.timestamp, ssrc: this.ssrc, marker: next === 0 }, payload),
            to.port,
            to.address,
          );
          this.sequence = (this.sequence + 1) & 0xffff;
          this.timestamp = (this.timestamp + SAMPLES_PER_PACKET) >>> 0;
          this.sent++;
          next++;
        }
        if (next >= packets) return this.finish?.();
        this.timer = setTimeout(tick, Math.max(0, started + next * PACKET_MS - performance.now()));
      };
      tick();
    });
  }

  /** Stops playing (the other side hung up). */
  stop(): void {
    this.finish?.();
  }

  close(): void {
    this.stop();
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }
}
