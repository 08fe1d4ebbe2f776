// The SDK's retry rules, against servers that do nothing else: Retry-After read in both forms, and what is tried
// again when no answer comes.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { DEFAULT_RETRY, retryAfterMs, retryDelayMs, type RetryEvent, Tern, TernConnectionError, TernServerError } from '../../packages/sdk/src/index.ts';
import { closedPort } from '../support/receiver.ts';

test('Retry-After in seconds or as an HTTP date; else a jittered exponential backoff', () => {
  const now = Date.parse('2026-12-07T12:00:00Z');
  assert.equal(retryAfterMs('2', now), 2000);
  assert.equal(retryAfterMs('Mon, 07 Dec 2026 12:00:05 GMT', now), 5000);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(null, now), undefined);
  assert.equal(retryDelayMs(3, '7', DEFAULT_RETRY), 7000);
  assert.equal(retryDelayMs(1, '3600', DEFAULT_RETRY), DEFAULT_RETRY.maxDelayMs, 'capped');
  assert.equal(
    retryDelayMs(1, null, DEFAULT_RETRY, () => 0),
    125,
  );
  assert.equal(
    retryDelayMs(3, null, DEFAULT_RETRY, () => 1),
    1000,
  );
});

test('no answer: a read is tried again, a send without an Idempotency-Key is not', async () => {
  const port = await closedPort();
  const events: RetryEvent[] = [];
  const tern = new Tern({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', retry: { retries: 2, baseDelayMs: 5 }, onRetry: (e) => events.push(e) });
  await assert.rejects(tern.sms.get('x'), TernConnectionError);
  assert.deepEqual(
    events.map((e) => e.attempt),
    [2, 3],
  );
  events.length = 0;
  await assert.rejects(tern.otp.send({ recipient: { to: '33612345678' } } as never), TernConnectionError);
  assert.equal(events.length, 0);
});

test('a 503 is tried again for a send with its key, and its key is the same on every try', async () => {
  const keys: string[] = [];
  const server = createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']));
    req.resume();
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' })
      .end(JSON.stringify({ errorCode: '503.002', message: 'Unavailable', detail: 'db' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const tern = new Tern({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k', retry: { retries: 2 } });
    const err = await tern.sms.send({ recipient: { to: '33612345678' }, body: { text: 'x' } }).catch((e: unknown) => e);
    assert.ok(err instanceof TernServerError, String(err));
    assert.equal(err.errorCode, '503.002');
    assert.equal(keys.length, 3);
    assert.equal(new Set(keys).size, 1);
    assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
  } finally {
    server.close();
  }
});

test('a caller’s signal ends the wait for Retry-After', async () => {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    res
      .writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' })
      .end(JSON.stringify({ errorCode: '429.001', message: 'Too many requests', detail: 'x' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const controller = new AbortController();
    const waits: number[] = [];
    const tern = new Tern({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'k',
      onRetry: (e) => {
        waits.push(e.delayMs);
        // Once the wait has begun.
        setImmediate(() => controller.abort(new Error('the caller gave up')));
      },
    });
    await assert.rejects(tern.request('get', '/sms/v1/messages', { signal: controller.signal }), /the caller gave up/);
    assert.deepEqual(waits, [30_000]);
    assert.equal(requests, 1);
  } finally {
    server.close();
  }
});
