import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { GroupCommitter } from '../../src/core/group-commit.ts';

describe('GroupCommitter', () => {
  it('groups concurrent items into one flush', async () => {
    const flushes: number[][] = [];
    const g = new GroupCommitter<number, number>(async (items) => {
      flushes.push(items);
      return items.map((i) => i * 2);
    });
    assert.deepEqual(await Promise.all([1, 2, 3].map((i) => g.submit(i))), [2, 4, 6]);
    assert.deepEqual(flushes, [[1, 2, 3]]);
  });

  it('lets an item that fails its batch fail alone, and flushes the others', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 300 }), async (bad) => {
        let committed: number[] = [];
        // All-or-nothing, like a transaction: a batch holding a bad item commits nothing.
        const g = new GroupCommitter<number, number>(async (items) => {
          if (items.some((i) => bad[i])) throw new Error(`bad item in ${items.length}`);
          committed = [...committed, ...items];
          return items;
        }, 256);
        const results = await Promise.allSettled(bad.map((_, i) => g.submit(i)));
        results.forEach((r, i) => assert.equal(r.status, bad[i] ? 'rejected' : 'fulfilled', `item ${i}`));
        assert.deepEqual(
          [...committed].sort((x, y) => x - y),
          bad.flatMap((b, i) => (b ? [] : [i])),
          'each good item once',
        );
      }),
      { seed: 16, numRuns: 200 },
    );
  });
});
