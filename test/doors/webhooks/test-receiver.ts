import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 and an ephemeral port; `respond` may leave the response hanging. */
export async function startReceiver(respond: (request: ReceivedRequest, res: ServerResponse) => void): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      respond(request, res);
    });
  });
  const receiver: Receiver = {
    origin: '',
    port: 0,
    received,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => {
    receiver.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.origin = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/** A port on 127.0.0.1 that nothing listens on (it was just released). */
export async function closedPort(): Promise<number> {
  const receiver = await startReceiver(() => {});
  await receiver.close();
  return receiver.port;
}

/** Waits until `condition` holds, polling; fails after `limitMs` so a broken test ends instead of hanging. */
export async function waitUntil(condition: () => boolean, limitMs = 5_000): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
