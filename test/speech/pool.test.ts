import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerJobError, WorkerPool } from '../../src/speech/pool.ts';

type Job = { kind: 'echo' | 'fail' | 'spin' | 'exit'; value?: number };
const entry = new URL('./fixtures/test-worker.ts', import.meta.url);

test('jobs run on at most `size` workers, each answered with its own result, in any number', async () => {
  const pool = new WorkerPool<Job, { value: number }>({ entry, size: 2, timeoutMs: 5_000 });
  try {
    const jobs = Array.from({ length: 20 }, (_, i) => pool.run({ kind: 'echo', value: i }));
    assert.ok(pool.load.busy <= 2 && pool.load.waiting >= 18, JSON.stringify(pool.load));
    assert.deepEqual(
      (await Promise.all(jobs)).map((r) => r.value),
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.deepEqual(pool.load, { waiting: 0, busy: 0, workers: 2 });
  } finally {
    await pool.close();
  }
});

test('a failed job fails alone; a worker that overruns or dies is replaced and the next jobs run', async () => {
  const pool = new WorkerPool<Job, { value: number }>({ entry, size: 1, timeoutMs: 300 });
  try {
    await assert.rejects(
      pool.run({ kind: 'fail' }),
      (err: unknown) => err instanceof WorkerJobError && err.code === 'FAILED' && /asked to fail/.test(err.message),
    );
    const spin = pool.run({ kind: 'spin' });
    const after = pool.run({ kind: 'echo', value: 7 });
    await assert.rejects(spin, (err: unknown) => err instanceof WorkerJobError && err.code === 'TIMEOUT' && /300 ms/.test(err.message));
    assert.equal((await after).value, 7, 'the job queued behind it ran on a new worker');
    await assert.rejects(
      pool.run({ kind: 'exit' }),
      (err: unknown) => err instanceof WorkerJobError && err.code === 'WORKER_FAILED' && /exit code 3/.test(err.message),
    );
    assert.equal((await pool.run({ kind: 'echo', value: 8 })).value, 8);
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.run({ kind: 'echo', value: 1 }), (err: unknown) => err instanceof WorkerJobError && err.code === 'CLOSED');
});

test('a worker idle for idleMs is stopped, and started again for the next job', async () => {
  const pool = new WorkerPool<Job, { value: number }>({ entry, size: 2, timeoutMs: 5_000, idleMs: 1_000 });
  try {
    await Promise.all([pool.run({ kind: 'echo', value: 1 }), pool.run({ kind: 'echo', value: 2 })]);
    assert.equal(pool.load.workers, 2);
    // A job within the idle time runs on a worker kept from before.
    assert.equal((await pool.run({ kind: 'echo', value: 3 })).value, 3);
    assert.equal(pool.load.workers, 2);
    const deadline = Date.now() + 5_000;
    while (pool.load.workers > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(pool.load.workers, 0, 'idle workers stopped');
    assert.equal((await pool.run({ kind: 'echo', value: 4 })).value, 4);
    assert.deepEqual(pool.load, { waiting: 0, busy: 0, workers: 1 });
    const spin = pool.run({ kind: 'spin' });
    await pool.run({ kind: 'echo', value: 5 });
    pool.stopIdle();
    assert.deepEqual(pool.load, { waiting: 0, busy: 1, workers: 1 }, 'stopIdle stops only the workers without a job');
    void spin.catch(() => undefined);
  } finally {
    await pool.close();
  }
  assert.throws(() => new WorkerPool({ entry, size: 1, timeoutMs: 1, idleMs: 0 }), /idleMs must be positive/);
});

test('closing fails the jobs waiting and running', async () => {
  const pool = new WorkerPool<Job, unknown>({ entry, size: 1, timeoutMs: 10_000 });
  const running = pool.run({ kind: 'spin' });
  const waiting = pool.run({ kind: 'echo', value: 1 });
  const outcomes = Promise.allSettled([running, waiting]);
  await new Promise((r) => setTimeout(r, 50));
  await pool.close();
  for (const o of await outcomes) {
    assert.equal(o.status, 'rejected');
    assert.ok(o.status === 'rejected' && o.reason instanceof WorkerJobError && o.reason.code === 'CLOSED');
  }
});

test('nonsensical sizes are refused', () => {
  assert.throws(() => new WorkerPool({ entry, size: 0, timeoutMs: 1 }), /size must be a positive integer/);
});
