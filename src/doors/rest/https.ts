import { createPrivateKey, X509Certificate } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { HttpLimits } from '../../domain/http-limits.ts';
import { capConnections, connectionTimeouts } from './connection-limits.ts';

/** A certificate (chain) and its private key, as PEM, checked to belong together. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
  subject: string;
  validTo: string;
  fingerprint: string;
}

export class CertificateError extends Error {
  constructor(
    /** Which of the two files the problem is about. */
    readonly file: 'cert' | 'key',
    message: string,
  ) {
    super(message);
    this.name = 'CertificateError';
  }
}

/** Checks that `cert` and `key` are PEM, parse, and that the key is the certificate's. */
export function checkCertificatePair(cert: Buffer, key: Buffer, files: { cert: string; key: string }): CertificatePair {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new CertificateError('cert', `${files.cert} is not a PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new CertificateError('key', `${files.key} is not a PEM private key: ${(err as Error).message}`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new CertificateError('key', `${files.key} is not the private key of the certificate in ${files.cert}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new CertificateError('cert', `${files.cert} and ${files.key} cannot serve TLS: ${(err as Error).message}`);
  }
  return { cert, key, subject: x509.subject.replace(/\n/g, ', '), validTo: x509.validTo, fingerprint: x509.fingerprint256 };
}

function readPem(file: string, which: 'cert' | 'key'): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new CertificateError(which, `cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Reads and checks the pair at start, so a bad file stops Tern with a message naming it. */
export function loadCertificatePair(certFile: string, keyFile: string): CertificatePair {
  return checkCertificatePair(readPem(certFile, 'cert'), readPem(keyFile, 'key'), { cert: certFile, key: keyFile });
}

export interface HttpsListenerOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** The same bounds on connections as plain HTTP's. */
  limits: HttpLimits;
  /** What answers requests: the HTTP application's router. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
  /** How often the files are read again even when no change was seen (a change seen is acted on at once). */
  pollMs?: number;
}

/** After a change is seen, how long to wait for the rest of it (a renewal writes the certificate, then the key). */
const SETTLE_MS = 250;
const DEFAULT_POLL_MS = 60_000;

/**
 * The HTTP application over TLS. The certificate and key are read again when their folders change (a renewal,
 * a symlink swapped by certbot or a mounted secret) and on a slow poll; a new pair that checks out serves the next
 * connections, one that does not (half written, mismatched) is logged and the previous pair stays.
 */
export class HttpsListener {
  private readonly server: Server;
  private readonly watchers: FSWatcher[] = [];
  private readonly sockets = new Set<Socket>();
  private poll: NodeJS.Timeout | null = null;
  private settle: NodeJS.Timeout | null = null;
  private reloading: Promise<boolean> = Promise.resolve(false);
  private closed = false;

  constructor(
    private readonly opts: HttpsListenerOptions,
    private current: CertificatePair,
  ) {
    this.server = createServer({ cert: current.cert, key: current.key, ...connectionTimeouts(opts.limits) }, opts.handler);
    capConnections(this.server, opts.limits);
    this.server.on('secureConnection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** The certificate being served. */
  get certificate(): CertificatePair {
    return this.current;
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    for (const dir of new Set([dirname(this.opts.certFile), dirname(this.opts.keyFile)])) {
      try {
        const w = watch(dir, () => this.changed());
        w.on('error', (err) => this.opts.logger.warn({ err, dir }, 'watching the HTTPS certificate folder failed; it is still read every minute'));
        this.watchers.push(w);
      } catch (err) {
        this.opts.logger.warn({ err, dir }, 'cannot watch the HTTPS certificate folder; it is read every minute');
      }
    }
    this.poll = setInterval(() => void this.reload(), this.opts.pollMs ?? DEFAULT_POLL_MS);
    this.poll.unref();
    return (this.server.address() as AddressInfo).port;
  }

  private changed(): void {
    if (this.closed) return;
    if (this.settle) clearTimeout(this.settle);
    this.settle = setTimeout(() => void this.reload(), SETTLE_MS);
    this.settle.unref();
  }

  /** Reads the files again; answers true when a new pair now serves. */
  reload(): Promise<boolean> {
    this.reloading = this.reloading
      .then(() => this.reloadNow())
      .catch((err: unknown) => {
        this.opts.logger.error({ err }, 'reloading the HTTPS certificate failed; the current certificate is kept');
        return false;
      });
    return this.reloading;
  }

  private async reloadNow(): Promise<boolean> {
    if (this.closed) return false;
    const { certFile, keyFile, logger } = this.opts;
    let cert: Buffer;
    let key: Buffer;
    try {
      [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
    } catch (err) {
      logger.warn({ err }, 'cannot read the HTTPS certificate files; the current certificate is kept');
      return false;
    }
    if (cert.equals(this.current.cert) && key.equals(this.current.key)) return false;
    let next: CertificatePair;
    try {
      next = checkCertificatePair(cert, key, { cert: certFile, key: keyFile });
    } catch (err) {
      logger.warn({ reason: (err as Error).message }, 'the new HTTPS certificate files are not usable yet; the current certificate is kept');
      return false;
    }
    this.server.setSecureContext({ cert: next.cert, key: next.key });
    this.current = next;
    logger.info({ subject: next.subject, validTo: next.validTo, fingerprint: next.fingerprint }, 'HTTPS certificate reloaded');
    return true;
  }

  /** Stops listening; requests in flight finish, idle connections are closed, and the rest after `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.watchers) w.close();
    if (this.poll) clearInterval(this.poll);
    if (this.settle) clearTimeout(this.settle);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const force = setTimeout(() => {
      for (const s of this.sockets) s.destroy();
    }, graceMs);
    force.unref();
    await closed;
    clearTimeout(force);
  }
}
