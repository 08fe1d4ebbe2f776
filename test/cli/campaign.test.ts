// `tern campaign send` finishes what it starts: under a rate limit it waits as Retry-After asks and goes on to the end
// in one command, and its summary counts every outcome, the credit running out first.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it, test } from 'node:test';
import { run } from '../../src/cli/index.ts';
import { byReason } from '../../src/cli/commands/campaign.ts';
import { retryDelayMs } from '../../src/cli/client.ts';
import type { Io } from '../../src/cli/io.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../support/server.ts';

async function tern(env: NodeJS.ProcessEnv, argv: string[]): Promise<{ code: number | 'serving'; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env,
    readStdin: async () => '',
  };
  const code = await run(argv, io);
  return { code, out, err };
}

test('Retry-After in seconds or as a date, else a doubling backoff, within 100 ms and a minute', () => {
  assert.equal(retryDelayMs('2', 0), 2000);
  assert.equal(retryDelayMs('0', 0), 100);
  assert.equal(retryDelayMs(' 1.5 ', 3), 1500);
  assert.equal(retryDelayMs('3600', 0), 60_000);
  const now = Date.parse('2026-12-07T10:00:00Z');
  assert.equal(retryDelayMs('Mon, 07 Dec 2026 10:00:05 GMT', 0, now), 5000);
  assert.equal(retryDelayMs('Mon, 07 Dec 2026 09:00:00 GMT', 0, now), 100);
  assert.deepEqual(
    [0, 1, 2, 10].map((a) => retryDelayMs(null, a)),
    [1000, 2000, 4000, 60_000],
  );
  assert.equal(retryDelayMs('soon', 1), 2000);
});

test('reasons by count, INSUFFICIENT_CREDIT first whatever its count', () => {
  assert.deepEqual(byReason(['BLACKLISTED', 'INVALID_PHONE_NUMBER', 'BLACKLISTED', 'INSUFFICIENT_CREDIT']), [
    ['INSUFFICIENT_CREDIT', 1],
    ['BLACKLISTED', 2],
    ['INVALID_PHONE_NUMBER', 1],
  ]);
  assert.deepEqual(byReason([]), []);
});

forEachDialect('tern campaign send under a rate limit', (dialect) => {
  let server: TestServer;
  let dir: string;
  before(async () => {
    // Five sends a second per key and per organisation: a campaign of 60 rows at 8 at once meets 429 many times.
    server = await startTestServer(dialect, { TERN_RATE_LIMITS: 'send=5,read=1000000,lookup=1000000,admin=1000000' });
    dir = mkdtempSync(join(tmpdir(), 'tern-campaign-'));
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends every row in one command, then counts the accepted, the refused and the undeliverable by reason', async () => {
    // 1 € pays 22 SMS at 0.045 €: the rows after that end UNDELIVERABLE for INSUFFICIENT_CREDIT. The numbers end
    // in 0100 and after, which the simulator delivers.
    const t = await createTenant(server, { balance: 1 });
    const env = { TERN_URL: server.url, TERN_API_KEY: t.key, TERN_PROFILE: join(dir, 'none.json'), NO_COLOR: '1' };
    const rows = Array.from({ length: 60 }, (_, i) => (i === 30 ? 'not-a-number' : `3361230${String(i + 100).padStart(4, '0')}`));
    const file = join(dir, 'big.csv');
    writeFileSync(file, `number\n${rows.join('\n')}\n`);

    const sent = await tern(env, ['campaign', 'send', file, '--text', 'Hello', '--json']);
    assert.equal(sent.code, 8, sent.err);
    const s = JSON.parse(sent.out);
    assert.equal(s.rows, 60);
    assert.equal(s.accepted, 59);
    assert.equal(s.sent, 59);
    assert.ok(s.rateLimitWaits > 0, 'the rate limit was met and waited out');
    assert.deepEqual(s.refusedByReason, { '400.003': 1 });
    assert.deepEqual(
      s.refused.map((r: any) => r.line),
      [32],
    );
    assert.deepEqual(s.failedByReason, { UNDELIVERABLE: { INSUFFICIENT_CREDIT: 59 - 22 } });
    const all = [];
    for (let page = 1; ; page++) {
      const r = await request(server, 'GET', `/sms/v1/campaigns/${s.campaignId}/messages?page=${page}&pageSize=100`, { key: t.key });
      assert.equal(r.status, 200, r.text);
      all.push(...r.body.items);
      if (r.body.items.length < 100) break;
    }
    assert.equal(all.length, 59);
    assert.equal(new Set(all.map((m: any) => m.recipient.to)).size, 59);

    // The same command again sends nothing twice and says the same.
    const again = await tern(env, ['campaign', 'send', file, '--text', 'Hello']);
    assert.equal(again.code, 8, again.err);
    assert.match(again.out, /^Accepted\s+59 \(0 now in .* s, 59 already sent\)$/m);
    assert.match(again.out, /^Refused\s+1 \(400\.003 1\)$/m);
    assert.match(again.out, /^Undeliverable\s+37 \(INSUFFICIENT_CREDIT 37\)$/m);
    assert.match(again.out, /^Undelivered\s+0$/m);
  });

  it('exits 0 when every row is accepted and none failed', async () => {
    const t = await createTenant(server, { balance: 5 });
    const env = { TERN_URL: server.url, TERN_API_KEY: t.key, TERN_PROFILE: join(dir, 'none.json'), NO_COLOR: '1' };
    const file = join(dir, 'small.csv');
    writeFileSync(file, Array.from({ length: 12 }, (_, i) => `3362230${String(i + 100).padStart(4, '0')}`).join('\n'));
    const sent = await tern(env, ['campaign', 'send', file, '--text', 'Fine', '--json']);
    assert.equal(sent.code, 0, sent.err);
    const s = JSON.parse(sent.out);
    assert.deepEqual([s.accepted, s.refused.length, s.failedByReason], [12, 0, {}]);
  });
});
