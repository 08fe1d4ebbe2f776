import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestServer } from '../support/server.ts';

describe('SQLite durability level', () => {
  test('NORMAL by default; FULL with TERN_SQLITE_SYNCHRONOUS=FULL; anything else stops the start naming the setting', async () => {
    for (const [env, expected] of [[{}, 1], [{ TERN_SQLITE_SYNCHRONOUS: 'full' }, 2]] as const) {
      const server = await startTestServer('sqlite', env);
      try {
        assert.equal(server.app.store.sqlite!.pragma('synchronous', { simple: true }), expected);
      } finally {
        await server.stop();
      }
    }
    assert.throws(() => loadConfig({ TERN_SQLITE_SYNCHRONOUS: 'OFF' }), (err: unknown) => err instanceof ConfigError && err.setting === 'TERN_SQLITE_SYNCHRONOUS');
  });
});
