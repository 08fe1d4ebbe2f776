// Test helpers for SMPP: a raw TCP client that speaks bytes and a client on the `smpp` package.
import { once } from 'node:events';
import net from 'node:net';
import smpp from 'smpp';
import { decodePdu, encodePdu, type Pdu } from '../../src/protocols/smpp/pdu.ts';
import { sleep } from './wait.ts';

const MB = 2 ** 20;

/**
 * Writes copies of `pdu`, about 1 MB at a time, until more than 1 MB stays queued in the socket because the peer
 * takes no more (kernel buffers full), or until `limit` bytes were written. Returns the bytes written.
 */
export async function floodUntilBlocked(socket: net.Socket, pdu: Buffer, limit = 100 * MB): Promise<number> {
  const chunk = Buffer.concat(Array.from({ length: Math.ceil(MB / pdu.length) }, () => pdu));
  let written = 0;
  while (written < limit) {
    socket.write(chunk);
    written += chunk.length;
    await sleep(2);
    if (socket.writableLength > 2 * MB) {
      await sleep(50);
      if (socket.writableLength > MB) break;
    }
  }
  return written;
}

/** A client that writes raw bytes and reads back decoded PDUs (with our own decoder). */
export class RawClient {
  private pending = Buffer.alloc(0);
  private readonly received: Pdu[] = [];
  private readonly waiters: Array<(p: Pdu) => void> = [];
  private seq = 0;
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  static async connect(port: number): Promise<RawClient> {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new RawClient(socket);
  }

  private onData(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 4 && this.pending.length >= this.pending.readUInt32BE(0)) {
      const len = this.pending.readUInt32BE(0);
      const frame = this.pending.subarray(0, len);
      this.pending = this.pending.subarray(len);
      const d = decodePdu(Buffer.from(frame));
      if (!d.ok) throw new Error(`server sent an undecodable PDU: ${d.reason}`);
      const w = this.waiters.shift();
      if (w) w(d.pdu);
      else this.received.push(d.pdu);
    }
  }

  next(timeoutMs = 5000): Promise<Pdu> {
    const ready = this.received.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no PDU from server')), timeoutMs);
      this.waiters.push((p) => {
        clearTimeout(timer);
        resolve(p);
      });
    });
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Sends a request and returns its sequence number. */
  send(command: string, fields: Record<string, unknown> = {}): number {
    const sequence = ++this.seq;
    this.write(encodePdu(command, sequence, 0, fields));
    return sequence;
  }

  async call(command: string, fields: Record<string, unknown> = {}): Promise<Pdu> {
    const sequence = this.send(command, fields);
    const pdu = await this.next();
    if (pdu.sequence !== sequence) {
      throw new Error(`expected a response to ${sequence}, got ${pdu.command} ${pdu.sequence}`);
    }
    return pdu;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A well-behaved ESME on the `smpp` package: answers enquire_link and unbind itself; from `localAddress` if given. */
export async function packageClient(port: number, options: { tls?: boolean; localAddress?: string } = {}): Promise<smpp.Session> {
  const session = smpp.connect({
    host: '127.0.0.1',
    port,
    tls: options.tls ?? false,
    rejectUnauthorized: false,
    // Linux takes any address of 127.0.0.0/8 as a source: clients from several addresses on one machine.
    ...(options.localAddress !== undefined && { localAddress: options.localAddress }),
  });
  session.on('error', () => {});
  session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
  session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response()));
  await once(session, options.tls ? 'secureConnect' : 'connect');
  return session;
}

export function call(session: smpp.Session, command: string, fields: Record<string, unknown> = {}): Promise<smpp.PDU> {
  return new Promise((resolve, reject) => {
    if (!session.send(new smpp.PDU(command, fields), resolve)) reject(new Error('client socket not writable'));
  });
}

export function nextPdu(session: smpp.Session, command: string): Promise<smpp.PDU> {
  return new Promise((resolve) => session.once(command, resolve));
}
