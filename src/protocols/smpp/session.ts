import { EventEmitter } from 'node:events';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { commandId, decodePdu, encodePdu, genericNack, isResponseId, MAX_PDU_LENGTH, PDU_HEADER_LENGTH, SmppStatus, type Pdu } from './pdu.ts';

/**
 * One SMPP 3.4 connection, either side: Tern's server toward customers (`role: 'server'`) or Tern's client toward
 * an operator (`role: 'client'`). The `smpp` package gives only a codec; this owns everything above it: framing,
 * bind state, an outbound window with response timeouts, an enquire_link watchdog and bounded inbound concurrency
 * with socket backpressure.
 *
 * Framing is ours rather than the package Session's `_extractPDUs`: after a decode error that loop emits 'error'
 * and returns with its `_busy` flag still set, so it never reads again, and the sequence number of the bad PDU is
 * lost, so no generic_nack could be addressed.
 */

export type BindState = 'OPEN' | 'BOUND_TX' | 'BOUND_RX' | 'BOUND_TRX' | 'UNBOUND' | 'CLOSED';
export type SessionRole = 'server' | 'client';
export type BindCommand = 'bind_transmitter' | 'bind_receiver' | 'bind_transceiver';

export const BIND_STATE: Readonly<Record<BindCommand, BindState>> = {
  bind_transmitter: 'BOUND_TX',
  bind_receiver: 'BOUND_RX',
  bind_transceiver: 'BOUND_TRX',
};

export function isBindCommand(command: string): command is BindCommand {
  return command in BIND_STATE;
}

const ESME_TX = ['submit_sm', 'submit_multi', 'data_sm', 'query_sm', 'cancel_sm', 'replace_sm'];
const COMMON = ['enquire_link', 'unbind'];
const SMSC_RX = ['deliver_sm', 'data_sm', 'alert_notification'];

/** Requests an ESME may send to an SMSC in each state (SMPP 3.4 §2.3); enquire_link is also taken when OPEN. */
const ESME_TO_SMSC: Readonly<Record<BindState, ReadonlySet<string>>> = {
  OPEN: new Set(['bind_transmitter', 'bind_receiver', 'bind_transceiver', 'enquire_link']),
  BOUND_TX: new Set([...ESME_TX, ...COMMON]),
  BOUND_RX: new Set(COMMON),
  BOUND_TRX: new Set([...ESME_TX, ...COMMON]),
  UNBOUND: new Set(),
  CLOSED: new Set(),
};

/** Requests an SMSC may send to an ESME in each state. */
const SMSC_TO_ESME: Readonly<Record<BindState, ReadonlySet<string>>> = {
  OPEN: new Set(['outbind', 'enquire_link']),
  BOUND_TX: new Set(COMMON),
  BOUND_RX: new Set([...SMSC_RX, ...COMMON]),
  BOUND_TRX: new Set([...SMSC_RX, ...COMMON]),
  UNBOUND: new Set(),
  CLOSED: new Set(),
};

export class SmppSessionError extends Error {
  override readonly name: string = 'SmppSessionError';
  constructor(
    readonly code: 'CLOSED' | 'TIMEOUT' | 'WINDOW_FULL' | 'STATE' | 'ENCODE' | 'MALFORMED_RESPONSE',
    message: string,
    /**
     * The request had gone out: the peer may have acted on it (a timeout, a connection lost with the request in the
     * window). False when it never left (queued, refused by the state, not encodable).
     */
    readonly sent = false,
  ) {
    super(message);
  }
}

/** What an inbound request handler answers: the response's status and body fields. `undefined`: not supported. */
export type RequestResult = { status?: number; fields?: Record<string, unknown> } | undefined;
export type RequestHandler = (pdu: Pdu, session: SmppSession) => RequestResult | Promise<RequestResult>;

