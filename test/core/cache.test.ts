import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cache } from '../../src/core/cache.ts';

describe('Cache: least recently used', () => {
  it('keeps at most its capacity, dropping the least recently used', () => {
    const cache = new Cache<string, number>({ capacity: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('b'), 2);
    assert.equal(cache.get('c'), 3);
  });

  it('counts a read as a use', () => {
    const cache = new Cache<string, number>({ capacity: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.has('a'), true);
    assert.equal(cache.has('b'), false);
  });

  it('counts an overwrite as a use and keeps one entry per key', () => {
    const cache = new Cache<string, number>({ capacity: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), 10);
    assert.equal(cache.has('b'), false);
  });

  it('stores falsy values and tells them from a miss', () => {
    const cache = new Cache<string, number | null>({ capacity: 3 });
    cache.set('zero', 0);
    cache.set('null', null);
    assert.equal(cache.get('zero'), 0);
    assert.equal(cache.get('null'), null);
    assert.equal(cache.get('missing'), undefined);
  });

  it('deletes and clears', () => {
    const cache = new Cache<string, number>({ capacity: 3 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.delete('a'), true);
    assert.equal(cache.delete('a'), false);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  it('does not store a value loaded before a clear', () => {
    const cache = new Cache<string, number>({ capacity: 3 });
    const before = cache.generation;
    cache.clear();
    cache.setUnlessCleared(before, 'stale', 1);
    assert.equal(cache.has('stale'), false);
    cache.setUnlessCleared(cache.generation, 'fresh', 2);
    assert.equal(cache.get('fresh'), 2);
  });

  it('behaves like a plain list-based LRU over a long random run', () => {
    // Reference: keys ordered oldest first in an array.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const capacity = 5;
    const cache = new Cache<number, number>({ capacity });
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
    for (const capacity of [0, -1, 1.5, Number.NaN]) assert.throws(() => new Cache({ capacity }), RangeError);
  });

  it('takes Infinity as no bound', () => {
    const cache = new Cache<number, number>({ capacity: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 20_000; i++) cache.set(i, i);
    assert.equal(cache.size, 20_000);
    assert.equal(cache.get(0), 0);
  });

  it('deletes every entry a predicate picks, by value and key', () => {
    const cache = new Cache<string, { channel: string }>({ capacity: 10 });
    cache.set('k1', { channel: 'a' });
    cache.set('k2', { channel: 'b' });
    cache.set('k3', { channel: 'a' });
    cache.set('k4', { channel: 'c' });
    assert.equal(
      cache.deleteWhere((v) => v.channel === 'a'),
      2,
    );
    assert.equal(cache.size, 2);
    assert.equal(cache.has('k1'), false);
    assert.equal(cache.has('k3'), false);
    assert.equal(
      cache.deleteWhere((_, key) => key === 'k4'),
      1,
    );
    assert.deepEqual([cache.get('k2'), cache.get('k4')], [{ channel: 'b' }, undefined]);
    // The recency list stays whole: filling up still pushes out the oldest survivor first.
    const small = new Cache<number, number>({ capacity: 3 });
    for (const k of [1, 2, 3]) small.set(k, k);
    small.deleteWhere((v) => v === 2);
    small.set(4, 4);
    small.set(5, 5);
    assert.deepEqual(
      [1, 3, 4, 5].map((k) => small.has(k)),
      [false, true, true, true],
    );
  });
});

describe('Cache: time to live', () => {
  it('serves an entry for ttlMs after it was set, then misses and drops it', () => {
    const cache = new Cache<string, string>({ capacity: 10, ttlMs: 5_000 });
    cache.set('a', 'A', 1_000);
    assert.equal(cache.get('a', 1_000), 'A');
    assert.equal(cache.get('a', 5_999), 'A');
    assert.equal(cache.has('a', 5_999), true);
    assert.equal(cache.has('a', 6_000), false);
    assert.equal(cache.size, 1, 'has does not drop');
    assert.equal(cache.get('a', 6_000), undefined);
    assert.equal(cache.size, 0, 'an expired entry read is dropped');
  });

  it('restarts the time to live when a key is set again; a read does not', () => {
    const cache = new Cache<string, number>({ capacity: 10, ttlMs: 100 });
    cache.set('a', 1, 0);
    assert.equal(cache.get('a', 90), 1);
    assert.equal(cache.get('a', 100), undefined, 'reading at 90 did not extend it');
    cache.set('a', 2, 100);
    cache.set('a', 3, 150);
    assert.equal(cache.get('a', 249), 3);
    assert.equal(cache.get('a', 250), undefined);
  });

  it('caches null (a known absence) apart from a miss, until it expires', () => {
    const cache = new Cache<string, string | null>({ capacity: 10, ttlMs: 50 });
    cache.set('gone', null, 0);
    assert.equal(cache.get('gone', 49), null);
    assert.equal(cache.get('gone', 50), undefined);
  });

  it('each entry has its own time to live', () => {
    const cache = new Cache<string, number>({ capacity: 10, ttlMs: 100 });
    cache.set('a', 1, 0);
    cache.set('b', 2, 60);
    assert.deepEqual([cache.get('a', 120), cache.get('b', 120)], [undefined, 2]);
    assert.equal(cache.get('b', 160), undefined);
  });

  it('uses the clock when no time is given', () => {
    const cache = new Cache<string, number>({ capacity: 10, ttlMs: 60_000 });
    cache.set('a', 1);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('a', Date.now() + 60_001), undefined);
    cache.set('b', 2, Date.now() - 60_001);
    assert.equal(cache.get('b'), undefined);
  });

  it('still bounds the entries by capacity, least recently used first', () => {
    const cache = new Cache<string, number>({ capacity: 2, ttlMs: 1_000 });
    cache.set('a', 1, 0);
    cache.set('b', 2, 0);
    cache.get('a', 10);
    cache.set('c', 3, 20);
    assert.deepEqual([cache.has('a', 30), cache.has('b', 30), cache.has('c', 30)], [true, false, true]);
  });

  it('refuses a time to live that is not positive', () => {
    for (const ttlMs of [0, -1, Number.NaN]) assert.throws(() => new Cache({ capacity: 1, ttlMs }), RangeError);
  });
});

describe('Cache: load', () => {
  const deferred = <T>() => {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };

  it('reads once for every caller that misses the same key meanwhile, then serves the stored value', async () => {
    const cache = new Cache<string, number>({ capacity: 10, ttlMs: 1_000 });
    const d = deferred<number>();
    let reads = 0;
    const loader = () => {
      reads += 1;
      return d.promise;
    };
    const waiting = Array.from({ length: 20 }, () => cache.load('a', loader));
    assert.equal(reads, 1);
    d.resolve(7);
    assert.deepEqual(await Promise.all(waiting), Array(20).fill(7));
    assert.equal(await cache.load('a', loader), 7);
    assert.equal(reads, 1);
    assert.equal(cache.get('a'), 7);
  });

  it('reads again once the entry expired', async () => {
    const cache = new Cache<string, number>({ capacity: 10, ttlMs: 100 });
    let reads = 0;
    const loader = async () => ++reads;
    assert.equal(await cache.load('a', loader, 0), 1);
    assert.equal(await cache.load('a', loader, 50), 1);
    assert.equal(await cache.load('a', loader, 150), 2);
  });

  it('gives a failed read to its waiters and keeps nothing of it', async () => {
    const cache = new Cache<string, number>({ capacity: 10 });
    const d = deferred<number>();
    const both = [cache.load('a', () => d.promise), cache.load('a', () => d.promise)];
    d.reject(new Error('down'));
    for (const p of both) await assert.rejects(p, /down/);
    assert.equal(cache.has('a'), false);
    assert.equal(await cache.load('a', async () => 3), 3);
  });

  it('does not keep, nor share with later callers, a read that began before a clear', async () => {
    const cache = new Cache<string, string>({ capacity: 10 });
    const before = deferred<string>();
    const first = cache.load('a', () => before.promise);
    cache.clear();
    const second = cache.load('a', async () => 'new');
    before.resolve('old');
    assert.equal(await first, 'old');
    assert.equal(await second, 'new');
    assert.equal(cache.get('a'), 'new');
  });

  it('keeps a value set while a read was under way (it is the newer one)', async () => {
    const cache = new Cache<string, string>({ capacity: 10 });
    const d = deferred<string>();
    const loading = cache.load('a', () => d.promise);
    cache.set('a', 'set');
    d.resolve('read');
    assert.equal(await loading, 'read');
    assert.equal(cache.get('a'), 'set');
  });

  it('loadApart reads for itself while a load is under way (which may wait for the reader), and serves hits as load does', async () => {
    const cache = new Cache<string, string>({ capacity: 10, ttlMs: 60_000 });
    const outside = deferred<string>();
    const underWay = cache.load('a', () => outside.promise);
    // Joining the load under way would never resolve here: it waits for what the reader holds.
    const apart = await cache.loadApart('a', async () => 'in the transaction');
    assert.equal(apart, 'in the transaction');
    assert.equal(cache.get('a'), 'in the transaction');
    outside.resolve('outside');
    assert.equal(await underWay, 'outside');
    // The value read apart was stored first: the load that ended after it does not replace it.
    assert.equal(cache.get('a'), 'in the transaction');
    let reads = 0;
    assert.equal(await cache.loadApart('a', async () => `read ${++reads}`), 'in the transaction');
    assert.equal(reads, 0);
    assert.equal(await cache.loadApart('a', async () => `read ${++reads}`, Date.now() + 120_000), 'read 1');
  });

  it('loadApart keeps nothing read before a clear', async () => {
    const cache = new Cache<string, string>({ capacity: 10 });
    const d = deferred<string>();
    const apart = cache.loadApart('a', () => d.promise);
    cache.clear();
    d.resolve('old');
    assert.equal(await apart, 'old');
    assert.equal(cache.has('a'), false);
  });
});
