// Bounds on HTTP connections (idle keep-alive, a request's head, a whole request, how many at once) and the OpenAPI
// document served from a cached buffer. Connection handling is the HTTP server's, the same on either database: SQLite.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { acceptsGzip } from '../../../src/doors/rest/openapi-document.ts';
import { createTenant, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually, sleep } from '../../support/wait.ts';

interface Probe {
  socket: Socket;
  /** What the server sent. */
  received: () => string;
  /** Resolves with the milliseconds from the connection's start to its close. */
  closed: Promise<number>;
}

/** A raw TCP connection to `port` that reads whatever the server sends, and says when the server closed it. */
function probe(port: number, onConnect: (s: Socket) => void = () => {}): Probe {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => {});
  socket.on('connect', () => onConnect(socket));
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return { socket, received: () => text, closed };
}

/** Writes `chunk` every `everyMs` until the socket closes. */
function trickle(socket: Socket, chunk: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(chunk);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

function portOf(server: TestServer): number {
  return Number(new URL(server.url).port);
}

test('the settings: defaults, and a head timeout longer than the whole request is refused', () => {
  const config = loadConfig({});
  assert.deepEqual(config.httpLimits, {
    keepAliveMs: 72_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    maxConnections: 10_000,
  });
  assert.deepEqual(config.webhookSockets, { total: 256, perOrganisation: 64 });
  const set = loadConfig({
    TERN_HTTP_KEEP_ALIVE_SECONDS: '3',
    TERN_HTTP_HEADERS_TIMEOUT_SECONDS: '4',
    TERN_HTTP_REQUEST_TIMEOUT_SECONDS: '9',
    TERN_HTTP_MAX_CONNECTIONS: '50',
  });
  assert.deepEqual(set.httpLimits, { keepAliveMs: 3_000, headersTimeoutMs: 4_000, requestTimeoutMs: 9_000, idleTimeoutMs: 60_000, maxConnections: 50 });
  assert.throws(
    () => loadConfig({ TERN_WEBHOOK_SOCKETS: '10', TERN_WEBHOOK_SOCKETS_PER_ORGANISATION: '11' }),
    (e: unknown) => e instanceof ConfigError && e.setting === 'TERN_WEBHOOK_SOCKETS_PER_ORGANISATION',
  );
  assert.throws(
    () => loadConfig({ TERN_HTTP_HEADERS_TIMEOUT_SECONDS: '30', TERN_HTTP_REQUEST_TIMEOUT_SECONDS: '10' }),
    (e: unknown) => e instanceof ConfigError && e.setting === 'TERN_HTTP_HEADERS_TIMEOUT_SECONDS',
  );
  for (const [name, value] of [
    ['TERN_HTTP_MAX_CONNECTIONS', '0'],
    ['TERN_HTTP_KEEP_ALIVE_SECONDS', 'soon'],
    ['TERN_HTTP_REQUEST_TIMEOUT_SECONDS', '-1'],
    ['TERN_WEBHOOK_SOCKETS', '0'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (e: unknown) => e instanceof ConfigError && e.setting === name,
      name,
    );
  }
});

describe('bounded HTTP connections', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite', {
      TERN_HTTP_KEEP_ALIVE_SECONDS: '1',
      TERN_HTTP_HEADERS_TIMEOUT_SECONDS: '1',
      TERN_HTTP_REQUEST_TIMEOUT_SECONDS: '2',
      TERN_HTTP_IDLE_TIMEOUT_SECONDS: '1',
    });
  });
  after(async () => server.stop());

  test('a connection that sends nothing, or its head a byte at a time, is closed after the head timeout', async () => {
    const silent = probe(portOf(server));
    const slowHead = probe(portOf(server), (s) => {
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      trickle(s, 'X', 200);
    });
    const [a, b] = await Promise.all([silent.closed, slowHead.closed]);
    // Node looks for late connections at most every second: closed between the timeout and a second and a half past it.
    for (const ms of [a, b]) assert.ok(ms >= 900 && ms < 3_000, `closed after ${ms} ms`);
    assert.match(slowHead.received(), /^HTTP\/1\.1 408 /);
  });

  test('a body at a byte every half second is cut at the request timeout; a prompt one is answered', async () => {
    const t = await createTenant(server);
    const body = JSON.stringify({ recipient: { to: '33612345678' }, body: { text: 'slow' } });
    const slow = probe(portOf(server), (s) => {
      s.write(`POST /sms/v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      let i = 0;
      const timer = setInterval(() => {
        if (s.destroyed || i >= body.length) return clearInterval(timer);
        s.write(body[i++]!);
      }, 500);
      s.once('close', () => clearInterval(timer));
    });
    const ms = await slow.closed;
    assert.ok(ms >= 1_900 && ms < 4_000, `closed after ${ms} ms`);
    assert.match(slow.received(), /^HTTP\/1\.1 408 /);
    const sent = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal(sent.status, 200);
    assert.equal(sent.body.items.length, 0, 'the cut request sent nothing');
    const prompt = await request(server, 'POST', '/sms/v1/messages', { key: t.key, rawBody: body, headers: { 'content-type': 'application/json' } });
    assert.equal(prompt.status, 201);
  });

  test('a client that asks for the OpenAPI document and never reads it does not keep its connection', async () => {
    const open = () => new Promise<number>((resolve, reject) => server.app.http.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await eventually(async () => (await open()) === 0, 10_000, 'no connection left from the tests before');
    const stalled = connect(portOf(server), '127.0.0.1');
    stalled.on('error', () => {});
    stalled.on('connect', () => {
      stalled.write('GET /openapi.json HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n');
      stalled.pause();
    });
    await eventually(async () => (await open()) === 1, 5_000, 'the connection');
    const started = Date.now();
    // Whatever the socket buffers took, nothing moves past them: closed by the server after a second idle (or of keep-alive).
    await eventually(async () => (await open()) === 0, 5_000, 'the server to close it');
    assert.ok(Date.now() - started < 5_000);
    stalled.destroy();
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout, not before', async () => {
    const idle = probe(portOf(server), (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    await eventually(() => idle.received().startsWith('HTTP/1.1 200 '), 5_000, 'the answer');
    await sleep(500);
    assert.equal(idle.socket.destroyed, false, 'still open half a second after its answer');
    const ms = await idle.closed;
    // 1 s of keep-alive, plus the second Node allows on top of it for a request on its way.
    assert.ok(ms >= 900 && ms < 4_000, `closed after ${ms} ms`);
  });
});

describe('the cap on HTTP connections', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite', { TERN_HTTP_MAX_CONNECTIONS: '20' });
  });
  after(async () => server.stop());

  test('connections past the cap are closed as they come; once some end, new ones are served', async () => {
    const held = Array.from({ length: 20 }, () => probe(portOf(server)));
    await eventually(() => held.every((p) => p.socket.readyState === 'open'), 5_000, 'the connections up to the cap');
    await sleep(100);
    assert.ok(
      held.every((p) => !p.socket.destroyed),
      'the connections up to the cap are kept',
    );
    const over = probe(portOf(server), (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    const ms = await over.closed;
    assert.ok(ms < 900, `closed at once (after ${ms} ms)`);
    assert.equal(over.received(), '', 'not answered');
    for (const p of held) p.socket.destroy();
    await Promise.all(held.map((p) => p.closed));
    await eventually(async () => (await request(server, 'GET', '/healthz')).status === 200, 5_000, 'a connection served again');
  });
});

describe('/openapi.json', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(async () => server.stop());

  test('rendered once: the same bytes, an entity tag, 304 for it, gzip when asked for', async () => {
    const first = await fetch(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-encoding'), null);
    assert.match(first.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(first.headers.get('cache-control') ?? '', /max-age=\d+/);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]+"$/);
    const text = await first.text();
    const doc = JSON.parse(text);
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc, JSON.parse(JSON.stringify(server.app.http.swagger())), 'the document Fastify describes');
    assert.ok(doc.paths['/sms/v1/messages'], 'with the routes');

    const again = await fetch(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(await again.text(), text, 'the same bytes');

    for (const tag of [etag!, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await fetch(`${server.url}/openapi.json`, { headers: { 'if-none-match': tag } });
      assert.equal(cached.status, 304, tag);
      assert.equal(await cached.text(), '');
    }
    const stale = await fetch(`${server.url}/openapi.json`, { headers: { 'if-none-match': '"not-it"', 'accept-encoding': 'identity' } });
    assert.equal(stale.status, 200);

    // Raw, so the compressed bytes are seen as they travel.
    const gz = await rawGet(portOf(server), '/openapi.json', { 'accept-encoding': 'gzip, deflate' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers.vary, 'accept-encoding');
    assert.ok(gz.body.length < text.length / 4, `${gz.body.length} bytes gzipped of ${text.length}`);
    assert.equal(gunzipSync(gz.body).toString(), text);
  });

  test('Accept-Encoding is read as written: q=0 refuses gzip, * takes it', () => {
    assert.equal(acceptsGzip(undefined), false);
    assert.equal(acceptsGzip(''), false);
    assert.equal(acceptsGzip('gzip'), true);
    assert.equal(acceptsGzip('br, GZIP;q=0.5'), true);
    assert.equal(acceptsGzip('gzip;q=0'), false);
    assert.equal(acceptsGzip('deflate, br'), false);
    assert.equal(acceptsGzip('*'), true);
    assert.equal(acceptsGzip('identity'), false);
  });
});

/** GET over a raw HTTP/1.1 exchange (no decoding): the status, headers and body bytes as sent. */
async function rawGet(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