export interface SmppSessionOptions {
  role: SessionRole;
  /** Outbound requests in flight at once. */
  window?: number;
  /** Outbound requests waiting for a window slot; past this `request` rejects with WINDOW_FULL. */
  queueLimit?: number;
  /** How long an outbound request waits for its response once sent. */
  responseTimeoutMs?: number;
  /** Silence after which we send enquire_link (0: never). */
  enquireLinkIntervalMs?: number;
  /** How long that enquire_link may stay unanswered before the session is closed. */
  enquireLinkTimeoutMs?: number;
  /** Inbound requests handled at once; at this many, reading pauses until one completes. */
  maxConcurrentRequests?: number;
  /** Server role: close a connection not bound after this long (0: never). */
  bindTimeoutMs?: number;
  /** How long an unbind we send waits for its unbind_resp before the socket is closed anyway. */
  unbindTimeoutMs?: number;
  handler?: RequestHandler;
}

interface Job {
  command: string;
  fields: Record<string, unknown>;
  timeoutMs: number;
  inWindow: boolean;
  resolve(pdu: Pdu): void;
  reject(err: Error): void;
}

interface Pending {
  job: Job;
  timer: NodeJS.Timeout;
}

export interface SmppSessionEvents {
  /** The session entered a bound state (after the bind response went out, or came in). */
  bound: [state: BindState];
  state: [state: BindState, previous: BindState];
  /** A framed PDU that could not be decoded; it was answered with generic_nack. */
  malformed: [info: { status: number; commandId: number; sequence: number; reason: string }];
  /** A request handler threw; the request was answered with ESME_RSYSERR. */
  handlerError: [error: unknown, pdu: Pdu];
  /** Socket errors; the session closes after one. */
  error: [error: Error];
  close: [reason: string];
}

const DEFAULTS = {
  window: 10,
  queueLimit: 1000,
  responseTimeoutMs: 10_000,
  enquireLinkIntervalMs: 30_000,
  enquireLinkTimeoutMs: 10_000,
  maxConcurrentRequests: 32,
  bindTimeoutMs: 60_000,
  unbindTimeoutMs: 2_000,
};

export class SmppSession extends EventEmitter<SmppSessionEvents> {
  readonly role: SessionRole;
  readonly socket: Socket;
  readonly remoteAddress: string;
  private readonly opts: Required<Omit<SmppSessionOptions, 'handler' | 'role'>>;
  private handler: RequestHandler | undefined;
  private _state: BindState = 'OPEN';
  private closeReason = '';

  private sequence = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly queue: Job[] = [];
  private inWindow = 0;

  private frameLength: number | null = null;
  private reading = false;
  private pausedForHandlers = false;
  private pausedForWrite = false;
  /** Frames written in this turn of the event loop go out together, in one system call, at its end. */
  private corked = false;
  private running = 0;
  private bindInProgress = false;
  private closing = false;
  private framingLost = false;
  private readonly runningHandlers = new Set<Promise<void>>();

  private idleTimer: NodeJS.Timeout | undefined;
  private bindTimer: NodeJS.Timeout | undefined;
  private enquireInFlight = false;

  constructor(socket: Socket, options: SmppSessionOptions) {
    super();
    this.socket = socket;
    this.role = options.role;
    this.handler = options.handler;
    this.opts = {
      window: options.window ?? DEFAULTS.window,
      queueLimit: options.queueLimit ?? DEFAULTS.queueLimit,
      responseTimeoutMs: options.responseTimeoutMs ?? DEFAULTS.responseTimeoutMs,
      enquireLinkIntervalMs: options.enquireLinkIntervalMs ?? DEFAULTS.enquireLinkIntervalMs,
      enquireLinkTimeoutMs: options.enquireLinkTimeoutMs ?? DEFAULTS.enquireLinkTimeoutMs,
      maxConcurrentRequests: options.maxConcurrentRequests ?? DEFAULTS.maxConcurrentRequests,
      bindTimeoutMs: options.bindTimeoutMs ?? DEFAULTS.bindTimeoutMs,
      unbindTimeoutMs: options.unbindTimeoutMs ?? DEFAULTS.unbindTimeoutMs,
    };
    if (this.opts.window < 1 || this.opts.maxConcurrentRequests < 1) {
      throw new RangeError('window and maxConcurrentRequests must be at least 1');
    }
    this.remoteAddress = socket.remoteAddress ?? '';
    socket.on('readable', () => this.readLoop());
    socket.on('error', (err) => {
      this.closeReason ||= `socket error: ${err.message}`;
      if (this.listenerCount('error') > 0) this.emit('error', err);
    });
    socket.on('close', () => this.onSocketClose());
    if (this.opts.enquireLinkIntervalMs > 0) {
      this.idleTimer = setTimeout(() => this.onIdle(), this.opts.enquireLinkIntervalMs).unref();
    }
    if (this.role === 'server' && this.opts.bindTimeoutMs > 0) {
      this.bindTimer = setTimeout(() => {
        if (this._state === 'OPEN') this.destroy('bind timeout');
      }, this.opts.bindTimeoutMs).unref();
    }
  }

