import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SmppOutbox, type SmppOutboxHandoff, type SmppOutboxRow } from '../../../src/core/smpp/outbox.ts';
import { inTransaction } from '../../../src/store/db.ts';
import { forEachDialect } from '../../support/server.ts';
import { twoNodesForSuite } from '../../support/stores.ts';

/** A worker that takes rows of one credential, up to `room`, and remembers what it was handed. */
class FakeWorker implements SmppOutboxHandoff {
  reserved = 0;
  taken: SmppOutboxRow[] = [];
  constructor(
    private readonly credentialId: string,
    private room: number,
  ) {}
  reserve(credentialId: string, now: number): number | null {
    if (credentialId !== this.credentialId || this.room === 0) return null;
    this.room--;
    this.reserved++;
    return now + 60_000;
  }
  take(rows: SmppOutboxRow[]): void {
    this.reserved -= rows.length;
    this.taken.push(...rows);
  }
  release(count: number): void {
    this.reserved -= count;
    this.room += count;
  }
}

let n = 0;
function row(credentialId: string, at = Date.now()): SmppOutboxRow {
  n++;
  return {
    id: `row-${String(n).padStart(6, '0')}`,
    credential_id: credentialId,
    kind: 'RECEIPT',
    message_id: `m-${n}`,
    pdus: '[]',
    created_at: at,
    expires_at: at + 3_600_000,
    attempts: 0,
    next_attempt_at: at,
    lease_until: null,
  };
}

forEachDialect('SMPP outbox: rows handed to this node’s worker as they commit', (dialect) => {
  const nodes = twoNodesForSuite(dialect);

  it('hands rows the worker has room for once committed, leased so no node claims them; the rest are left to claims', async () => {
    const outbox = new SmppOutbox(nodes.a);
    const worker = new FakeWorker('cred-1', 2);
    outbox.handTo(worker);
    const woken: string[] = [];
    const off = nodes.a.signals.on('smpp-outbox', () => woken.push('smpp-outbox'));
    const rows = [row('cred-1'), row('cred-2'), row('cred-1'), row('cred-1')];
    await inTransaction(nodes.a, async (tx) => {
      await outbox.enqueue(rows, tx);
      assert.equal(worker.taken.length, 0, 'nothing handed before the commit');
      assert.equal(worker.reserved, 2);
    });
    off();
    assert.deepEqual(
      worker.taken.map((r) => r.id),
      [rows[0]!.id, rows[2]!.id],
    );
    assert.equal(worker.reserved, 0);
    assert.deepEqual(woken, ['smpp-outbox'], 'the rows left over wake the workers');
    // Another node claims only the rows nobody was handed.
    const claimed = await new SmppOutbox(nodes.b).claim(['cred-1', 'cred-2'], Date.now(), 60_000, 10);
    assert.deepEqual(claimed.map((r) => r.id).sort(), [rows[1]!.id, rows[3]!.id].sort());
  });

  it('gives the room back when the transaction rolls back, and hands nothing', async () => {
    const outbox = new SmppOutbox(nodes.a);
    const worker = new FakeWorker('cred-3', 5);
    outbox.handTo(worker);
    const rows = [row('cred-3'), row('cred-3')];
    await assert.rejects(
      inTransaction(nodes.a, async (tx) => {
        await outbox.enqueue(rows, tx);
        throw new Error('the event that wrote them failed');
      }),
      /failed/,
    );
    assert.equal(worker.taken.length, 0);
    assert.equal(worker.reserved, 0);
    const left = await nodes.a.db.selectFrom('smpp_outbox').select('id').where('credential_id', '=', 'cred-3').execute();
    assert.equal(left.length, 0, 'nothing written');
  });

  it('hands rows written outside a transaction at once, and never a row due later', async () => {
    const outbox = new SmppOutbox(nodes.a);
    const worker = new FakeWorker('cred-4', 5);
    outbox.handTo(worker);
    const now = [row('cred-4')];
    const later = [row('cred-4', Date.now() + 60_000)];
    await outbox.enqueue([...now, ...later]);
    assert.deepEqual(
      worker.taken.map((r) => r.id),
      [now[0]!.id],
    );
    const stored = await nodes.a.db.selectFrom('smpp_outbox').select(['id', 'lease_until']).where('credential_id', '=', 'cred-4').orderBy('id').execute();
    assert.ok(Number(stored[0]!.lease_until) > Date.now(), 'the handed row is leased');
    assert.equal(stored[1]!.lease_until, null, 'the later row is not');
  });
});
