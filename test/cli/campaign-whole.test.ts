// `tern campaign send` of 20,000 rows with the default traffic limits goes to the end in one command: the CLI in a
// process of its own, against a server that limits sends as a new install does (500 a second per key). SQLite only:
// the same command on PostgreSQL is tested, on a smaller file, in campaign.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { TERN_MAIN } from '../support/process.ts';
import { createTenant, request, startTestServer, type TestServer } from '../support/server.ts';

const ROWS = 20_000;

let server: TestServer;
let dir: string;
before(async () => {
  // '' leaves every group at its default (src/domain/traffic.ts), where the suite's servers are otherwise unlimited.
  server = await startTestServer('sqlite', { TERN_RATE_LIMITS: '' });
  dir = mkdtempSync(join(tmpdir(), 'tern-campaign-whole-'));
});
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`a campaign of ${ROWS.toLocaleString('en-US')} rows, at the default limits, is sent to the end in one command`, async () => {
  // 20,000 SMS at 0.045 € cost 900 €. The numbers end in 0100 to 9999 after a series digit: never one of the
  // simulator's failing endings (…0001–0004, …9).
  const t = await createTenant(server, { balance: 1_000 });
  const limits = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}/rate-limits`, { key: server.adminKey });
  assert.equal(limits.status, 200, limits.text);
  const file = join(dir, 'whole.csv');
  const numbers = Array.from({ length: ROWS }, (_, i) => `3361${Math.floor(i / 9_000) + 1}${String((i % 9_000) + 1_000).padStart(5, '0')}0`);
  writeFileSync(file, `number\n${numbers.join('\n')}\n`);

  const { stdout } = await promisify(execFile)(process.execPath, [TERN_MAIN, 'campaign', 'send', file, '--text', 'Winter sale: 20% off', '--json'], {
    env: { ...process.env, TERN_URL: server.url, TERN_API_KEY: t.key, TERN_PROFILE: join(dir, 'none.json'), NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const summary = JSON.parse(stdout);
  process.stdout.write(`# ${ROWS} rows: ${summary.rateLimitWaits} waits for the rate limit (${JSON.stringify(limits.body)})\n`);
  assert.equal(summary.rows, ROWS);
  assert.equal(summary.accepted, ROWS);
  assert.equal(summary.sent, ROWS);
  assert.deepEqual(summary.refused, []);
  assert.equal(summary.counts.accepted, ROWS, 'the campaign counts every row');
  assert.deepEqual(summary.failedByReason, {});
  const campaign = await request(server, 'GET', `/sms/v1/campaigns/${summary.campaignId}`, { key: t.key });
  assert.equal(campaign.status, 200, campaign.text);
  const organisation = await request(server, 'GET', `/commons/v1/organisations/${t.organisationId}`, { key: t.key });
  assert.equal(organisation.status, 200, organisation.text);
  assert.deepEqual([organisation.body.balance.amount, organisation.body.monthlyConsumption], [1_000 - ROWS * 0.045, ROWS * 0.045], 'each row charged once');
});