  get state(): BindState {
    return this._state;
  }

  get isBound(): boolean {
    return this._state === 'BOUND_TX' || this._state === 'BOUND_RX' || this._state === 'BOUND_TRX';
  }

  /** Outbound requests sent and not yet answered, and those waiting for a window slot. */
  get outbound(): { inFlight: number; queued: number } {
    return { inFlight: this.inWindow, queued: this.queue.length };
  }

  /** Inbound requests being handled, and whether reading is paused. */
  get inbound(): { running: number; paused: boolean } {
    return { running: this.running, paused: this.pausedForHandlers || this.pausedForWrite };
  }

  setHandler(handler: RequestHandler): void {
    this.handler = handler;
  }

  /**
   * Changes how many outbound requests may wait for their response at once (a server learns its peer's at the
   * bind). A wider window sends what was queued at once; a narrower one lets those in flight finish.
   */
  setWindow(window: number): void {
    if (!Number.isInteger(window) || window < 1) throw new RangeError('window must be at least 1');
    this.opts.window = window;
    this.pump();
  }

  /** Outbound requests that may wait for their response at once. */
  get window(): number {
    return this.opts.window;
  }

  /**
   * Sends a request through the window and resolves with its response (whatever its command_status; a
   * generic_nack answering it also resolves). Rejects on response timeout, a full queue, a state that does not
   * allow the command, or the session closing.
   */
  request(command: string, fields: Record<string, unknown> = {}, options: { timeoutMs?: number } = {}): Promise<Pdu> {
    return new Promise<Pdu>((resolve, reject) => {
      if (this._state === 'CLOSED' || this.socket.destroyed) {
        reject(new SmppSessionError('CLOSED', 'session is closed'));
        return;
      }
      if (!this.maySend(command)) {
        reject(new SmppSessionError('STATE', `${command} is not allowed in state ${this._state}`));
        return;
      }
      const job: Job = {
        command,
        fields,
        timeoutMs: options.timeoutMs ?? this.opts.responseTimeoutMs,
        inWindow: true,
        resolve,
        reject,
      };
      if (this.inWindow < this.opts.window && this.queue.length === 0) this.dispatch(job);
      else if (this.queue.length < this.opts.queueLimit) this.queue.push(job);
      else reject(new SmppSessionError('WINDOW_FULL', `window full and ${this.queue.length} requests queued`));
    });
  }

  /** Client role: binds and resolves with the response; a non-zero command_status rejects. */
  async bind(command: BindCommand, fields: Record<string, unknown>): Promise<Pdu> {
    const resp = await this.request(command, fields);
    if (resp.status !== 0) {
      throw Object.assign(new Error(`${command} refused with status 0x${resp.status.toString(16)}`), {
        status: resp.status,
      });
    }
    return resp;
  }

  /** Sends unbind when bound, waits (briefly) for its response, then closes the socket. */
  async close(): Promise<void> {
    if (this._state === 'CLOSED') return;
    // From here on inbound requests are dropped and reading goes on regardless of busy handlers, so the
    // unbind_resp (and the end of the stream) can be seen behind whatever the peer had already sent.
    this.closing = true;
    this.pausedForHandlers = false;
    this.resumeReading();
    if (this.isBound) {
      try {
        await this.request('unbind', {}, { timeoutMs: this.opts.unbindTimeoutMs });
      } catch {
        // The peer may be gone already; closing anyway.
      }
    }
    await this.end('closed');
  }

  /** Closes at once, failing whatever is in flight. */
  destroy(reason = 'destroyed'): void {
    this.closeReason ||= reason;
    this.socket.destroy();
  }

  // ---- reading ------------------------------------------------------------------------------------------------

