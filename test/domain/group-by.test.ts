import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { groupBy } from '../../src/domain/group-by.ts';

test('groupBy: groups in the order their keys first came, each in the items’ order', () => {
  const rows = [
    { id: 'a', c: 'x' },
    { id: 'b', c: 'y' },
    { id: 'c', c: 'x' },
    { id: 'd', c: 'z' },
    { id: 'e', c: 'y' },
  ];
  const byC = groupBy(rows, (r) => r.c);
  assert.deepEqual([...byC.keys()], ['x', 'y', 'z']);
  assert.deepEqual(byC.get('x'), [rows[0], rows[2]]);
  assert.deepEqual(
    groupBy(
      rows,
      (r) => r.c,
      (r) => r.id,
    ),
    new Map([
      ['x', ['a', 'c']],
      ['y', ['b', 'e']],
      ['z', ['d']],
    ]),
  );
  assert.equal(groupBy([], (r: string) => r).size, 0);
});

test('groupBy: every item in exactly one group, under its own key, in order (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 200 }), (items) => {
      const groups = groupBy(
        items.map((v, i) => ({ v, i })),
        (x) => x.v,
      );
      const flat = [...groups.values()].flat();
      assert.equal(flat.length, items.length);
      for (const [key, group] of groups) {
        assert.ok(group.every((x) => x.v === key));
        assert.deepEqual(
          group.map((x) => x.i),
          [...group.map((x) => x.i)].sort((a, b) => a - b),
        );
      }
    }),
    { seed: 17, numRuns: 200 },
  );
});
