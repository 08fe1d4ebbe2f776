import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/db.ts';
import { cuttableProxy } from '../support/connectors.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, forEachDialect, freshDatabase, request, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const MESSAGES = 150;

async function metric(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = line.exec(text);
  return m ? Number(m[1]) : 0;
}

forEachDialect('kill -9 with messages in flight to an HTTP upstream', (dialect) => {
  let b: TestServer;
  let dir: string;
  const nodes: TernProcess[] = [];
  before(async () => {
    b = await startTestServer(dialect, { TERN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,2s,2s,5s' });
    dir = mkdtempSync(join(tmpdir(), 'tern-upstream-crash-'));
  });
  after(async () => {
    for (const n of nodes) await n.kill();
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every message ends final, none reaches the upstream twice, and the metrics count what the crash put at risk', async () => {
    const onB = await createTenant(b, { balance: 1_000 });
    // B takes each submit at once; its answer reaches A 300 ms later, so a kill lands between the two.
    const network = await cuttableProxy(b.url, { answerDelayMs: 300 });
    const database = await freshDatabase(dialect);
    const config = join(dir, `tern-${dialect}.yaml`);
    writeFileSync(
      config,
      [
        'connectors:',
        '  - name: upstream',
        '    type: SMSMODE_HTTP',
        `    baseUrl: ${network.url}`,
        `    apiKey: ${onB.key}`,
        '    maxConnections: 8',
        '    pollAfterSeconds: 3',
        'routes:',
        '  - name: everything',
        '    priority: 1',
        '    connectors: [{ connector: upstream }]',
      ].join('\n'),
    );
    const port = await freePort();
    const env = { TERN_CONFIG: config, TERN_SECRET_KEY: 'upstream-crash-secret-key-0123456789abcdef', TERN_DISPATCH_LEASE_SECONDS: '2' };
    const reader = await openStore(database.url, 'test-reader');
    try {
      const first = await startTernProcess(database.url, port, env);
      nodes.push(first);
      const onA = await createTenant(first, { balance: 1_000 });
      const ids: string[] = [];
      // From …0100 on: numbers ending 0001–0004 are the simulator's failure cases.
      for (let i = 0; i < MESSAGES; i += 25) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(25, MESSAGES - i) }, (_, j) =>
            request(first, 'POST', '/sms/v1/messages', {
              key: onA.key,
              body: { recipient: { to: `3367${String(100 + i + j).padStart(7, '0')}` }, body: { text: `crash ${i + j}` } },
            }),
          ),
        );
        for (const r of batch) {
          assert.equal(r.status, 201, r.text);
          ids.push(r.body.messageId);
        }
      }
      const atB = () => b.app.store.db.selectFrom('messages').select(['ref_client']).where('organisation_id', '=', onB.organisationId).execute();
      await eventually(async () => ((await atB()).length >= 24 ? true : undefined), 30_000, 'submits reaching the upstream');
      await first.kill();
      await new Promise((r) => setTimeout(r, 500));

      const unplaced = new Set((await reader.db.selectFrom('messages').select('id').where('connector', 'is', null).execute()).map((m) => m.id));
      const claimed = (await reader.db.selectFrom('dispatch_queue').select('message_id').where('claimed_by', 'is not', null).execute()).length;
      const sentButNotRecorded = (await atB()).filter((m) => m.ref_client !== null && unplaced.has(m.ref_client)).length;
      assert.ok(
        unplaced.size > 0 && sentButNotRecorded > 0,
        `the kill landed with submits in flight (${unplaced.size} unplaced, ${sentButNotRecorded} taken by B unanswered)`,
      );

      const second = await startTernProcess(database.url, port, env);
      nodes.push(second);
      const open = () =>
        reader.db
          .selectFrom('messages')
          .select(['status', 'connector', 'upstream_id'])
          .where('status', 'not in', ['DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED'])
          .execute();
      await eventually(async () => ((await open()).length === 0 ? true : undefined), 60_000, 'every message final after the restart').catch(async (err) => {
        const left = await open();
        const queue = await reader.db.selectFrom('dispatch_queue').selectAll().execute();
        const up = left.map((m) => m.upstream_id!).filter(Boolean);
        const records = up.length ? await reader.db.selectFrom('connector_records').selectAll().where('key', 'in', up).execute() : [];
        const parked = up.length ? await reader.db.selectFrom('unmatched_receipts').selectAll().where('upstream_id', 'in', up).execute() : [];
        const atBNow = up.length ? await b.app.store.db.selectFrom('messages').selectAll().where('id', 'in', up).execute() : [];
        const bQueue = up.length ? await b.app.store.db.selectFrom('dispatch_queue').selectAll().where('message_id', 'in', up).execute() : [];
        const bRecords = up.length ? await b.app.store.db.selectFrom('connector_records').selectAll().where('key', 'in', up).execute() : [];
        atBNow.push(...(bQueue as any), ...(bRecords as any));
        throw new Error(
          `${(err as Error).message}: ${left.length} open, e.g. ${JSON.stringify(left.slice(0, 3))}; queue ${JSON.stringify(queue.slice(0, 3))}; records ${JSON.stringify(records)}; parked ${JSON.stringify(parked)}; B ${JSON.stringify(atBNow)}`,
        );
      });
      const statuses = await reader.db.selectFrom('messages').select(['status']).where('id', 'in', ids).execute();
      assert.deepEqual(
        statuses.map((s) => s.status),
        ids.map(() => 'DELIVERED'),
      );

      const received = await atB();
      const perMessage = new Map<string, number>();
      for (const m of received) perMessage.set(m.ref_client!, (perMessage.get(m.ref_client!) ?? 0) + 1);
      assert.equal(perMessage.size, MESSAGES, 'B has every message');
      assert.deepEqual(
        [...perMessage.values()].filter((n) => n > 1),
        [],
        'none twice: the repeated submits carried the same Idempotency-Key',
      );

      const takenOver = await metric(second.url, /^tern_dispatch_taken_over_total (\d+)/m);
      const recognised = await metric(second.url, /^tern_connector_repeats_recognised_total\{connector="upstream"\} (\d+)/m);
      process.stdout.write(`# ${dialect}: ${claimed} claimed by the killed node, ${sentButNotRecorded} of them already taken by the upstream\n`);
      assert.equal(takenOver, claimed, 'every message the dead node held is counted as taken over (a possible repeat)');
      assert.equal(recognised, sentButNotRecorded, 'each repeat the upstream had already taken is recognised by it, and counted');
      await second.stop();
    } finally {
      await reader.close();
      await network.close();
      await database.cleanup();
    }
  });
});