  private readLoop(): void {
    if (this.reading) return;
    this.reading = true;
    try {
      if (this.framingLost) {
        // Nothing more can be framed: drain to the end of the stream so the close completes.
        while (this.socket.read() !== null);
        return;
      }
      while (!this.pausedForHandlers && !this.pausedForWrite && !this.socket.destroyed) {
        if (this.frameLength === null) {
          const head = this.socket.read(4) as Buffer | null;
          if (!head) break;
          if (head.length < 4) break; // end of stream in the middle of a header
          const length = head.readUInt32BE(0);
          if (length < PDU_HEADER_LENGTH || length > MAX_PDU_LENGTH) {
            // Without a believable length nothing after this can be framed: nack and drop the connection.
            this.write(genericNack(0, SmppStatus.ESME_RINVCMDLEN));
            this.framingLost = true;
            void this.end(`unframeable command_length ${length}`);
            while (this.socket.read() !== null);
            return;
          }
          this.frameLength = length;
        }
        const body = this.socket.read(this.frameLength - 4) as Buffer | null;
        if (!body) break;
        if (body.length < this.frameLength - 4) break; // end of stream inside a PDU
        const frame = Buffer.allocUnsafe(this.frameLength);
        frame.writeUInt32BE(this.frameLength, 0);
        body.copy(frame, 4);
        this.frameLength = null;
        try {
          this.onFrame(frame);
        } catch (err) {
          // A bug of ours (or a listener's) must cost this connection, not the process.
          if (this.listenerCount('error') > 0) this.emit('error', err as Error);
          this.destroy(`internal error: ${(err as Error).message}`);
          return;
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private onFrame(frame: Buffer): void {
    this.idleTimer?.refresh();
    const decoded = decodePdu(frame);
    if (!decoded.ok) {
      const { status, commandId, sequence, reason } = decoded;
      if (isResponseId(commandId) && this.pending.has(sequence)) {
        this.settle(sequence, new SmppSessionError('MALFORMED_RESPONSE', reason, true));
        return;
      }
      this.write(genericNack(sequence, status));
      this.emit('malformed', { status, commandId, sequence, reason });
      return;
    }
    const pdu = decoded.pdu;
    if (isResponseId(pdu.commandId)) this.onResponse(pdu);
    else this.onRequest(pdu);
  }

  private onResponse(pdu: Pdu): void {
    const entry = this.pending.get(pdu.sequence);
    if (!entry) return; // late (after its timeout) or never ours: nothing waits for it
    if (pdu.status === 0 && isBindCommand(entry.job.command)) this.setState(BIND_STATE[entry.job.command]);
    if (entry.job.command === 'unbind' && pdu.status === 0) this.setState('UNBOUND');
    this.settle(pdu.sequence, undefined, pdu);
    if (pdu.status === 0 && isBindCommand(entry.job.command)) this.emit('bound', this._state);
  }

  private onRequest(pdu: Pdu): void {
    const { command } = pdu;
    if (this.closing) return;
    if (command === 'enquire_link' && this._state !== 'UNBOUND') {
      this.respond(pdu, 0);
      return;
    }
    if (command === 'unbind' && this.isBound) {
      this.onUnbindRequest(pdu);
      return;
    }
    if (isBindCommand(command) && this.role === 'server') {
      if (this.isBound || this.bindInProgress) {
        this.respond(pdu, SmppStatus.ESME_RALYBND);
        return;
      }
    }
    if (!this.mayReceive(command) || (this.bindInProgress && this.role === 'server')) {
      this.respond(pdu, SmppStatus.ESME_RINVBNDSTS);
      return;
    }
    this.runHandler(pdu);
  }

  private runHandler(pdu: Pdu): void {
    const isBind = isBindCommand(pdu.command) && this.role === 'server';
    if (isBind) this.bindInProgress = true;
    this.running++;
    if (this.running >= this.opts.maxConcurrentRequests && !this.closing) this.pausedForHandlers = true;
    const handler = this.handler;
    const run = Promise.resolve()
      .then(() => (handler ? handler(pdu, this) : undefined))
      .then(
        (result) => {
          if (result === undefined) {
            this.write(genericNack(pdu.sequence, SmppStatus.ESME_RINVCMDID));
            return;
          }
          const status = result.status ?? 0;
          if (isBind && status === 0 && this._state === 'OPEN') {
            this.setState(BIND_STATE[pdu.command as BindCommand]);
            this.respond(pdu, 0, result.fields);
            this.emit('bound', this._state);
            return;
          }
          this.respond(pdu, status, result.fields);
        },
        (err: unknown) => {
          this.respond(pdu, SmppStatus.ESME_RSYSERR);
          this.emit('handlerError', err, pdu);
        },
      )
      .catch((err: unknown) => {
        this.emit('handlerError', err, pdu);
      })
      .finally(() => {
        this.runningHandlers.delete(run);
        this.running--;
        if (isBind) this.bindInProgress = false;
        if (this.pausedForHandlers && (this.running < this.opts.maxConcurrentRequests || this.closing)) {
          this.pausedForHandlers = false;
          this.resumeReading();
        }
      });
    this.runningHandlers.add(run);
  }

  private onUnbindRequest(pdu: Pdu): void {
    this.setState('UNBOUND');
    // Answer the requests already being handled (for a while) before saying goodbye; new ones now get
    // ESME_RINVBNDSTS.
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.opts.responseTimeoutMs);
    });
    void Promise.race([Promise.allSettled([...this.runningHandlers]), patience]).then(() => {
      clearTimeout(timer);
      this.respond(pdu, 0);
      void this.end('unbound by peer');
    });
  }

  private resumeReading(): void {
    // Deferred so a handler completing inside the read loop does not re-enter it.
    setImmediate(() => this.readLoop());
  }

  // ---- writing ------------------------------------------------------------------------------------------------

  private respond(pdu: Pdu, status: number, fields?: Record<string, unknown>): void {
    const respCommand = `${pdu.command}_resp`;
    if (commandId(respCommand) === undefined) {
      // outbind and alert_notification have no response PDU.
      if (status !== 0) this.write(genericNack(pdu.sequence, status));
      return;
    }
    let frame: Buffer;
    try {
      frame = encodePdu(respCommand, pdu.sequence, status, status === 0 ? fields : undefined);
    } catch {
      frame = encodePdu(respCommand, pdu.sequence, SmppStatus.ESME_RSYSERR);
    }
    this.write(frame);
  }

  private write(frame: Buffer): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    // A batch committed answers its submits all at once, receipts go out by the hundred: one writev for them all
    // instead of a write each (a tenth of the thread under load).
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    const ok = this.socket.write(frame);
    if (!ok && !this.pausedForWrite) {
      // The peer is not reading what we send: stop reading what it sends until our output drains.
      this.pausedForWrite = true;
      this.socket.once('drain', () => {
        this.pausedForWrite = false;
        this.resumeReading();
      });
    }
    return true;
  }

