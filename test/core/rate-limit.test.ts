import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ClusterRateLimiter } from '../../src/core/rate-limit.ts';
import type { Store } from '../../src/store/db.ts';
import { forEachDialect } from '../support/server.ts';
import { twoNodes } from '../support/stores.ts';

forEachDialect('cluster rate limits', (dialect) => {
  let a: Store;
  let b: Store;
  let cleanup: () => Promise<void>;
  before(async () => ({ a, b, cleanup } = await twoNodes(dialect)));
  after(async () => {
    await a.close();
    await b.close();
    await cleanup();
  });

  test('two nodes taking one unit at a time never exceed the limit together, and a new window starts afresh', async () => {
    let now = 1_000_000_000;
    const clock = () => now;
    const nodes = dialect === 'postgres' ? [new ClusterRateLimiter(a, clock), new ClusterRateLimiter(b, clock)] : [new ClusterRateLimiter(a, clock)];
    const rate = { limit: 100, windowMs: 1_000 };
    let granted = 0;
    let refusedAt: number | null = null;
    await Promise.all(
      nodes.map(async (limiter) => {
        for (let i = 0; i < 200; i++) {
          const r = await limiter.take('connector:op1', 1, rate);
          if (r.ok) granted++;
          else refusedAt = r.retryAt;
        }
      }),
    );
    assert.ok(granted <= 100, `granted ${granted}`);
    assert.ok(granted >= 90, `granted ${granted}: within 10 % of the limit`);
    assert.equal(refusedAt, 1_000_001_000, 'try again when the window ends');
    now += 1_000;
    assert.ok((await nodes[0]!.take('connector:op1', 1, rate)).ok, 'the next window');
    assert.ok((await nodes[0]!.take('connector:op2', 1, rate)).ok, 'keys are separate');
    assert.equal((await nodes[0]!.take('connector:op3', 101, rate)).ok, false, 'more than the limit at once is refused');
  });

  test('a burst of concurrent takes on one node asks for one chunk at a time, leaving the rest to the other nodes', async () => {
    const clock = () => 2_000_000_000;
    const first = new ClusterRateLimiter(a, clock);
    const second = new ClusterRateLimiter(dialect === 'postgres' ? b : a, clock);
    const rate = { limit: 1_000, windowMs: 1_000 };
    const burst = await Promise.all(Array.from({ length: 50 }, () => first.take('org:burst', 1, rate)));
    assert.ok(burst.every((r) => r.ok));
    if (dialect === 'postgres') {
      const rows = await a.db.selectFrom('rate_windows').select('used').where('key', '=', 'org:burst').execute();
      assert.equal(Number(rows[0]!.used), 100, 'one chunk (a tenth of the limit) for fifty takes');
    }
    assert.ok((await second.take('org:burst', 1, rate)).ok, 'the other node still gets its share');
  });

  test('a limit lowered during a window holds at once, units the node already took included', async () => {
    const clock = () => 3_000_000_000;
    const limiter = new ClusterRateLimiter(a, clock);
    assert.ok((await limiter.take('key:lowered', 1, { limit: 1_000, windowMs: 1_000 })).ok, 'takes a chunk of a hundred');
    const lowered = { limit: 2, windowMs: 1_000 };
    const r = await limiter.take('key:lowered', 1, lowered);
    assert.ok(r.ok && r.remaining === 0, JSON.stringify(r));
    assert.equal((await limiter.take('key:lowered', 1, lowered)).ok, false, 'a third in the window is refused');
  });
});
