import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

// Slow enough that the kill lands while submits and receipts are in flight.
const ENV = { TERN_SIMULATOR_SUBMIT_LATENCY_MS: '150', TERN_SIMULATOR_RECEIPT_LATENCY_MS: '400', TERN_DISPATCH_LEASE_SECONDS: '2' };

async function call(base: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const dir = mkdtempSync(join(tmpdir(), 'tern-crash-'));
const nodes: TernProcess[] = [];
after(async () => {
  for (const n of nodes) await n.kill();
  rmSync(dir, { recursive: true, force: true });
});

test('killed with messages in flight and started again: every accepted message ends final, none reaches the carrier twice', async () => {
  const dbPath = join(dir, 'tern.db');
  const port = await freePort();
  const first = await startTernProcess(`sqlite:${dbPath}`, port, ENV);
  nodes.push(first);
  const base = first.url;
  const ADMIN = first.adminKey;

  const org = await call(base, 'POST', '/admin/v1/organisations', ADMIN, { name: 'Crash' });
  const channel = await call(base, 'POST', `/admin/v1/organisations/${org.organisationId}/channels`, ADMIN, { name: 'c', type: 'SMS', flow: 'TRANSACTIONAL' });
  const key = (await call(base, 'POST', `/admin/v1/channels/${channel.channelId}/credentials`, ADMIN, { name: 'k', roles: ['ADMIN'] })).value;
  await call(base, 'POST', `/admin/v1/organisations/${org.organisationId}/credit`, ADMIN, { amount: 100 });

  const accepted: string[] = [];
  const sends = Array.from({ length: 300 }, (_, i) =>
    call(base, 'POST', '/sms/v1/messages', key, {
      recipient: { to: `3361${String(i).padStart(6, '0')}5` },
      body: { text: `message ${i}` },
      ...(i % 10 === 0 ? { sentDate: new Date(Date.now() + 1_000).toISOString() } : {}),
    }).then((m) => accepted.push(m.messageId)),
  );
  await Promise.all(sends);
  const db = new Database(dbPath, { readonly: true });
  try {
    const inFlight = db.prepare(`select count(*) as n from messages where status in ('ENROUTE', 'SCHEDULED')`).get() as { n: number };
    assert.ok(inFlight.n > 0, 'messages are still in flight when the server is killed');
  } finally {
    db.close();
  }
  await first.kill();

  const second = await startTernProcess(`sqlite:${dbPath}`, port, ENV);
  nodes.push(second);
  await eventually(
    async () => {
      const check = new Database(dbPath, { readonly: true });
      try {
        const open = check.prepare(`select count(*) as n from messages where status in ('ENROUTE', 'SCHEDULED')`).get() as { n: number };
        return open.n === 0 ? true : undefined;
      } finally {
        check.close();
      }
    },
    60_000,
    'every message to reach a final status after the restart',
  );

  const check = new Database(dbPath, { readonly: true });
  try {
    assert.equal(accepted.length, 300);
    const statuses = check.prepare(`select status, count(*) as n from messages group by status`).all() as Array<{ status: string; n: number }>;
    assert.deepEqual(statuses, [{ status: 'DELIVERED', n: 300 }]);
    const carrier = check
      .prepare(
        `select count(*) as n, sum(json_extract(data, '$.accepted')) as acceptedOnce, sum(json_extract(data, '$.duplicates')) as duplicates
         from connector_records where connector = 'simulator' and key not like 'handset:%'`,
      )
      .get() as { n: number; acceptedOnce: number; duplicates: number };
    assert.equal(carrier.n, 300, 'one carrier record per message');
    assert.equal(carrier.acceptedOnce, 300, 'each message accepted by the carrier once');
    const balance = check.prepare(`select balance from organisations where id = ?`).get(org.organisationId) as { balance: number };
    const ledger = check.prepare(`select sum(amount) as s from ledger where organisation_id = ?`).get(org.organisationId) as { s: number };
    assert.equal(balance.balance, ledger.s, 'balance equals the sum of its ledger');
    assert.equal(balance.balance, 100_000_000 - 300 * 45_000, 'each message charged once');
    // Re-submissions after the crash (if the kill landed between a submit and its record) are recognised by the
    // carrier from the message id and not sent again.
    process.stdout.write(`# carrier recognised ${carrier.duplicates} re-submissions after the restart\n`);
  } finally {
    check.close();
  }
  await second.stop();
});
