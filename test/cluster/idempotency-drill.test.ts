// A node killed (kill -9) in the middle of an idempotent request: its key is given up when the node's lease on it
// ends, and a retry on another node gets the answer without waiting for the claim's minute.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { IDEMPOTENCY_ABANDONED_MS } from '../../src/core/idempotency.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, freshDatabase, request } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';
import { skip } from './drill-support.ts';

describe('cluster drill: a node killed with an idempotent request in progress [postgres]', { skip }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test('the retry on another node is answered once the dead node’s lease on the key ends, well within the minute', async () => {
    const database = await freshDatabase('postgres');
    cleanups.push(() => database.cleanup());
    const a = await startTernProcess(database.url, await freePort(), { TERN_NODE_ID: 'idem-a' });
    const b: TernProcess = await startTernProcess(database.url, await freePort(), { TERN_NODE_ID: 'idem-b' });
    cleanups.push(async () => {
      await a.kill();
      await b.kill();
    });
    const reader: Store = await openStore(database.url, 'idem-drill-reader', { migrate: false });
    cleanups.push(() => reader.close());

    const parent = await createTenant(a, { name: 'P', balance: 10 });
    const child = await createTenant(a, { name: 'C', parentOrganisationId: parent.organisationId });
    const body = { organisationDestination: { organisationId: child.organisationId }, amount: 1 };
    const transfer = (node: TernProcess) =>
      request(node, 'POST', `/commons/v1/organisations/${parent.organisationId}/transfers`, {
        key: parent.key,
        body,
        headers: { 'Idempotency-Key': 'drill-1' },
      });

    // The parent's balance row locked from outside: the transfer claims its key on node A, then waits on the row.
    let unlock!: () => void;
    const unlocked = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = reader.db.transaction().execute(async (trx) => {
      await sql`select id from organisations where id = ${parent.organisationId} for update`.execute(trx);
      locked();
      await unlocked;
    });
    await isLocked;
    const onA = transfer(a).catch((err: unknown) => err);
    const claim = await eventually(
      async () => {
        const row = await reader.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'drill-1').executeTakeFirst();
        return row && Number(row.status_code) === 0 ? row : undefined;
      },
      20_000,
      'node A to claim the key',
    );
    assert.match(claim.claimed_by ?? '', /^idem-a@\d+$/, 'the claim names the process serving it');
    await sleep(200); // its transaction reaches the locked row
    await a.kill();
    const killedAt = Date.now();
    unlock();
    await holding;
    assert.ok((await onA) instanceof Error, 'node A never answered');

    // Retried on node B as a client would: 409.003 while A may still be alive, then the answer.
    const statuses: string[] = [];
    let answer: Awaited<ReturnType<typeof transfer>> | undefined;
    while (Date.now() - killedAt < IDEMPOTENCY_ABANDONED_MS) {
      const r = await transfer(b);
      statuses.push(r.status === 409 ? `409 ${r.body.errorCode}` : String(r.status));
      if (r.status !== 409) {
        answer = r;
        break;
      }
      await sleep(250);
    }
    const waited = Date.now() - killedAt;
    process.stdout.write(
      `# idempotency key of a killed node: retry answered ${waited} ms after the kill (${statuses.length} tries: ${[...new Set(statuses)].join(', ')})\n`,
    );
    assert.ok(answer, `answered within the minute: ${statuses.join(' ')}`);
    assert.equal(answer.status, 201, answer.text);
    assert.ok(
      statuses.slice(0, -1).every((s) => s === '409 409.003'),
      statuses.join(' '),
    );
    // The node's lease on it: it stopped beating at most a round before the kill, and is gone 15 s after its last beat.
    assert.ok(waited < 20_000, `within the node's lease (${waited} ms), not the claim's minute`);

    const balances = await reader.db
      .selectFrom('organisations')
      .select(['id', 'balance'])
      .where('id', 'in', [parent.organisationId, child.organisationId])
      .execute();
    const of = (id: string) => Number(balances.find((r) => r.id === id)!.balance);
    assert.deepEqual([of(parent.organisationId), of(child.organisationId)], [9_000_000, 1_000_000], 'moved once');
    const again = await transfer(b);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.transferId, answer.body.transferId);
  });
});
