import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertNoNulls } from './no-nulls.ts';

export interface ReceivedRequest {
  /** Position in `requests`, from 0. */
  index: number;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The body parsed as JSON, null when it is empty or not JSON. */
  json: any;
  at: number;
}

/**
 * How the receiver answers a request: a status code (answered with the text `ok`), 'hang' to never answer, or
 * nothing when `respond` wrote the response itself through `res` (or keeps it unanswered).
 */
export type Respond = (request: ReceivedRequest, res: ServerResponse) => number | 'hang' | void;

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The same as `origin`. */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer; may be replaced at any time. */
  respond: Respond;
  /** Requests answered with 2xx. */
  delivered(): ReceivedRequest[];
  /** Requests left hanging with 'hang'. */
  hanging: number;
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** A real webhook receiver on 127.0.0.1 and an ephemeral port; it answers 200 unless told otherwise. */
export async function startReceiver(respond: Respond = () => 200): Promise<Receiver> {
  const hung: ServerResponse[] = [];
  const answered: Array<{ request: ReceivedRequest; status: number }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = body ? JSON.parse(body) : null;
      } catch {
        json = null;
      }
      // Every webhook body received: a null in one fails the test that caused it (thrown out of the handler).
      if (json !== null) assertNoNulls(json, `webhook body POSTed to ${req.url}`);
      const request: ReceivedRequest = {
        index: receiver.requests.length,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json,
        at: Date.now(),
      };
      receiver.requests.push(request);
      const answer = receiver.respond(request, res);
      if (answer === 'hang') {
        hung.push(res);
      } else if (typeof answer === 'number') {
        answered.push({ request, status: answer });
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      } else {
        res.on('finish', () => answered.push({ request, status: res.statusCode }));
      }
    });
  });
  const receiver: Receiver = {
    origin: '',
    url: '',
    port: 0,
    requests: [],
    respond,
    delivered: () => answered.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.request),
    get hanging() {
      return hung.length;
    },
    connections: 0,
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', () => {
    receiver.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.origin = receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/** A port on 127.0.0.1 that nothing listens on (it was just released). */
export async function closedPort(): Promise<number> {
  const receiver = await startReceiver();
  await receiver.close();
  return receiver.port;
}
