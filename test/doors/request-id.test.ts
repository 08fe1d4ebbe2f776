// X-Request-Id: every HTTP answer carries one — the request's own when it is sane, a new UUID otherwise — on the REST
// API and the legacy door alike, whatever the status; and every log line of the request carries it.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { forEachDialect, request, startTestServer, createTenant, type TestServer, type Tenant } from '../support/server.ts';
import { LogCapture } from '../support/logs.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A request written byte for byte (fetch refuses some of the headers tried here): the status and the headers. */
function rawRequest(port: number, head: Buffer): Promise<{ status: number; headers: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(head));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [statusLine, ...lines] = text.split('\r\n\r\n')[0]!.split('\r\n');
      const headers = new Map<string, string>();
      for (const l of lines) headers.set(l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim());
      resolve({ status: Number(statusLine!.split(' ')[1]), headers });
    });
  });
}

forEachDialect('X-Request-Id', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;
  const logs = new LogCapture('debug');
  before(async () => {
    server = await startTestServer(dialect, {}, { logger: logs.logger });
    tenant = await createTenant(server, { balance: 1_000_000 });
  });
  after(async () => {
    await server?.stop();
  });

  test('a sane id is answered back as it came', async () => {
    for (const id of ['abc', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'trace:1/2@node-a+x=y_z.', 'x'.repeat(128)]) {
      const res = await request(server, 'GET', '/healthz', { headers: { 'x-request-id': id } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-request-id'), id);
    }
  });

  test('an id that is absent, empty, too long or has other characters is replaced by a new UUID, a new one each time', async () => {
    const seen = new Set<string>();
    for (const headers of [
      {},
      { 'x-request-id': '' },
      { 'x-request-id': 'x'.repeat(129) },
      { 'x-request-id': 'two words' },
      { 'x-request-id': '<script>' },
      { 'x-request-id': 'a"b' },
      { 'x-request-id': 'é' },
    ]) {
      const res = await fetch(`${server.url}/healthz`, { headers });
      assert.equal(res.status, 200);
      const id = res.headers.get('x-request-id')!;
      assert.match(id, UUID, JSON.stringify(headers));
      assert.ok(!seen.has(id), 'a new id for each request');
      seen.add(id);
    }
    const port = Number(new URL(server.url).port);
    // A tab (a control character HTTP lets through), a byte beyond ASCII, and the header twice.
    for (const header of [
      Buffer.from('X-Request-Id: abc\tdef\r\n'),
      Buffer.concat([Buffer.from('X-Request-Id: abc'), Buffer.from([0xe9]), Buffer.from('\r\n')]),
      Buffer.from('X-Request-Id: one\r\nX-Request-Id: two\r\n'),
    ]) {
      const head = Buffer.concat([Buffer.from('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'), header, Buffer.from('\r\n')]);
      const res = await rawRequest(port, head);
      assert.equal(res.status, 200, header.toString('latin1'));
      assert.match(res.headers.get('x-request-id') ?? '', UUID, header.toString('latin1'));
    }
  });

  test('on 2xx, 4xx, 404 and 5xx answers of the REST API, their error bodies unchanged', async () => {
    const send = { recipient: { to: '33612345678' }, body: { text: 'hello' } };
    const cases: Array<[string, string, { key?: string; body?: unknown }, number]> = [
      ['POST', '/sms/v1/messages', { key: tenant.key, body: send }, 201],
      ['GET', '/commons/v1/channels', { key: tenant.key }, 200],
      ['GET', '/commons/v1/channels', { key: 'tern_not-a-key' }, 401],
      ['GET', '/commons/v1/channels', {}, 401],
      ['POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: {} } }, 400],
      ['GET', '/admin/v1/organisations', { key: tenant.key }, 403],
      ['GET', '/no/such/route', {}, 404],
      ['GET', `/sms/v1/messages/${'0'.repeat(8)}-0000-7000-8000-000000000000`, { key: tenant.key }, 404],
    ];
    for (const [method, path, opts, status] of cases) {
      const id = `case-${method}-${status}-${Math.random().toString(36).slice(2)}`;
      const res = await request(server, method, path, { ...opts, headers: { 'x-request-id': id } });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      assert.equal(res.headers.get('x-request-id'), id, `${method} ${path} → ${status}`);
      if (status >= 400) assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'errorCode', 'message'], 'the error body keeps its shape');
    }

    // 5xx: voice sends while text-to-speech is unavailable.
    const voiceTenant = await createTenant(server, { type: 'VOICE', balance: 1_000_000 });
    const voice = server.app.services.voice;
    await voice.checkAvailability(async () => ({ ok: false, reason: 'espeak-ng not found' }));
    try {
      const res = await request(server, 'POST', '/voice/v1/messages', {
        key: voiceTenant.key,
        body: { recipient: { to: '33612345678' }, body: { text: 'Bonjour.' } },
        headers: { 'x-request-id': 'voice-503' },
      });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('x-request-id'), 'voice-503');
      assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'errorCode', 'message']);

      const legacy = await request(server, 'GET', `/http/1.6/sendVoiceMessage.do?accessToken=${voiceTenant.key}&message=Bonjour&numero=0612345678`, {
        headers: { 'x-request-id': 'legacy-503' },
      });
      assert.equal(legacy.status, 503);
      assert.match(legacy.text, /^31 \| /);
      assert.equal(legacy.headers.get('x-request-id'), 'legacy-503');
    } finally {
      await voice.checkAvailability();
    }
  });

  test("on the legacy door's text answers, accepted or refused", async () => {
    const ok = await request(server, 'GET', `/http/1.6/sendSMS.do?accessToken=${tenant.key}&message=hello&numero=0612345678`, {
      headers: { 'x-request-id': 'legacy-ok' },
    });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /^0 \| /);
    assert.equal(ok.headers.get('x-request-id'), 'legacy-ok');
    const refused = await request(server, 'GET', '/http/1.6/sendSMS.do?accessToken=tern_wrong&message=hello&numero=0612345678');
    assert.match(refused.text, /^32 \| /);
    assert.match(refused.headers.get('x-request-id') ?? '', UUID);
    const form = await request(server, 'POST', '/http/1.6/credit.do', {
      rawBody: `accessToken=${tenant.key}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'legacy-form' },
    });
    assert.equal(form.status, 200, form.text);
    assert.equal(form.headers.get('x-request-id'), 'legacy-form');
  });

  test('every log line of a request carries its id, at debug one line a request', async () => {
    logs.lines.length = 0;
    const res = await request(server, 'GET', '/commons/v1/channels', { key: tenant.key, headers: { 'x-request-id': 'logged-1' } });
    assert.equal(res.status, 200);
    const voiceTenant = await createTenant(server, { type: 'VOICE', balance: 1_000_000 });
    const voice = server.app.services.voice;
    await voice.checkAvailability(async () => ({ ok: false, reason: 'espeak-ng not found' }));
    try {
      const failed = await request(server, 'POST', '/voice/v1/messages', {
        key: voiceTenant.key,
        body: { recipient: { to: '33612345678' }, body: { text: 'x' } },
        headers: { 'x-request-id': 'logged-2' },
      });
      assert.equal(failed.status, 503);
    } finally {
      await voice.checkAvailability();
    }
    const unnamed = await request(server, 'GET', '/healthz');
    const records = logs.records();
    const of = (id: string) => records.filter((r) => r.requestId === id);
    assert.deepEqual(
      of('logged-1').map((r) => r.msg),
      ['request completed'],
    );
    assert.equal(of('logged-1')[0]!.res.statusCode, 200);
    assert.equal(of('logged-1')[0]!.req.url, '/commons/v1/channels');
    assert.deepEqual(
      of('logged-2')
        .map((r) => r.msg)
        .sort(),
      ['request completed', 'request failed'],
    );
    assert.equal(of(unnamed.headers.get('x-request-id')!).length, 1);
    for (const r of records)
      if (r.req || r.msg.startsWith('request ')) assert.equal(typeof r.requestId, 'string', `a request's line without its id: ${JSON.stringify(r)}`);
  });
});
