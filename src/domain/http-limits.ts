/** The HTTP doors' connection bounds, read from the settings (TERN_HTTP_*_SECONDS, TERN_HTTP_MAX_CONNECTIONS). */
export interface HttpLimits {
  keepAliveMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** A connection on which nothing is read or written for this long is closed (a client that stopped reading its answer). */
  idleTimeoutMs: number;
  maxConnections: number;
}
