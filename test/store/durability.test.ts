import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { startTestServer } from '../support/server.ts';

describe('SQLite durability level', () => {
  test('NORMAL by default; FULL with TERN_SQLITE_SYNCHRONOUS=FULL; anything else stops the start naming the setting', async () => {
    for (const [env, expected] of [
      [{}, 1],
      [{ TERN_SQLITE_SYNCHRONOUS: 'full' }, 2],
    ] as const) {
      const server = await startTestServer('sqlite', env);
      try {
        assert.equal(server.app.store.sqlite!.pragma('synchronous', { simple: true }), expected);
      } finally {
        await server.stop();
      }
    }
    assert.throws(
      () => loadConfig({ TERN_SQLITE_SYNCHRONOUS: 'OFF' }),
      (err: unknown) => err instanceof ConfigError && err.setting === 'TERN_SQLITE_SYNCHRONOUS',
    );
  });

  test('the page cache is 16 MiB by default and TERN_SQLITE_CACHE_MB otherwise; the heap growth setting is read and bounded', async () => {
    for (const [env, expected] of [
      [{}, -16 * 1024],
      [{ TERN_SQLITE_CACHE_MB: '4' }, -4 * 1024],
    ] as const) {
      const server = await startTestServer('sqlite', env);
      try {
        assert.equal(server.app.store.sqlite!.pragma('cache_size', { simple: true }), expected);
      } finally {
        await server.stop();
      }
    }
    assert.equal(loadConfig({}).heapGrowthPercent, 25);
    assert.equal(loadConfig({ TERN_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent, 0);
    for (const [setting, value] of [
      ['TERN_SQLITE_CACHE_MB', '0'],
      ['TERN_HEAP_GROWTH_PERCENT', '-1'],
      ['TERN_HEAP_GROWTH_PERCENT', 'lots'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [setting]: value }),
        (err: unknown) => err instanceof ConfigError && err.setting === setting,
      );
    }
  });
});
