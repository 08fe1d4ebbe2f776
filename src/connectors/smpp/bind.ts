import { EventEmitter } from 'node:events';
import type { ConnectionOptions } from 'node:tls';
import { SmppStatus } from '../../protocols/smpp/pdu.ts';
import { statusName } from '../../protocols/smpp/command-status.ts';
import { type BindCommand, connectSmppSession, type RequestHandler, SmppSession } from '../../protocols/smpp/session.ts';

export interface BindLinkOptions {
  host: string;
  port: number;
  tls: false | ConnectionOptions;
  command: BindCommand;
  bindFields: Record<string, unknown>;
  window: number;
  responseTimeoutMs: number;
  enquireLinkIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  handler: RequestHandler;
  /** Waits between attempts are drawn from [d/2, d] of the backoff `d`; tests pass a fixed function. */
  random?: () => number;
}

export interface BindLinkEvents {
  /** Bound: submits may go through `session`. */
  up: [];
  /** Not bound any more (or a bind attempt failed): why. */
  down: [reason: string];
}

/** A bind refused for its credentials: the operator must change something, so it is said plainly. */
const CREDENTIAL_REFUSALS = new Set<number>([SmppStatus.ESME_RINVPASWD, SmppStatus.ESME_RINVSYSID, SmppStatus.ESME_RINVSYSTYP, SmppStatus.ESME_RBINDFAIL]);

/**
 * One bind to an operator's SMSC, kept up: connect, bind, and when the connection ends or a bind fails, connect
 * again after a backoff (doubling from `reconnectMinMs` to `reconnectMaxMs`, with jitter so binds of several nodes
 * do not come back in step). The session's enquire_link watchdog drops a silent connection.
 */
export class BindLink extends EventEmitter<BindLinkEvents> {
  private current: SmppSession | null = null;
  private bound = false;
  private stopped = false;
  private failures = 0;
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  lastError: string | null = null;

  constructor(private readonly o: BindLinkOptions) {
    super();
  }

  /** The bound session, or null. */
  get session(): SmppSession | null {
    return this.bound ? this.current : null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Unbinds (briefly waiting for answers in flight) and stops reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    const s = this.current;
    if (s) await s.close().catch(() => undefined);
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const reason = await this.connection();
      if (this.stopped) break;
      this.lastError = reason;
      this.emit('down', reason);
      await this.pause(this.backoff());
    }
  }

  /** One connection, from connect to close; resolves with why it ended. */
  private async connection(): Promise<string> {
    let session: SmppSession;
    try {
      session = await connectSmppSession({
        host: this.o.host,
        port: this.o.port,
        ...(this.o.tls && { tls: this.o.tls }),
        window: this.o.window,
        queueLimit: 100_000,
        responseTimeoutMs: this.o.responseTimeoutMs,
        enquireLinkIntervalMs: this.o.enquireLinkIntervalMs,
        connectTimeoutMs: this.o.responseTimeoutMs,
        maxConcurrentRequests: 256,
        handler: this.o.handler,
      });
    } catch (err) {
      this.failures++;
      return `cannot connect to ${this.o.host}:${this.o.port}: ${(err as Error).message}`;
    }
    this.current = session;
    const closed = new Promise<string>((resolve) => session.once('close', (why) => resolve(why)));
    session.on('error', () => undefined);
    if (this.stopped) {
      session.destroy('stopping');
      await closed;
      return 'stopped';
    }
    try {
      await session.bind(this.o.command, this.o.bindFields);
    } catch (err) {
      this.failures++;
      const status = (err as { status?: number }).status;
      session.destroy('bind refused');
      await closed;
      this.current = null;
      if (status === undefined) return `${this.o.command} failed: ${(err as Error).message}`;
      const why = CREDENTIAL_REFUSALS.has(status) ? ' (check systemId, password and systemType)' : '';
      return `${this.o.command} refused with ${statusName(status)}${why}`;
    }
    this.failures = 0;
    this.bound = true;
    this.lastError = null;
    this.emit('up');
    const why = await closed;
    this.bound = false;
    this.current = null;
    return `connection closed: ${why}`;
  }

  private backoff(): number {
    const d = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** Math.max(0, this.failures - 1));
    return d / 2 + (this.o.random ?? Math.random)() * (d / 2);
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    }).then(() => {
      this.wakeUp = null;
    });
  }
}
