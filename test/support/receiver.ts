import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: any;
  at: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides the answer per request: a status code, or 'hang' to never answer. */
  respond: (req: ReceivedRequest, index: number) => number | 'hang';
  /** Requests answered with 2xx. */
  delivered(): ReceivedRequest[];
  hanging: number;
  close(): Promise<void>;
}

/** A real webhook receiver on 127.0.0.1 (ephemeral port). */
export async function startReceiver(): Promise<Receiver> {
  const hung: ServerResponse[] = [];
  const answered: Array<{ req: ReceivedRequest; status: number }> = [];
  const receiver: Receiver = {
    url: '',
    requests: [],
    respond: () => 200,
    delivered: () => answered.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.req),
    get hanging() {
      return hung.length;
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
      const r: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      const index = receiver.requests.push(r) - 1;
      const answer = receiver.respond(r, index);
      if (answer === 'hang') {
        hung.push(res);
        return;
      }
      answered.push({ req: r, status: answer });
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
