import dgram from 'node:dgram';
import net from 'node:net';
import sip, { type Remote, type SipMessage, type SipStack as Stack } from 'sip';

/** Asks the system which local address it would use to reach `host:port` (no packet is sent). */
export async function localAddressFor(host: string, port: number): Promise<string> {
  const socket = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(port, host, () => resolve());
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/**
 * The SIP package takes a request for its own address to be one of its own flows: Tern's SIP address must differ
 * from the trunk's. A trunk on this machine's loopback is reached from another loopback address.
 */
export function addressBesides(trunk: string, local: string): string {
  if (local !== trunk) return local;
  if (trunk.startsWith('127.')) return trunk === '127.0.0.1' ? '127.0.0.2' : '127.0.0.1';
  throw new Error(`Tern's SIP address ${local} is the trunk's own: set localAddress to another address of this machine`);
}

/** A port of `address` free for the transport right now (the SIP package cannot bind port 0 itself). */
async function freePort(address: string, transport: 'UDP' | 'TCP', wanted: number): Promise<number> {
  if (transport === 'UDP') {
    const socket = dgram.createSocket('udp4');
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(wanted, address, () => resolve());
      });
      return socket.address().port;
    } finally {
      socket.close();
    }
  }
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(wanted, address, () => resolve());
    });
    return (server.address() as net.AddressInfo).port;
  } finally {
    await new Promise((r) => server.close(r));
  }
}

export interface SipEndpointOptions {
  transport: 'UDP' | 'TCP';
  /** Address to bind and to write in Via, Contact and SDP. */
  address: string;
  /** 0: any free port. */
  port: number;
  /** Requests from the other side (BYE, OPTIONS…) that no transaction of ours expects. */
  onRequest(request: SipMessage, remote: Remote): void;
  onError?(err: unknown): void;
}

/**
 * One SIP endpoint on the `sip` package's transaction and transport layers: it sends requests (retransmitted over
 * UDP, with their responses matched), sends responses, and hands over the other side's requests.
 */
export class SipEndpoint {
  private closed = false;

  private constructor(
    private readonly stack: Stack,
    readonly transport: 'UDP' | 'TCP',
    readonly address: string,
    readonly port: number,
  ) {}

  static async open(o: SipEndpointOptions): Promise<SipEndpoint> {
    const port = await freePort(o.address, o.transport, o.port);
    const stack = sip.create(
      {
        address: o.address,
        port,
        udp: o.transport === 'UDP',
        tcp: o.transport === 'TCP',
        logger: { error: (e) => o.onError?.(e) },
      },
      (request, remote) => o.onRequest(request, remote),
    );
    return new SipEndpoint(stack, o.transport, o.address, port);
  }

  /** Our Contact: where the other side sends in-dialog requests. */
  contact(user = 'tern'): string {
    return `sip:${user}@${this.address}:${this.port};transport=${this.transport.toLowerCase()}`;
  }

  /** Sends a request; `onResponse` is called with each response (provisional and final) its transaction gets. */
  request(message: SipMessage, onResponse: (response: SipMessage) => void = () => {}): void {
    if (!this.closed) this.stack.send(message, onResponse);
  }

  /** Answers a request the other side sent. */
  respond(request: SipMessage, status: number, reason?: string, extra: Partial<SipMessage> = {}): void {
    if (this.closed) return;
    const response = sip.makeResponse(request, status, reason);
    Object.assign(response.headers, extra.headers ?? {});
    if (extra.content !== undefined) response.content = extra.content;
    this.stack.send(response);
  }

  /**
   * Sends what was asked for last (a BYE, a CANCEL: the stack sends on the next tick), then stops every transaction
   * and closes the sockets; nothing is sent afterwards.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise((r) => setTimeout(r, 20));
    this.stack.destroy();
  }
}
