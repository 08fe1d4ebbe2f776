import { randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type { DeliverSmFields } from '../../../protocols/smpp/deliver-sm.ts';
import type { SmppHandler, SmppLogger, SmppMetricHook, SmppPrincipal } from '../handler.ts';
import { SmppStatus, type Pdu } from '../../../protocols/smpp/pdu.ts';
import { isBindCommand, SmppSession, type RequestResult, type SmppSessionOptions } from '../../../protocols/smpp/session.ts';
import { answerBind, receiverCount, sessionCount, sessionsOf, type SmppSessionInfo, unbind } from './binds.ts';
import { concatenation, type ConcatenationOptions } from './concatenation.ts';
import { type Conn, hex, serverContext } from './context.ts';
import { delivery } from './deliver.ts';
import { messageCommands } from './submit.ts';

export type { SmppSessionInfo } from './binds.ts';

/**
 * Tern's customer-facing SMPP 3.4 server: TCP (and optionally TLS) listeners, binds answered through the handler
 * with the principal's bind limit and submit rate enforced here, submits decoded (text, flags, times,
 * concatenation) into plain `SmppSubmit` objects, and `deliver` for receipts and MO toward bound receivers.
 *
 * Its parts share one context (context.ts): binds.ts answers binds and keeps the bound sessions, submit.ts the
 * requests about messages, concatenation.ts the parts of long messages, deliver.ts the deliver_sm toward receivers.
 */

type SessionTuning = Pick<
  SmppSessionOptions,
  'window' | 'queueLimit' | 'responseTimeoutMs' | 'enquireLinkIntervalMs' | 'enquireLinkTimeoutMs' | 'maxConcurrentRequests' | 'bindTimeoutMs'
>;

export interface SmppServerOptions<P extends SmppPrincipal> extends SessionTuning, ConcatenationOptions {
  host?: string;
  port: number;
  tls?: { port: number; key: string | Buffer; cert: string | Buffer; host?: string };
  handler: SmppHandler<P>;
  logger?: SmppLogger;
  /** system_id in our bind responses. */
  systemId?: string;
  onMetric?: SmppMetricHook;
  /** Clock for throttling and relative SMPP times. */
  now?: () => number;
}

export interface SmppServer {
  listen(): Promise<{ port: number; tlsPort?: number }>;
  /** Unbinds every session, stops listening and drops pending reassemblies. */
  close(): Promise<void>;
  /**
   * Sends deliver_sm(s) to one bound receiver or transceiver session of the principal (round-robin across them;
   * several PDUs, such as the parts of a long MO, all go through the same session, in order). Resolves true only
   * when every deliver_sm_resp came back with status 0; false when none is bound or anything failed.
   */
  deliver(principalKey: string, pdus: DeliverSmFields | DeliverSmFields[]): Promise<boolean>;
  /** Sessions bound (or binding) for a principal, or for all. */
  sessionCount(principalKey?: string): number;
  /** Sessions of a principal bound as receiver or transceiver: those deliver_sm can go to. */
  receiverCount(principalKey: string): number;
  /**
   * Looks at once for concatenated messages given up or made whole and never stored, among the parts the handler
   * keeps for every node (another node stopped: those it received are this node's to end or store).
   */
  sweepConcat(): void;
  /** The sessions bound on this node, of a principal or of all. */
  sessions(principalKey?: string): SmppSessionInfo[];
}

export function createSmppServer<P extends SmppPrincipal>(options: SmppServerOptions<P>): SmppServer {
  const ctx = serverContext(options);
  const { handler, log, conns } = ctx;
  const reassembly = concatenation(ctx, options);
  const commands = messageCommands(ctx, reassembly);
  const deliver = delivery(ctx);

  async function onRequest(conn: Conn<P>, pdu: Pdu): Promise<RequestResult> {
    if (isBindCommand(pdu.command)) return answerBind(ctx, conn, pdu);
    const p = conn.principal;
    if (!p) return { status: SmppStatus.ESME_RINVBNDSTS };
    const command = commands.get(pdu.command);
    if (!command) return undefined;
    const result = await command(p, pdu);
    if (result?.status) {
      ctx.metric('smpp_errors_total', { system_id: p.systemId, command: pdu.command, status: hex(result.status) });
    }
    return result;
  }

  function attach(socket: net.Socket, secure: boolean): void {
    if (ctx.closing) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const session = new SmppSession(socket, {
      role: 'server',
      ...(options.window !== undefined && { window: options.window }),
      ...(options.queueLimit !== undefined && { queueLimit: options.queueLimit }),
      ...(options.responseTimeoutMs !== undefined && { responseTimeoutMs: options.responseTimeoutMs }),
      ...(options.enquireLinkIntervalMs !== undefined && { enquireLinkIntervalMs: options.enquireLinkIntervalMs }),
      ...(options.enquireLinkTimeoutMs !== undefined && { enquireLinkTimeoutMs: options.enquireLinkTimeoutMs }),
      ...(options.maxConcurrentRequests !== undefined && { maxConcurrentRequests: options.maxConcurrentRequests }),
      ...(options.bindTimeoutMs !== undefined && { bindTimeoutMs: options.bindTimeoutMs }),
    });
    const conn: Conn<P> = { id: randomUUID(), session, secure };
    conns.add(conn);
    session.setHandler((pdu) => onRequest(conn, pdu));
    session.on('bound', () => {
      const { principal, mode } = conn;
      if (!principal || !mode || mode === 'transmitter') return;
      try {
        handler.onBound?.(principal, mode);
      } catch (err) {
        log.error({ err, systemId: principal.systemId }, 'smpp onBound handler failed');
      }
    });
    session.on('malformed', (info) => {
      log.debug({ ...info, remote: session.remoteAddress }, 'smpp malformed PDU answered with generic_nack');
      if (conn.principal) {
        const labels = { system_id: conn.principal.systemId, command: 'generic_nack', status: hex(info.status) };
        ctx.metric('smpp_errors_total', labels);
      }
    });
    session.on('handlerError', (err, pdu) => {
      log.error({ err, command: pdu.command, systemId: conn.principal?.systemId }, 'smpp request handler failed');
    });
    session.on('error', (err) => log.debug({ err, remote: session.remoteAddress }, 'smpp socket error'));
    session.on('close', (reason) => unbind(ctx, conn, reason));
  }

  const plain = net.createServer((socket) => attach(socket, false));
  const secure = options.tls ? tls.createServer({ key: options.tls.key, cert: options.tls.cert }, (socket) => attach(socket, true)) : undefined;

  function listenOn(server: net.Server, port: number, host: string | undefined): Promise<number> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  function closeServer(server: net.Server): Promise<void> {
    return new Promise((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    });
  }

  return {
    async listen() {
      const port = await listenOn(plain, options.port, options.host);
      reassembly.start();
      if (!secure || !options.tls) return { port };
      const tlsPort = await listenOn(secure, options.tls.port, options.tls.host ?? options.host);
      return { port, tlsPort };
    },

    async close() {
      ctx.closing = true;
      const stopping = [closeServer(plain), ...(secure ? [closeServer(secure)] : [])];
      await Promise.all([...conns].map((c) => c.session.close()));
      await reassembly.close();
      await Promise.all(stopping);
    },

    deliver,

    sweepConcat() {
      reassembly.sweep();
    },

    receiverCount: (principalKey) => receiverCount(ctx, principalKey),
    sessionCount: (principalKey) => sessionCount(ctx, principalKey),
    sessions: (principalKey) => sessionsOf(ctx, principalKey),
  };
}
