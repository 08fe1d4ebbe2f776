import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LruCache } from '../../../src/core/lookup/lru.ts';

describe('LruCache', () => {
  it('keeps at most its capacity, dropping the least recently used', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('b'), 2);
    assert.equal(cache.get('c'), 3);
  });

  it('counts a read as a use', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.has('a'), true);
    assert.equal(cache.has('b'), false);
  });

  it('counts an overwrite as a use and keeps one entry per key', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), 10);
    assert.equal(cache.has('b'), false);
  });

  it('stores falsy values and tells them from a miss', () => {
    const cache = new LruCache<string, number | null>(3);
    cache.set('zero', 0);
    cache.set('null', null);
    assert.equal(cache.get('zero'), 0);
    assert.equal(cache.get('null'), null);
    assert.equal(cache.get('missing'), undefined);
  });

  it('deletes and clears', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.delete('a'), true);
    assert.equal(cache.delete('a'), false);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  it('behaves like a plain list-based LRU over a long random run', () => {
    // Reference: keys ordered oldest first in an array.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const capacity = 5;
    const cache = new LruCache<number, number>(capacity);
    let model: Array<[number, number]> = [];
    for (let step = 0; step < 5000; step++) {
      const key = random(12);
      const action = random(4);
      const at = model.findIndex(([k]) => k === key);
      if (action === 0) {
        const expected = at === -1 ? undefined : model[at]![1];
        if (at !== -1) model.push(model.splice(at, 1)[0]!);
        assert.equal(cache.get(key), expected, `step ${step} get ${key}`);
      } else if (action === 1) {
        if (at !== -1) model.splice(at, 1);
        assert.equal(cache.delete(key), at !== -1, `step ${step} delete ${key}`);
      } else {
        if (at !== -1) model.splice(at, 1);
        model.push([key, step]);
        if (model.length > capacity) model = model.slice(1);
        cache.set(key, step);
      }
      assert.equal(cache.size, model.length, `step ${step} size`);
    }
    for (const [key, value] of model) assert.equal(cache.get(key), value);
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) assert.throws(() => new LruCache(capacity), RangeError);
  });
});
