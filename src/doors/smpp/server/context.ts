import type { SmppSession } from '../../../protocols/smpp/session.ts';
import type { BindMode, SmppHandler, SmppLogger, SmppMetric, SmppMetricHook, SmppPrincipal } from '../handler.ts';

/** One client connection, and what its bind made of it. */
export interface Conn<P> {
  /** Names the connection when its bind is counted for the cluster. */
  id: string;
  session: SmppSession;
  principal?: P;
  mode?: BindMode;
  boundAt?: number;
  secure?: boolean;
}

/**
 * What the parts of the SMPP server (binds, submits, deliveries, concatenation) share: the handler behind it, its
 * log, metrics and clock, and the connections.
 */
export interface ServerContext<P extends SmppPrincipal> {
  readonly handler: SmppHandler<P>;
  readonly log: SmppLogger;
  readonly now: () => number;
  /** system_id in our bind responses. */
  readonly systemId: string;
  /** Counts, or sets a gauge; a hook that fails is logged, never thrown at the caller. */
  metric(name: SmppMetric, labels: Record<string, string>, value?: number): void;
  /** Every connection, bound or not. */
  readonly conns: Set<Conn<P>>;
  /** Bound connections, by principal key. */
  readonly byPrincipal: Map<string, Set<Conn<P>>>;
  /** Set once the server closes: no connection is taken nor bind answered after. */
  closing: boolean;
}

const silentLogger: SmppLogger = { debug() {}, info() {}, warn() {}, error() {} };

export function serverContext<P extends SmppPrincipal>(options: {
  handler: SmppHandler<P>;
  logger?: SmppLogger;
  now?: () => number;
  systemId?: string;
  onMetric?: SmppMetricHook;
}): ServerContext<P> {
  const log = options.logger ?? silentLogger;
  return {
    handler: options.handler,
    log,
    now: options.now ?? Date.now,
    systemId: options.systemId ?? 'TERN',
    metric(name, labels, value = 1) {
      try {
        options.onMetric?.(name, labels, value);
      } catch (err) {
        log.warn({ err, metric: name }, 'smpp metric hook failed');
      }
    },
    conns: new Set(),
    byPrincipal: new Map(),
    closing: false,
  };
}

/** Closed, or the server stopping (read anew after each await). */
export function gone<P extends SmppPrincipal>(ctx: ServerContext<P>, conn: Conn<P>): boolean {
  return conn.session.state === 'CLOSED' || ctx.closing;
}

export const hex = (status: number): string => `0x${status.toString(16).padStart(8, '0')}`;
