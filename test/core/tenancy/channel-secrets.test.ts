import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { createTenant, forEachDialect, freshDatabase, request, startTestServer } from '../../support/server.ts';

forEachDialect('webhook signing secrets at rest', (dialect) => {
  test('are stored sealed, answered and used in clear, and those an older version stored in clear are sealed at start', async () => {
    const database = await freshDatabase(dialect);
    try {
      let server = await startTestServer(dialect, { TERN_DATABASE_URL: database.url });
      const t = await createTenant(server, { balance: 1 });
      const stored = async () =>
        (await server.app.store.db.selectFrom('channels').select(['webhook_secret']).where('id', '=', t.channelId).executeTakeFirstOrThrow()).webhook_secret;
      const answered = await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key });
      assert.match(answered.body.secret, /^whsec_/);
      assert.match(await stored(), /^v1:/);
      assert.ok(!(await stored()).includes(answered.body.secret));
      // What an older version left: the secret in clear.
      await server.app.store.db.updateTable('channels').set({ webhook_secret: answered.body.secret }).where('id', '=', t.channelId).execute();
      await server.stop();
      server = await startTestServer(dialect, { TERN_DATABASE_URL: database.url });
      try {
        assert.match(await stored(), /^v1:/, 'sealed at start');
        assert.equal(
          (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body.secret,
          answered.body.secret,
          'the same secret',
        );
      } finally {
        await server.stop();
      }
    } finally {
      await database.cleanup();
    }
  });
});

test('without TERN_SECRET_KEY: SQLite keeps a key file of its own beside the database (owner only), PostgreSQL refuses to start', async () => {
  const database = await freshDatabase('sqlite');
  try {
    const path = join(dirname(database.url.slice('sqlite:'.length)), 'secret.key');
    let server = await startTestServer('sqlite', { TERN_DATABASE_URL: database.url, TERN_SECRET_KEY: '' });
    const t = await createTenant(server, { balance: 1 });
    const secret = (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body.secret;
    assert.equal(statSync(path).mode & 0o777, 0o600);
    await server.stop();
    server = await startTestServer('sqlite', { TERN_DATABASE_URL: database.url, TERN_SECRET_KEY: '' });
    try {
      assert.equal(
        (await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key })).body.secret,
        secret,
        'the same key after a restart',
      );
    } finally {
      await server.stop();
    }
  } finally {
    await database.cleanup();
  }
  assert.throws(
    () => loadConfig({ TERN_DATABASE_URL: 'postgres://x@127.0.0.1/db' }),
    (err: unknown) => err instanceof ConfigError && err.setting === 'TERN_SECRET_KEY',
  );
});
