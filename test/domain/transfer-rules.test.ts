import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transferDecision } from '../../src/domain/transfer-rules.ts';

type Org = { id: string; parentId: string | null };
const root: Org = { id: 'root', parentId: null };
const a = { id: 'a', parentId: 'root' };
const b = { id: 'b', parentId: 'root' };
const a1 = { id: 'a1', parentId: 'a' };

test('the parent funds its sub-organisation, and takes funds back', () => {
  assert.deepEqual(transferDecision('root', root, a), { allowed: true });
  assert.deepEqual(transferDecision('root', a, root), { allowed: true });
  assert.deepEqual(transferDecision('a', a, a1), { allowed: true });
});

test('a sub-organisation gives funds back to its parent, but cannot take them', () => {
  assert.deepEqual(transferDecision('a', a, root), { allowed: true });
  const take = transferDecision('a', root, a);
  assert.equal(take.allowed, false);
  assert.match((take as { reason: string }).reason, /ADMIN key of the parent/);
});

test('only direct parent and sub-organisation pairs, and never to itself', () => {
  const cases: Array<[string, typeof root, typeof root, RegExp]> = [
    ['root', a, b, /own sub-organisations/],
    ['root', root, a1, /own sub-organisations/],
    ['root', a1, root, /own sub-organisations/],
    ['root', a, a1, /ADMIN key of the parent/],
    ['root', a1, a, /ADMIN key of the parent or of the sub-organisation/],
    ['b', a, root, /ADMIN key of the parent or of the sub-organisation/],
    ['root', root, root, /same organisation/],
  ];
  for (const [caller, source, destination, reason] of cases) {
    const d = transferDecision(caller, source, destination);
    assert.equal(d.allowed, false, `${caller}: ${source.id} → ${destination.id}`);
    assert.match((d as { reason: string }).reason, reason);
  }
});
