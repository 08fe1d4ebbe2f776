// The HTTP application over TLS on TERN_HTTPS_PORT: real TLS requests, and certificates renewed on disk picked up
// without a restart.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createApp } from '../../../src/app/index.ts';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { selfSignedCertificate } from '../../support/certificate.ts';
import { eventually, sleep } from '../../support/wait.ts';

interface Pair {
  cert: string;
  key: string;
  fingerprint: string;
}

/** A self-signed certificate and its key, as PEM files in `dir`. */
function makePair(dir: string, name: string): Pair {
  const { cert, key } = selfSignedCertificate(dir, name, { cert: `${name}.crt`, key: `${name}.key` }, 2);
  return { cert, key, fingerprint: new X509Certificate(readFileSync(cert)).fingerprint256 };
}

/** Puts a file in place the way renewal tools do: written beside it, then renamed over it. */
function replace(target: string, source: string): void {
  copyFileSync(source, `${target}.new`);
  renameSync(`${target}.new`, target);
}

interface TlsAnswer {
  status: number;
  body: any;
  fingerprint: string;
}

/** One request on a new TLS connection (so each sees the certificate served now). */
function tls(port: number, method: string, path: string, opts: { key?: string; body?: unknown } = {}): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        rejectUnauthorized: false,
        headers: {
          ...(opts.key ? { 'x-api-key': opts.key } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text && (res.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : text, fingerprint });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

forEachDialect('HTTPS listener', (dialect) => {
  let dir: string;
  let server: TestServer;
  let port: number;
  let a: Pair;
  const live = { cert: '', key: '' };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tern-https-'));
    a = makePair(dir, 'tern-a');
    live.cert = join(dir, 'live', 'fullchain.pem');
    live.key = join(dir, 'live', 'privkey.pem');
    mkdirSync(join(dir, 'live'));
    copyFileSync(a.cert, live.cert);
    copyFileSync(a.key, live.key);
    server = await startTestServer(dialect, { TERN_HTTPS_PORT: '0', TERN_HTTPS_CERT: live.cert, TERN_HTTPS_KEY: live.key });
    assert.ok(server.httpsPort, 'the HTTPS port is answered by start()');
    port = server.httpsPort!;
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('serves the same application over TLS as over HTTP', async () => {
    const health = await tls(port, 'GET', '/healthz');
    assert.equal(health.status, 200);
    assert.equal(health.fingerprint, a.fingerprint);

    const t = await createTenant(server, { balance: 10 });
    const channels = await tls(port, 'GET', '/commons/v1/channels', { key: t.key });
    assert.equal(channels.status, 200, JSON.stringify(channels.body));
    assert.equal(channels.body.items[0].channelId, t.channelId);
    assert.match(channels.body.items[0].href, new RegExp(`^https://127\\.0\\.0\\.1:${port}/`), 'links name the scheme the client used');

    const sent = await tls(port, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33611223344' }, body: { text: 'over TLS' } } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const read = await request(server, 'GET', `/sms/v1/messages/${sent.body.messageId}`, { key: t.key });
    assert.equal(read.status, 200, 'what came over TLS is the same data plain HTTP reads');

    assert.equal((await tls(port, 'GET', '/commons/v1/channels')).status, 401);
    const legacy = await tls(port, 'GET', `/http/1.6/credit.do?accessToken=${t.key}`);
    assert.equal(legacy.status, 200);
    const balance = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
    assert.equal(legacy.body, String(balance.body.balance.amount), 'the legacy interface answers over TLS too');
  });

  test('a renewed certificate is served without a restart; a half-written or mismatched one is not', async () => {
    const b = makePair(dir, 'tern-b');
    // The certificate lands first: with the old key it is no usable pair, and the old one keeps serving.
    replace(live.cert, b.cert);
    await sleep(800);
    assert.equal((await tls(port, 'GET', '/healthz')).fingerprint, a.fingerprint, 'a certificate without its key is not served');
    replace(live.key, b.key);
    await eventually(async () => (await tls(port, 'GET', '/healthz')).fingerprint === b.fingerprint, 5_000, 'the renewed certificate');

    // A file that is not PEM at all changes nothing either.
    writeFileSync(live.cert, 'not a certificate');
    await sleep(800);
    const still = await tls(port, 'GET', '/healthz');
    assert.equal(still.status, 200);
    assert.equal(still.fingerprint, b.fingerprint);

    const c = makePair(dir, 'tern-c');
    replace(live.key, c.key);
    replace(live.cert, c.cert);
    await eventually(async () => (await tls(port, 'GET', '/healthz')).fingerprint === c.fingerprint, 5_000, 'the third certificate');
    assert.equal((await request(server, 'GET', '/healthz')).status, 200, 'plain HTTP is untouched');
  });
});

describe('HTTPS settings', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tern-https-settings-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const base = () => ({ TERN_DATABASE_URL: `sqlite:${join(dir, 'never-opened.db')}`, TERN_LOG_LEVEL: 'silent' as const });

  test('a port needs both files, and files need a port', () => {
    assert.throws(
      () => loadConfig({ ...base(), TERN_HTTPS_PORT: '8443', TERN_HTTPS_CERT: '/x.pem' }),
      (err: unknown) => err instanceof ConfigError && err.setting === 'TERN_HTTPS_PORT',
    );
    assert.throws(
      () => loadConfig({ ...base(), TERN_HTTPS_CERT: '/x.pem', TERN_HTTPS_KEY: '/y.pem' }),
      (err: unknown) => err instanceof ConfigError && err.setting === 'TERN_HTTPS_CERT',
    );
    assert.throws(() => loadConfig({ ...base(), TERN_HTTPS_PORT: '70000', TERN_HTTPS_CERT: '/x', TERN_HTTPS_KEY: '/y' }), /TERN_HTTPS_PORT/);
  });

  test('an unreadable, unparsable or mismatched file stops the start, naming its setting', async () => {
    const a = makePair(dir, 'a');
    const b = makePair(dir, 'b');
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n');
    const start = (cert: string, key: string) =>
      createApp(loadConfig({ ...base(), TERN_HTTPS_PORT: '0', TERN_HTTPS_CERT: cert, TERN_HTTPS_KEY: key }), { logger: pino({ level: 'silent' }) });
    const refused = (setting: string, detail: RegExp) => (err: unknown) => err instanceof ConfigError && err.setting === setting && detail.test(err.message);
    await assert.rejects(start(join(dir, 'missing.pem'), a.key), refused('TERN_HTTPS_CERT', /cannot read .*missing\.pem/));
    await assert.rejects(start(garbage, a.key), refused('TERN_HTTPS_CERT', /is not a PEM certificate/));
    await assert.rejects(start(a.cert, a.cert), refused('TERN_HTTPS_KEY', /is not a PEM private key/));
    await assert.rejects(start(a.cert, b.key), refused('TERN_HTTPS_KEY', /is not the private key of the certificate/));
  });
});
