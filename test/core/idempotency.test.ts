import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CoreError } from '../../src/core/errors.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_ABANDONED_MS,
  IDEMPOTENCY_TTL_MS,
  pruneIdempotencyKeys,
  releaseIdempotencyKey,
  requestFingerprint,
  runIdempotent,
} from '../../src/core/idempotency.ts';
import { idempotencyKeyOf } from '../../src/doors/rest/idempotency.ts';
import { findIdempotencyRow } from '../../src/store/idempotency-keys.ts';
import { Cluster, NODE_GONE_AFTER_MS } from '../../src/core/cluster.ts';
import { forEachDialect, startTestServer, type TestServer } from '../support/server.ts';

async function rejects(p: Promise<unknown>, kind: string, detail?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CoreError, String(err));
    assert.equal(err.kind, kind);
    if (detail) assert.match(err.detail, detail);
    return true;
  });
}

test('the header: absent is null, 1 to 255 visible ASCII characters, anything else 400', () => {
  assert.equal(idempotencyKeyOf(undefined), null);
  assert.equal(idempotencyKeyOf('a'), 'a');
  assert.equal(idempotencyKeyOf(['k1', 'k2']), 'k1');
  assert.equal(idempotencyKeyOf('x'.repeat(255)), 'x'.repeat(255));
  for (const bad of ['', 'x'.repeat(256), 'with space', 'accent-é', 'tab\t']) {
    assert.throws(
      () => idempotencyKeyOf(bad),
      (e: unknown) => e instanceof CoreError && e.kind === 'INVALID_REQUEST',
      JSON.stringify(bad),
    );
  }
});

test('fingerprints ignore key order, not values', () => {
  assert.equal(requestFingerprint({ a: 1, b: [1, 2] }), requestFingerprint({ b: [1, 2], a: 1 }));
  assert.notEqual(requestFingerprint({ a: 1 }), requestFingerprint({ a: 2 }));
  assert.match(requestFingerprint({}), /^[0-9a-f]{64}$/);
});

