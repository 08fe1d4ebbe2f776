import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isUuid, uuidv7 } from '../../src/domain/ids.ts';

test('uuidv7: RFC 9562 layout with the millisecond timestamp first', () => {
  const t = Date.UTC(2026, 10, 21, 8, 0, 0, 123);
  const id = uuidv7(t + 10_000);
  assert.ok(isUuid(id));
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16), t + 10_000);
});

test('uuidv7: ids made in order sort in order, even within one millisecond, and never repeat', () => {
  const ids = Array.from({ length: 20_000 }, () => uuidv7());
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('uuidv7: over any instants, the layout holds and the time read back is the instant (or the last one, if later)', () => {
  let last = 0;
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (now) => {
      const id = uuidv7(now);
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      assert.ok(ms >= now && ms >= last, `${id}: ${ms} for ${now} after ${last}`);
      assert.ok(ms === now || ms <= last + 1, `${id}: ${ms} for ${now} after ${last}`);
      last = ms;
    }),
    { seed: 20261128, numRuns: 2000 },
  );
});

test('isUuid refuses what is not a UUID', () => {
  for (const bad of ['', 'x', '01a1fd1c-2728-7197-b674', '01a1fd1c27287197b67421422b8b05f1', '01a1fd1c-2728-7197-b674-21422b8b05fg']) {
    assert.equal(isUuid(bad), false, bad);
  }
});
