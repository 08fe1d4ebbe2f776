import type { Server as HttpServer, ServerOptions } from 'node:http';
import type { HttpLimits } from '../../domain/http-limits.ts';

/**
 * The options of a Node HTTP(S) server that bound its connections: idle between requests (keep-alive), sending a
 * request's head, sending a whole request (head and body, however slowly it trickles). Node looks for connections
 * past their head or request deadline every `connectionsCheckingInterval` (30 s unless told): here often enough to
 * keep to the deadlines within a second.
 */
export function connectionTimeouts(
  limits: HttpLimits,
): Pick<ServerOptions, 'keepAliveTimeout' | 'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'> {
  return {
    keepAliveTimeout: limits.keepAliveMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/**
 * At most `maxConnections` open at once (Node closes the ones past it as soon as they are accepted), and none on which
 * nothing moves — no byte read or written — for `idleTimeoutMs`: a client that stops reading a long answer (the OpenAPI
 * document) would otherwise hold its connection, and the answer, for ever. Between requests keep-alive applies first.
 */
export function capConnections(server: Pick<HttpServer, 'maxConnections' | 'setTimeout'>, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  // Without a callback, a socket that times out is destroyed.
  server.setTimeout(limits.idleTimeoutMs);
}
