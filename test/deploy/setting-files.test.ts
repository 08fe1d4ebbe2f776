// TERN_<SETTING>_FILE: a setting's value read from a file (container secrets, systemd credentials).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tern-setting-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: string): string {
  const path = join(dir, `value-${n++}`);
  writeFileSync(path, content);
  return path;
}

const refused = (setting: string, message: RegExp) => (err: unknown) =>
  err instanceof ConfigError && err.setting === setting && message.test(err.message);

describe('settings from files (TERN_*_FILE)', () => {
  test('the file’s content is the value, without the line break that ends it', () => {
    const admin = 'admin-key-from-a-file-0123456789';
    const secret = 's'.repeat(44);
    const config = loadConfig({
      TERN_ADMIN_KEY_FILE: file(`${admin}\n`),
      TERN_SECRET_KEY_FILE: file(`${secret}\r\n`),
      TERN_DATABASE_URL_FILE: file('postgres://tern:p%40ss@db:5432/tern\n'),
    });
    assert.equal(config.adminKey, admin);
    assert.equal(config.secretKey, secret);
    assert.equal(config.databaseUrl, 'postgres://tern:p%40ss@db:5432/tern');
  });

  test('any setting may come from a file, and is checked as the variable is', () => {
    assert.equal(loadConfig({ TERN_HTTP_PORT_FILE: file('9090\n') }).httpPort, 9090);
    assert.equal(loadConfig({ TERN_TRUST_PROXY_FILE: file('yes') }).trustProxy, true);
    assert.throws(() => loadConfig({ TERN_HTTP_PORT_FILE: file('ninety') }), refused('TERN_HTTP_PORT', /integer between 0 and 65535/));
    assert.throws(() => loadConfig({ TERN_ADMIN_KEY_FILE: file('short\n') }), refused('TERN_ADMIN_KEY', /at least 16/));
    assert.throws(() => loadConfig({ TERN_DATABASE_URL_FILE: file('mysql://x') }), refused('TERN_DATABASE_URL', /sqlite:<path> or postgres/));
  });

  test('the file wins over the variable (an image’s default) and over the configuration file', () => {
    const url = 'postgres://tern@db:5432/tern';
    const config = loadConfig({
      TERN_DATABASE_URL: 'sqlite:/var/lib/tern/tern.db',
      TERN_DATABASE_URL_FILE: file(url),
      TERN_SECRET_KEY: 'k'.repeat(40),
      TERN_CONFIG: file(JSON.stringify({ httpPort: 7000, smppPort: 7001 })),
      TERN_HTTP_PORT_FILE: file('7100'),
    });
    assert.equal(config.databaseUrl, url);
    assert.equal(config.httpPort, 7100);
    assert.equal(config.smppPort, 7001, 'what no file names still comes from the configuration file');
  });

  test('a missing, unreadable or empty file stops the start naming the _FILE setting; an empty variable is unset', () => {
    assert.throws(() => loadConfig({ TERN_ADMIN_KEY_FILE: join(dir, 'absent') }), refused('TERN_ADMIN_KEY_FILE', /cannot read .*absent: ENOENT/));
    assert.throws(() => loadConfig({ TERN_ADMIN_KEY_FILE: dir }), refused('TERN_ADMIN_KEY_FILE', /cannot read .*EISDIR/));
    assert.throws(() => loadConfig({ TERN_ADMIN_KEY_FILE: file(' \n') }), refused('TERN_ADMIN_KEY_FILE', /is empty/));
    assert.equal(loadConfig({ TERN_ADMIN_KEY_FILE: '', TERN_ADMIN_KEY: 'a'.repeat(20) }).adminKey, 'a'.repeat(20));
    assert.equal(loadConfig({ TERN_ADMIN_KEY_FILE: '' }).adminKey, null);
  });

  test('a _FILE variable of no setting is ignored like any unknown variable', () => {
    assert.equal(loadConfig({ TERN_NO_SUCH_SETTING_FILE: join(dir, 'absent') }).httpPort, 8080);
  });
});