forEachDialect('idempotency keys', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => server.stop());

  const req = (key: string, body: unknown = { amount: 1 }) => ({ scope: 'test:org', key, fingerprint: requestFingerprint(body) });

  test('claim, answer, replay; another request with the key is 422; in progress is 409', async () => {
    const { db } = server.app.store;
    const r = req('k1');
    const claim = await claimIdempotencyKey(db, r, 1_000);
    assert.deepEqual(claim, { state: 'claimed', claimedAt: 1_000 });
    await rejects(claimIdempotencyKey(db, r, 1_001), 'IDEMPOTENCY_IN_PROGRESS', /"k1" is still being processed/);
    await rejects(claimIdempotencyKey(db, req('k1', { amount: 2 }), 1_001), 'IDEMPOTENCY_MISMATCH', /different request/);
    await db.transaction().execute((trx) => completeIdempotencyKey(trx, r, 1_000, { statusCode: 201, body: { id: 'x', n: 1.5 } }));
    assert.deepEqual(await claimIdempotencyKey(db, r, 2_000), { state: 'replay', answer: { statusCode: 201, body: { id: 'x', n: 1.5 } } });
    await rejects(claimIdempotencyKey(db, req('k1', { amount: 2 }), 2_000), 'IDEMPOTENCY_MISMATCH');
    assert.deepEqual(await claimIdempotencyKey(db, { ...r, scope: 'test:other' }, 2_000), { state: 'claimed', claimedAt: 2_000 });
  });

  test('an answered key expires after a day; an abandoned claim after a minute', async () => {
    const { db } = server.app.store;
    const r = req('k2');
    await claimIdempotencyKey(db, r, 10_000);
    await db.transaction().execute((trx) => completeIdempotencyKey(trx, r, 10_000, { statusCode: 201, body: 'first' }));
    const within = await claimIdempotencyKey(db, r, 10_000 + IDEMPOTENCY_TTL_MS);
    assert.equal(within.state, 'replay');
    const other = req('k2', { amount: 9 });
    const reused = await claimIdempotencyKey(db, other, 10_001 + IDEMPOTENCY_TTL_MS);
    assert.deepEqual(reused, { state: 'claimed', claimedAt: 10_001 + IDEMPOTENCY_TTL_MS });

    const stuck = req('k3');
    await claimIdempotencyKey(db, stuck, 50_000);
    await rejects(claimIdempotencyKey(db, stuck, 50_000 + IDEMPOTENCY_ABANDONED_MS), 'IDEMPOTENCY_IN_PROGRESS');
    const taken = await claimIdempotencyKey(db, stuck, 50_001 + IDEMPOTENCY_ABANDONED_MS);
    assert.equal(taken.state, 'claimed');
    // The stalled request can no longer record its answer; its release does not touch the new claim.
    await rejects(
      db.transaction().execute((trx) => completeIdempotencyKey(trx, stuck, 50_000, { statusCode: 201, body: 'late' })),
      'IDEMPOTENCY_IN_PROGRESS',
      /taken over/,
    );
    await releaseIdempotencyKey(db, stuck, 50_000);
    const row = await findIdempotencyRow(db, stuck.scope, stuck.key);
    assert.equal(row?.created_at, 50_001 + IDEMPOTENCY_ABANDONED_MS);
  });

  test('a claim whose process is gone is taken over at once; a live one is left alone for its minute', async () => {
    const { store } = server.app;
    const { db } = store;
    const cluster = new Cluster(store, 'idem-here');
    const now = Date.now();
    const stale = async (key: string, claimant: string) => {
      await db
        .insertInto('idempotency_keys')
        .values({
          scope: 'test:org',
          key,
          request_hash: requestFingerprint({ amount: 1 }),
          status_code: 0,
          response_body: '',
          created_at: now - 1_000,
          claimed_by: claimant,
        })
        .execute();
      return req(key);
    };
    // A process that left no trace (no beat), and one whose node id now beats from a process started later.
    await db
      .insertInto('nodes')
      .values({ id: 'idem-restarted', started_at: now - 5_000, seen_at: now })
      .execute();
    for (const [key, claimant] of [
      ['gone-1', 'idem-ghost@123'],
      ['gone-2', `idem-restarted@${now - 60_000}`],
    ] as const) {
      const claim = await claimIdempotencyKey(db, await stale(key, claimant), now, cluster);
      assert.deepEqual(claim, { state: 'claimed', claimedAt: now }, key);
      const row = await findIdempotencyRow(db, 'test:org', key);
      assert.equal(row?.claimed_by, cluster.self, 'the key is now this process’s');
    }
    // A node that beat a round ago and has not started again: its request may still be running.
    await db
      .insertInto('nodes')
      .values({ id: 'idem-alive', started_at: now - 5_000, seen_at: now - 5_000 })
      .execute();
    const alive = await stale('alive', `idem-alive@${now - 5_000}`);
    if (dialect === 'postgres') {
      await rejects(claimIdempotencyKey(db, alive, now, cluster), 'IDEMPOTENCY_IN_PROGRESS');
      // Its lease ends once it has not beaten for NODE_GONE_AFTER_MS.
      await db
        .updateTable('nodes')
        .set({ seen_at: now - NODE_GONE_AFTER_MS - 1 })
        .where('id', '=', 'idem-alive')
        .execute();
      assert.equal((await claimIdempotencyKey(db, alive, now, cluster)).state, 'claimed');
    } else {
      // One process serves a SQLite database: a claim of any other process belongs to one that is gone.
      assert.equal((await claimIdempotencyKey(db, alive, now, cluster)).state, 'claimed');
    }
    // This process's own claim in progress is a concurrent retry: 409, as before.
    await rejects(claimIdempotencyKey(db, req('gone-1'), now + 1, cluster), 'IDEMPOTENCY_IN_PROGRESS');
    // A claim recorded before claimants were (none) keeps its minute.
    await db
      .insertInto('idempotency_keys')
      .values({
        scope: 'test:org',
        key: 'old-claim',
        request_hash: requestFingerprint({ amount: 1 }),
        status_code: 0,
        response_body: '',
        created_at: now - 1_000,
      })
      .execute();
    await rejects(claimIdempotencyKey(db, req('old-claim'), now, cluster), 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal((await claimIdempotencyKey(db, req('old-claim'), now + IDEMPOTENCY_ABANDONED_MS, cluster)).state, 'claimed');
    // An answer recorded forgets its claimant: it replays, whoever asks.
    await db.transaction().execute((trx) => completeIdempotencyKey(trx, req('gone-1'), now, { statusCode: 201, body: 'done' }));
    assert.equal((await findIdempotencyRow(db, 'test:org', 'gone-1'))?.claimed_by, null);
    assert.equal((await claimIdempotencyKey(db, req('gone-1'), now + 2, cluster)).state, 'replay');
  });

  test('runIdempotent: once per key, nothing kept when the work fails, PostgreSQL deadlocks run again', async () => {
    const { store } = server.app;
    const { db } = store;
    await db.schema.createTable('idem_effects').ifNotExists().addColumn('note', 'text').execute();
    const effects = async () =>
      (
        await db
          .selectFrom('idem_effects' as never)
          .selectAll()
          .execute()
      ).length;
    const work = (note: string) => async (trx: typeof db) => {
      await trx
        .insertInto('idem_effects' as never)
        .values({ note } as never)
        .execute();
      return { statusCode: 201, body: { note } };
    };

    const r = req('run-1');
    assert.deepEqual(await runIdempotent(store, r, work('a')), { statusCode: 201, body: { note: 'a' }, replayed: false });
    assert.deepEqual(await runIdempotent(store, r, work('b')), { statusCode: 201, body: { note: 'a' }, replayed: true });
    assert.equal(await effects(), 1);

    const failing = req('run-2');
    await rejects(
      runIdempotent(store, failing, async (trx) => {
        await work('c')(trx);
        throw new CoreError('INSUFFICIENT_FUNDS', 'no');
      }),
      'INSUFFICIENT_FUNDS',
    );
    assert.equal(await effects(), 1, 'the failed work left nothing');
    assert.equal(await findIdempotencyRow(db, failing.scope, failing.key), null, 'and released its key');
    assert.equal((await runIdempotent(store, failing, work('d'))).replayed, false);
    assert.equal(await effects(), 2);

    let attempts = 0;
    const flaky = await runIdempotent(store, req('run-3'), async (trx) => {
      attempts++;
      await work(`attempt ${attempts}`)(trx);
      if (attempts === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return { statusCode: 201, body: { attempts } };
    });
    assert.deepEqual(flaky, { statusCode: 201, body: { attempts: 2 }, replayed: false });
    assert.equal(await effects(), 3, 'the aborted attempt left nothing');

    let calls = 0;
    await assert.rejects(
      runIdempotent(store, req('run-4'), async () => {
        calls++;
        throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      }),
      /deadlock/,
    );
    assert.equal(calls, 3, 'gives up after three attempts');
    assert.deepEqual(await runIdempotent(store, null, work('no key')), { statusCode: 201, body: { note: 'no key' }, replayed: false });
  });

  test('keys past their day are pruned in batches; younger ones stay', async () => {
    const { store } = server.app;
    const now = 5_000_000_000_000;
    const rows = Array.from({ length: 1_203 }, (_, i) => ({
      scope: 'prune:test',
      key: `old-${i}`,
      request_hash: 'h',
      status_code: i % 2 === 0 ? 201 : 0,
      response_body: '',
      created_at: now - IDEMPOTENCY_TTL_MS - 1 - i,
    }));
    for (let i = 0; i < rows.length; i += 400)
      await store.db
        .insertInto('idempotency_keys')
        .values(rows.slice(i, i + 400))
        .execute();
    await claimIdempotencyKey(store.db, { scope: 'prune:test', key: 'young', fingerprint: 'h' }, now - IDEMPOTENCY_TTL_MS + 1);
    // The earlier tests' keys (dated 1970) go too.
    assert.ok((await pruneIdempotencyKeys(store, now)) >= 1_203);
    const older = await store.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('created_at', '<', now - IDEMPOTENCY_TTL_MS)
      .execute();
    assert.deepEqual(older, []);
    const left = await store.db.selectFrom('idempotency_keys').select('key').where('scope', '=', 'prune:test').execute();
    assert.deepEqual(
      left.map((r) => r.key),
      ['young'],
    );
  });
});