  private nextSequence(): number {
    this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1;
    return this.sequence;
  }

  private dispatch(job: Job): void {
    const sequence = this.nextSequence();
    let frame: Buffer;
    try {
      frame = encodePdu(job.command, sequence, 0, job.fields);
    } catch (err) {
      job.reject(new SmppSessionError('ENCODE', `cannot encode ${job.command}: ${(err as Error).message}`));
      this.pump();
      return;
    }
    if (job.inWindow) this.inWindow++;
    const timer = setTimeout(() => this.onTimeout(sequence), job.timeoutMs);
    this.pending.set(sequence, { job, timer });
    if (!this.write(frame)) this.settle(sequence, new SmppSessionError('CLOSED', 'session is closed'));
  }

  private onTimeout(sequence: number): void {
    const entry = this.pending.get(sequence);
    if (!entry) return;
    if (entry.job.command === 'enquire_link' && !entry.job.inWindow && this.pausedForHandlers) {
      // Its answer is probably waiting in our own paused input: give it another period rather than kill a busy link.
      entry.timer = setTimeout(() => this.onTimeout(sequence), entry.job.timeoutMs);
      return;
    }
    this.settle(sequence, new SmppSessionError('TIMEOUT', `no response to ${entry.job.command} within ${entry.job.timeoutMs} ms`, true));
  }

