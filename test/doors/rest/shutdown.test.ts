import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { request, startTestServer } from '../../support/server.ts';

const opened = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });

// Before the fix the stop waited for the server's headersTimeout (60 s): past this test's timeout.
test(
  'a stopping node does not wait on connections that never sent a request or never finished one, and lets a request under way finish',
  { timeout: 20_000 },
  async () => {
    const server = await startTestServer('sqlite');
    const port = Number(new URL(server.url).port);
    // Connections as a TCP probe or a spare pooled connection leave them: connected, nothing sent.
    const silent = await Promise.all([opened(port), opened(port), opened(port)]);
    // One began a request and never finished its head.
    silent[2]!.write('POST /sms/v1/messages HTTP/1.1\r\nHost: x\r\n');
    const ended = silent.map((s) => new Promise<void>((resolve) => s.once('close', () => resolve())));
    for (const s of silent) s.on('error', () => undefined);
    // And one request under way while the node stops: its answer still comes.
    const slow = await opened(port);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      slow.on('data', (d) => (text += d.toString()));
      slow.once('close', () => resolve(text));
    });
    slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n');
    assert.equal((await request(server, 'GET', '/healthz')).status, 200);

    const stopping = server.stop();
    slow.write('\r\n');
    await stopping;
    await Promise.all(ended);
    assert.match(await answer, /^HTTP\/1\.1 (200|503)/, 'the request under way was answered, not cut');
  },
);
