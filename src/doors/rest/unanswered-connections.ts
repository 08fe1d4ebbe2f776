import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const SWEEP_MS = 100;
/** How long a connection may take, once the server is closing, to finish sending a request's head. */
const HEAD_GRACE_MS = 1_000;

/**
 * A closing Node HTTP server waits for every connection to end, and some never do on their own before its
 * `headersTimeout` (60 s): connections that never sent a byte (a load balancer's TCP probe, a client's spare pooled
 * connection), which `closeIdleConnections` does not count as idle (nodejs/node#63452, fixed after Node 20), and
 * keep-alive connections whose next request arrived as the server was closing and was never handed to it. Once
 * `closing()` is called, connections with no request being answered are destroyed: at once if they sent nothing,
 * after a second otherwise (a request head still arriving). A request being answered always finishes.
 */
export function unansweredConnectionReaper(server: Server): { closing(): void } {
  const sockets = new Set<Socket>();
  const answering = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      answering.delete(socket);
    });
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const n = (answering.get(socket) ?? 1) - 1;
      if (n <= 0) answering.delete(socket);
      else answering.set(socket, n);
    });
  });
  return {
    closing() {
      const since = Date.now();
      const sweep = () => {
        const late = Date.now() - since >= HEAD_GRACE_MS;
        for (const s of sockets) {
          if (answering.has(s)) continue;
          if (s.bytesRead === 0 || late) s.destroy();
        }
      };
      sweep();
      const timer = setInterval(sweep, SWEEP_MS);
      timer.unref();
      server.once('close', () => clearInterval(timer));
    },
  };
}
