import { randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { formatSmppTime } from '../../protocols/smpp/receipt.ts';
import { decodeGsm7, decodeSmppText } from '../../core/domain/text.ts';
import type { DeliverSmFields } from '../../protocols/smpp/deliver-sm.ts';
import type {
  BindMode,
  SmppHandler,
  SmppLogger,
  SmppMetric,
  SmppMetricHook,
  SmppPrincipal,
  SmppSubmitResult,
} from './handler.ts';
import { SmppStatus, str, type Pdu, type UnsuccessSme } from '../../protocols/smpp/pdu.ts';
import { isBindCommand, SmppSession, type RequestResult, type SmppSessionOptions } from '../../protocols/smpp/session.ts';
import { decodeSubmit, destinationOf, multiDestinations } from '../../protocols/smpp/submit.ts';
import { TokenBucket } from '../../protocols/smpp/token-bucket.ts';
import {
  memoryReassembly,
  sharedReassembly,
  type ExpiredMessage,
  type Reassembly,
  type ReassemblyOptions,
  type WholeMessage,
} from './reassembly.ts';

/**
 * Tern's customer-facing SMPP 3.4 server: TCP (and optionally TLS) listeners, binds answered through the handler
 * with the principal's bind limit and submit rate enforced here, submits decoded (text, flags, times,
 * concatenation) into plain `SmppSubmit` objects, and `deliver` for receipts and MO toward bound receivers.
 */

type SessionTuning = Pick<
  SmppSessionOptions,
  | 'window'
  | 'queueLimit'
  | 'responseTimeoutMs'
  | 'enquireLinkIntervalMs'
  | 'enquireLinkTimeoutMs'
  | 'maxConcurrentRequests'
  | 'bindTimeoutMs'
>;

export interface SmppServerOptions<P extends SmppPrincipal> extends SessionTuning {
  host?: string;
  port: number;
  tls?: { port: number; key: string | Buffer; cert: string | Buffer; host?: string };
  handler: SmppHandler<P>;
  logger?: SmppLogger;
  /** system_id in our bind responses. */
  systemId?: string;
  /** How long the parts of a concatenated message may take to arrive. */
  concatTimeoutMs?: number;
  /**
   * Concatenated messages being assembled at once, all credentials together: a bound on this server's memory, when
   * the handler keeps no parts itself (addConcatPart).
   */
  maxPendingConcat?: number;
  /** Octets of parts waiting for the rest of their message, all credentials together (in memory, as above). */
  maxConcatBytes?: number;
  /** Parts and octets one credential may have waiting; beyond, its parts get ESME_RMSGQFUL, nobody else's. */
  maxConcatPartsPerCredential?: number;
  maxConcatBytesPerCredential?: number;
  /** How often the sweep of concatenated messages kept by the handler looks on its own, when nothing says parts wait. */
  safetyPollMs?: number;
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

export interface SmppSessionInfo {
  principalKey: string;
  systemId: string;
  mode: BindMode;
  remoteAddress: string;
  secure: boolean;
  boundAt: number;
}

const BIND_MODE: Readonly<Record<string, BindMode>> = {
  bind_transmitter: 'transmitter',
  bind_receiver: 'receiver',
  bind_transceiver: 'transceiver',
};

interface Conn<P> {
  /** Names the connection when its bind is counted for the cluster. */
  id: string;
  session: SmppSession;
  principal?: P;
  mode?: BindMode;
  boundAt?: number;
  secure?: boolean;
}

const silentLogger: SmppLogger = { debug() {}, info() {}, warn() {}, error() {} };

const hex = (status: number): string => `0x${status.toString(16).padStart(8, '0')}`;

export function createSmppServer<P extends SmppPrincipal>(options: SmppServerOptions<P>): SmppServer {
  const { handler } = options;
  const log = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const ourSystemId = options.systemId ?? 'TERN';
  const metric = (name: SmppMetric, labels: Record<string, string>, value = 1) => {
    try {
      options.onMetric?.(name, labels, value);
    } catch (err) {
      log.warn({ err, metric: name }, 'smpp metric hook failed');
    }
  };

  const conns = new Set<Conn<P>>();
  const byPrincipal = new Map<string, Set<Conn<P>>>();
  const roundRobin = new Map<string, number>();
  const buckets = new Map<string, TokenBucket>();
  let closing = false;

  function concatExpired({ messageId, received, total, meta }: ExpiredMessage<P>): void {
    const { principal, fields, destination } = meta;
    log.info({ systemId: principal.systemId, messageId, received, total }, 'smpp concatenated message expired');
    metric('smpp_errors_total', { system_id: principal.systemId, command: 'submit_sm', reason: 'concat_expired' });
    try {
      handler.concatExpired?.(principal, { messageId, source: fields.source, destination, received, total });
    } catch (err) {
      log.error({ err, messageId }, 'smpp concatExpired handler failed');
    }
  }

  const reassemblyOptions: ReassemblyOptions = {
    now,
    ...(options.concatTimeoutMs !== undefined && { timeoutMs: options.concatTimeoutMs }),
    ...(options.maxPendingConcat !== undefined && { maxPending: options.maxPendingConcat }),
    ...(options.maxConcatBytes !== undefined && { maxBytes: options.maxConcatBytes }),
    ...(options.maxConcatPartsPerCredential !== undefined && { maxPartsPerOwner: options.maxConcatPartsPerCredential }),
    ...(options.maxConcatBytesPerCredential !== undefined && { maxBytesPerOwner: options.maxConcatBytesPerCredential }),
    ...(options.safetyPollMs !== undefined && { safetyPollMs: options.safetyPollMs }),
  };

  /** Submits a whole concatenated message with the id its parts were answered with. */
  async function submitWhole(p: P, whole: WholeMessage<P>): Promise<SmppSubmitResult> {
    const { meta } = whole;
    const r = await handler.submit(p, {
      ...meta.fields,
      destination: meta.destination,
      text: whole.text,
      parts: whole.total,
      messageId: whole.messageId,
    });
    if ('messageId' in r) metric('smpp_submits_total', { system_id: p.systemId });
    return r;
  }

  /** A whole message whose node never stored it: nobody waits for its answer, its parts were answered already. */
  async function submitStranded(whole: WholeMessage<P>): Promise<void> {
    const p = whole.meta.principal;
    try {
      const r = await submitWhole(p, whole);
      log.info({ systemId: p.systemId, messageId: whole.messageId, ...r }, 'smpp concatenated message taken over from the node that made it whole, and submitted');
    } catch (err) {
      log.error({ err, systemId: p.systemId, messageId: whole.messageId }, 'smpp concatenated message could not be stored; trying again later');
    }
  }

  const { addConcatPart, takeExpiredConcat, takeStrandedConcat, nextConcatSweep } = handler;
  const reassembly: Reassembly<P> =
    addConcatPart && takeExpiredConcat && takeStrandedConcat && nextConcatSweep
      ? sharedReassembly<P>(
          {
            addConcatPart: addConcatPart.bind(handler),
            takeExpiredConcat: takeExpiredConcat.bind(handler),
            takeStrandedConcat: takeStrandedConcat.bind(handler),
            nextConcatSweep: nextConcatSweep.bind(handler),
          },
          reassemblyOptions,
          concatExpired,
          submitStranded,
          (err) => log.error({ err }, 'smpp: expiring or recovering concatenated messages failed; trying again'),
        )
      : memoryReassembly<P>(reassemblyOptions, () => handler.allocateMessageId(), concatExpired);

  async function throttled(p: P, n: number): Promise<boolean> {
    if (!(p.tps > 0)) return false;
    let over: boolean;
    if (handler.overRate) {
      over = await handler.overRate(p, n);
    } else {
      let bucket = buckets.get(p.key);
      if (!bucket || bucket.rate !== p.tps) {
        bucket = new TokenBucket(p.tps, p.tps, now());
        buckets.set(p.key, bucket);
      }
      over = !bucket.tryTake(n, now());
    }
    if (over) metric('smpp_throttled_total', { system_id: p.systemId }, n);
    return over;
  }

  function sessionsGauge(p: P): void {
    metric('smpp_sessions', { system_id: p.systemId }, byPrincipal.get(p.key)?.size ?? 0);
  }

  /** Closed, or the server stopping (read anew after each await). */
  function gone(conn: Conn<P>): boolean {
    return conn.session.state === 'CLOSED' || closing;
  }

  async function onBind(conn: Conn<P>, pdu: Pdu): Promise<RequestResult> {
    const mode = BIND_MODE[pdu.command]!;
    const systemId = str(pdu, 'system_id');
    const result = await handler.bind({
      systemId,
      password: str(pdu, 'password'),
      systemType: str(pdu, 'system_type'),
      mode,
      remoteAddress: conn.session.remoteAddress,
    });
    if (!result.ok) {
      metric('smpp_bind_failures_total', { system_id: systemId, status: hex(result.status) });
      log.info({ systemId, mode, remote: conn.session.remoteAddress, status: hex(result.status) }, 'smpp bind refused');
      if (result.answerAfterMs) await new Promise((r) => setTimeout(r, result.answerAfterMs));
      // Closed once the answer is written: another guess needs another connection.
      if (result.close) setImmediate(() => void conn.session.close());
      return { status: result.status };
    }
    const p = result.principal;
    if (conn.session.state === 'CLOSED' || closing) return { status: SmppStatus.ESME_RBINDFAIL };
    const bound = byPrincipal.get(p.key) ?? new Set<Conn<P>>();
    if (bound.size >= p.maxBinds || (handler.claimBind && !(await handler.claimBind(p, conn.id)))) {
      metric('smpp_bind_failures_total', { system_id: p.systemId, status: hex(SmppStatus.ESME_RBINDFAIL) });
      log.info({ systemId, mode, maxBinds: p.maxBinds }, 'smpp bind refused: too many binds');
      return { status: SmppStatus.ESME_RBINDFAIL };
    }
    if (gone(conn)) {
      // Gone while its bind was being counted.
      handler.releaseBind?.(p, conn.id);
      return { status: SmppStatus.ESME_RBINDFAIL };
    }
    bound.add(conn);
    byPrincipal.set(p.key, bound);
    conn.principal = p;
    conn.mode = mode;
    if (p.window) conn.session.setWindow(p.window);
    conn.boundAt = now();
    metric('smpp_binds_total', { system_id: p.systemId, mode });
    sessionsGauge(p);
    log.info({ systemId, mode, remote: conn.session.remoteAddress }, 'smpp bound');
    return { fields: { system_id: ourSystemId } };
  }

  function submitResult(r: SmppSubmitResult, messageId?: string): RequestResult {
    if ('status' in r) return { status: r.status };
    return { fields: { message_id: messageId ?? r.messageId } };
  }

  async function onSubmitSm(p: P, pdu: Pdu): Promise<RequestResult> {
    if (await throttled(p, 1)) return { status: SmppStatus.ESME_RTHROTTLED };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) {
      log.debug({ systemId: p.systemId, reason: decoded.reason }, 'smpp submit_sm refused');
      return { status: decoded.status };
    }
    const { fields, payload, concat } = decoded.submit;
    const destination = destinationOf(pdu);
    if (!destination.addr) return { status: SmppStatus.ESME_RINVDSTADR };
    metric('smpp_submit_parts_total', { system_id: p.systemId });
    if (!concat) {
      const text = decodeSmppText(payload, fields.dataCoding);
      const r = await handler.submit(p, { ...fields, destination, text, parts: 1 });
      if ('messageId' in r) metric('smpp_submits_total', { system_id: p.systemId });
      return submitResult(r);
    }
    const added = await reassembly.add(p, concat, payload, { principal: p, fields, destination });
    switch (added.kind) {
      case 'full':
        log.warn({ systemId: p.systemId, ...added.load }, 'smpp reassembly table full');
        metric('smpp_errors_total', { system_id: p.systemId, command: 'submit_sm', reason: 'concat_full' });
        return { status: SmppStatus.ESME_RMSGQFUL };
      case 'over-budget':
        log.warn({ systemId: p.systemId, ...added.load }, 'smpp credential has as many parts waiting as it may');
        metric('smpp_errors_total', { system_id: p.systemId, command: 'submit_sm', reason: 'concat_budget' });
        return { status: SmppStatus.ESME_RMSGQFUL };
      case 'inconsistent':
        return { status: SmppStatus.ESME_RSUBMITFAIL };
      case 'refused':
        return { status: added.status };
      case 'partial':
      case 'duplicate':
        return { fields: { message_id: added.messageId } };
      case 'complete':
        return submitResult(await submitWhole(p, added), added.messageId);
    }
  }

  async function onSubmitMulti(p: P, pdu: Pdu): Promise<RequestResult> {
    const dests = multiDestinations(pdu);
    if (dests.length === 0) return { status: SmppStatus.ESME_RINVNUMDESTS };
    if (await throttled(p, dests.length)) return { status: SmppStatus.ESME_RTHROTTLED };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) return { status: decoded.status };
    const { fields, payload, concat } = decoded.submit;
    // One submit_multi_resp message_id cannot stand for a message reassembled per destination.
    if (concat) return { status: SmppStatus.ESME_RINVESMCLASS };
    const text = decodeSmppText(payload, fields.dataCoding);
    metric('smpp_submit_parts_total', { system_id: p.systemId }, dests.length);
    const outcomes = await Promise.all(
      dests.map(async (d): Promise<{ id?: string; failure?: UnsuccessSme }> => {
        if (d.dl_name !== undefined || !d.destination_addr) {
          const failure = {
            dest_addr_ton: 0,
            dest_addr_npi: 0,
            destination_addr: d.dl_name ?? '',
            error_status_code: d.dl_name !== undefined ? SmppStatus.ESME_RINVDLNAME : SmppStatus.ESME_RINVDSTADR,
          };
          return { failure };
        }
        const destination = { addr: d.destination_addr, ton: d.dest_addr_ton ?? 0, npi: d.dest_addr_npi ?? 0 };
        let status: number;
        try {
          const r = await handler.submit(p, { ...fields, destination, text, parts: 1 });
          if ('messageId' in r) {
            metric('smpp_submits_total', { system_id: p.systemId });
            return { id: r.messageId };
          }
          status = r.status;
        } catch (err) {
          log.error({ err, systemId: p.systemId }, 'smpp submit handler failed');
          status = SmppStatus.ESME_RSYSERR;
        }
        const failure = {
          dest_addr_ton: destination.ton,
          dest_addr_npi: destination.npi,
          destination_addr: destination.addr,
          error_status_code: status,
        };
        return { failure };
      }),
    );
    const firstId = outcomes.find((o) => o.id)?.id;
    const failures = outcomes.flatMap((o) => (o.failure ? [o.failure] : []));
    if (!firstId) return { status: failures[0]!.error_status_code };
    return { fields: { message_id: firstId, unsuccess_sme: failures } };
  }

  async function onQuery(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.query) return { status: SmppStatus.ESME_RQUERYFAIL };
    const source = { addr: str(pdu, 'source_addr'), ton: 0, npi: 0 };
    const r = await handler.query(p, { messageId: str(pdu, 'message_id'), source });
    if ('status' in r) return { status: r.status };
    return {
      fields: {
        message_id: r.messageId,
        final_date: r.finalDate ? formatSmppTime(r.finalDate) : '',
        message_state: r.state,
        error_code: r.errorCode,
      },
    };
  }

  async function onCancel(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.cancel) return { status: SmppStatus.ESME_RCANCELFAIL };
    const r = await handler.cancel(p, {
      messageId: str(pdu, 'message_id'),
      serviceType: str(pdu, 'service_type'),
      source: { addr: str(pdu, 'source_addr'), ton: 0, npi: 0 },
      destination: destinationOf(pdu),
    });
    return { status: r.status };
  }

  async function onReplace(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.replace) return { status: SmppStatus.ESME_RREPLACEFAIL };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) return { status: decoded.status };
    const { fields, payload } = decoded.submit;
    const r = await handler.replace(p, {
      messageId: str(pdu, 'message_id'),
      source: fields.source,
      shortMessage: payload,
      text: decodeGsm7(payload),
      scheduleAt: fields.scheduleAt,
      validUntil: fields.validUntil,
      registeredDelivery: fields.registeredDelivery,
    });
    return { status: r.status };
  }

  async function onRequest(conn: Conn<P>, pdu: Pdu): Promise<RequestResult> {
    if (isBindCommand(pdu.command)) return onBind(conn, pdu);
    const p = conn.principal;
    if (!p) return { status: SmppStatus.ESME_RINVBNDSTS };
    let result: RequestResult;
    switch (pdu.command) {
      case 'submit_sm':
        result = await onSubmitSm(p, pdu);
        break;
      case 'submit_multi':
        result = await onSubmitMulti(p, pdu);
        break;
      case 'query_sm':
        result = await onQuery(p, pdu);
        break;
      case 'cancel_sm':
        result = await onCancel(p, pdu);
        break;
      case 'replace_sm':
        result = await onReplace(p, pdu);
        break;
      default:
        return undefined;
    }
    if (result?.status) {
      metric('smpp_errors_total', { system_id: p.systemId, command: pdu.command, status: hex(result.status) });
    }
    return result;
  }

  function attach(socket: net.Socket, secure: boolean): void {
    if (closing) {
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
        metric('smpp_errors_total', labels);
      }
    });
    session.on('handlerError', (err, pdu) => {
      log.error({ err, command: pdu.command, systemId: conn.principal?.systemId }, 'smpp request handler failed');
    });
    session.on('error', (err) => log.debug({ err, remote: session.remoteAddress }, 'smpp socket error'));
    session.on('close', (reason) => {
      conns.delete(conn);
      const p = conn.principal;
      if (!p) return;
      const bound = byPrincipal.get(p.key);
      bound?.delete(conn);
      if (bound && bound.size === 0) byPrincipal.delete(p.key);
      handler.releaseBind?.(p, conn.id);
      sessionsGauge(p);
      log.info({ systemId: p.systemId, mode: conn.mode, reason, secure }, 'smpp session closed');
    });
  }

  const plain = net.createServer((socket) => attach(socket, false));
  const secure = options.tls
    ? tls.createServer({ key: options.tls.key, cert: options.tls.cert }, (socket) => attach(socket, true))
    : undefined;

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

  async function deliverTo(session: SmppSession, pdus: DeliverSmFields[]): Promise<boolean> {
    for (const fields of pdus) {
      try {
        const resp = await session.request('deliver_sm', fields as Record<string, unknown>);
        if (resp.status !== 0 || resp.command !== 'deliver_sm_resp') return false;
      } catch (err) {
        log.debug({ err }, 'smpp deliver_sm failed');
        return false;
      }
    }
    return true;
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
      closing = true;
      const stopping = [closeServer(plain), ...(secure ? [closeServer(secure)] : [])];
      await Promise.all([...conns].map((c) => c.session.close()));
      await reassembly.close();
      await Promise.all(stopping);
    },

    async deliver(principalKey, pdus) {
      const list = Array.isArray(pdus) ? pdus : [pdus];
      const receivers = [...(byPrincipal.get(principalKey) ?? [])].filter(
        (c) => c.session.state === 'BOUND_RX' || c.session.state === 'BOUND_TRX',
      );
      if (receivers.length === 0 || list.length === 0) return false;
      const turn = roundRobin.get(principalKey) ?? 0;
      roundRobin.set(principalKey, (turn + 1) % receivers.length);
      const conn = receivers[turn % receivers.length]!;
      const ok = await deliverTo(conn.session, list);
      const labels = { system_id: conn.principal!.systemId, outcome: ok ? 'ok' : 'failed' };
      metric('smpp_delivers_total', labels, list.length);
      return ok;
    },

    sweepConcat() {
      reassembly.sweep();
    },

    receiverCount(principalKey) {
      let n = 0;
      for (const c of byPrincipal.get(principalKey) ?? []) if (c.session.state === 'BOUND_RX' || c.session.state === 'BOUND_TRX') n++;
      return n;
    },

    sessionCount(principalKey) {
      if (principalKey !== undefined) return byPrincipal.get(principalKey)?.size ?? 0;
      let n = 0;
      for (const set of byPrincipal.values()) n += set.size;
      return n;
    },
    sessions(principalKey) {
      const sets = principalKey !== undefined ? [byPrincipal.get(principalKey) ?? new Set<Conn<P>>()] : [...byPrincipal.values()];
      return sets.flatMap((set) =>
        [...set].map((c) => ({
          principalKey: c.principal!.key,
          systemId: c.principal!.systemId,
          mode: c.mode!,
          remoteAddress: c.session.remoteAddress,
          secure: c.secure === true,
          boundAt: c.boundAt!,
        })),
      );
    },
  };
}