  private settle(sequence: number, err?: Error, pdu?: Pdu): void {
    const entry = this.pending.get(sequence);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(sequence);
    if (entry.job.inWindow) this.inWindow--;
    if (err) entry.job.reject(err);
    else entry.job.resolve(pdu!);
    this.pump();
  }

  private pump(): void {
    while (this.inWindow < this.opts.window && this.queue.length > 0) {
      const job = this.queue.shift()!;
      if (this._state === 'CLOSED') {
        job.reject(new SmppSessionError('CLOSED', 'session closed'));
        continue;
      }
      if (!this.maySend(job.command)) {
        job.reject(new SmppSessionError('STATE', `${job.command} is not allowed in state ${this._state}`));
        continue;
      }
      this.dispatch(job);
    }
  }

  // ---- watchdog and lifecycle ---------------------------------------------------------------------------------

  private onIdle(): void {
    const again = () => this.idleTimer?.refresh();
    if (this._state === 'CLOSED') return;
    if (this.pausedForHandlers || this.pausedForWrite || this.enquireInFlight || !this.maySend('enquire_link')) {
      again();
      return;
    }
    this.enquireInFlight = true;
    new Promise<Pdu>((resolve, reject) => {
      this.dispatch({
        command: 'enquire_link',
        fields: {},
        timeoutMs: this.opts.enquireLinkTimeoutMs,
        inWindow: false,
        resolve,
        reject,
      });
    }).then(
      () => {
        this.enquireInFlight = false;
        again();
      },
      (err: Error) => {
        this.enquireInFlight = false;
        if (err instanceof SmppSessionError && err.code === 'TIMEOUT') this.destroy('enquire_link unanswered');
      },
    );
  }

  private end(reason: string): Promise<void> {
    this.closeReason ||= reason;
    if (this._state === 'CLOSED' || this.socket.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // A peer that never closes its side must not keep the socket half-open forever.
      const timer = setTimeout(() => this.socket.destroy(), this.opts.unbindTimeoutMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.end();
    });
  }

  private onSocketClose(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.bindTimer);
    this.setState('CLOSED');
    const unsent = new SmppSessionError('CLOSED', 'session closed before the request was sent');
    for (const job of this.queue.splice(0)) job.reject(unsent);
    const lost = new SmppSessionError('CLOSED', 'session closed with the request unanswered', true);
    for (const sequence of [...this.pending.keys()]) this.settle(sequence, lost);
    this.emit('close', this.closeReason || 'closed by peer');
  }

  private setState(next: BindState): void {
    const previous = this._state;
    if (previous === next || previous === 'CLOSED') return;
    this._state = next;
    if (next !== 'OPEN') clearTimeout(this.bindTimer);
    this.emit('state', next, previous);
  }

  private mayReceive(command: string): boolean {
    const table = this.role === 'server' ? ESME_TO_SMSC : SMSC_TO_ESME;
    return table[this._state].has(command);
  }

  private maySend(command: string): boolean {
    const table = this.role === 'server' ? SMSC_TO_ESME : ESME_TO_SMSC;
    return table[this._state].has(command);
  }
}

export interface SmppConnectOptions extends Omit<SmppSessionOptions, 'role'> {
  host: string;
  port: number;
  /** TLS toward the peer; `true` for defaults, or tls.connect options (ca, servername, rejectUnauthorized, …). */
  tls?: boolean | tls.ConnectionOptions;
  connectTimeoutMs?: number;
}

/** Opens a client-role session (Tern toward an operator SMSC); bind it with `session.bind(...)`. */
export function connectSmppSession(options: SmppConnectOptions): Promise<SmppSession> {
  const { host, port, tls: tlsOptions, connectTimeoutMs = 10_000, ...sessionOptions } = options;
  return new Promise((resolve, reject) => {
    const socket = tlsOptions ? tls.connect({ host, port, ...(typeof tlsOptions === 'object' ? tlsOptions : {}) }) : net.connect({ host, port });
    const timer = setTimeout(() => socket.destroy(new Error(`connect to ${host}:${port} timed out`)), connectTimeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    socket.once('error', fail);
    socket.once(tlsOptions ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(new SmppSession(socket, { role: 'client', ...sessionOptions }));
    });
  });
}
