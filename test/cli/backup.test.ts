// tern backup and tern restore: a SQLite database copied while a real Tern takes sends over HTTP, put back into a
// fresh directory, checked, and every message acknowledged before the backup began found in it; what they refuse;
// and, on PostgreSQL, the pg_dump and pg_restore commands they print, run for real.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { pgCommands } from '../../src/cli/commands/backup.ts';
import { run } from '../../src/cli/index.ts';
import type { Io } from '../../src/cli/io.ts';
import { openStore } from '../../src/store/db.ts';
import { freePort, startTernProcess, TERN_MAIN, type TernProcess } from '../support/process.ts';
import { createTenant, request, startTestServer, type Tenant } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;

async function tern(env: NodeJS.ProcessEnv, argv: string[]) {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env,
    readStdin: async () => '',
  };
  const code = await run(argv, io);
  return { code, out, err, json: () => JSON.parse(out) };
}

/** No file but those named: a refused restore leaves nothing behind, not even its partial copy. */
function assertOnly(dir: string, names: string[]): void {
  assert.deepEqual(existsSync(dir) ? readdirSync(dir).sort() : [], [...names].sort(), `${dir} holds only ${names.join(', ') || 'nothing'}`);
}

describe('tern backup and restore [sqlite]', () => {
  let dir: string;
  let node: TernProcess;
  let tenant: Tenant;
  let liveUrl: string;
  /** A backup made before the tests of refusals, and its key. */
  let backupFile: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tern-backup-'));
    liveUrl = `sqlite:${join(dir, 'live', 'tern.db')}`;
    // No TERN_SECRET_KEY: the node keeps its key in secret.key beside the database, which the backup must carry.
    node = await startTernProcess(liveUrl, await freePort(), { TERN_SECRET_KEY: '' }, 180_000);
    tenant = await createTenant(node, { balance: 100_000 });
  });
  after(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up under send load, restores into a fresh directory, and keeps every message acknowledged before', async () => {
    const secret = await request(node, 'GET', `/commons/v1/channels/${tenant.channelId}/webhook-secret`, { key: tenant.key });
    assert.equal(secret.status, 200, secret.text);

    // Eight clients send without pause; each 201 is noted with when it arrived.
    const acked: Array<{ id: string; at: number }> = [];
    const refused: string[] = [];
    let sending = true;
    const senders = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; sending; i++) {
        const res = await request(node, 'POST', '/sms/v1/messages', {
          key: tenant.key,
          body: { recipient: { to: `3361${w}${String(i).padStart(6, '0')}` }, body: { text: `load ${w}/${i}` } },
        });
        if (res.status === 201) acked.push({ id: res.body.messageId, at: performance.now() });
        else refused.push(`${res.status} ${res.text}`);
      }
    });
    await eventually(() => acked.length >= 1500 || refused.length > 0, 120_000, '1,500 messages sent');

    // Acknowledged before the backup began: every one must be in it.
    const beforeBackup = acked.map((a) => a.id);
    backupFile = join(dir, 'backups', 'tern.db');
    mkdirSync(join(dir, 'backups'));
    const began = performance.now();
    const { stdout } = await promisify(execFile)(process.execPath, [TERN_MAIN, 'backup', backupFile, '--with-key', '--json'], {
      env: { ...process.env, TERN_DATABASE_URL: liveUrl, TERN_SECRET_KEY: '' },
    });
    const ended = performance.now();
    const duringBackup = acked.filter((a) => a.at > began && a.at < ended).length;
    const sentBeforeEnd = acked.filter((a) => a.at < ended).length;
    sending = false;
    await Promise.all(senders);
    assert.deepEqual(refused, []);
    assert.ok(duringBackup > 0, 'sends were acknowledged while tern backup ran');

    const report = JSON.parse(stdout);
    assert.equal(report.file, backupFile);
    assert.equal(report.integrity, 'ok');
    assert.equal(report.key.source, 'file');
    assert.equal(report.key.copy, `${backupFile}.secret.key`);
    assert.equal(statSync(backupFile).mode & 0o777, 0o600, 'the backup is readable by its owner only');
    assert.equal(statSync(`${backupFile}.secret.key`).mode & 0o777, 0o600, 'the key copy is readable by its owner only');
    assert.equal(readFileSync(`${backupFile}.secret.key`, 'utf8'), readFileSync(join(dir, 'live', 'secret.key'), 'utf8'));
    assertOnly(join(dir, 'backups'), ['tern.db', 'tern.db.secret.key']);

    // Into a fresh directory, with the key found beside the backup.
    const restoredUrl = `sqlite:${join(dir, 'restored', 'tern.db')}`;
    const restored = await tern({ TERN_DATABASE_URL: restoredUrl }, ['restore', backupFile]);
    assert.equal(restored.code, 0, restored.err);
    assert.match(restored.out, /^Restored .*integrity ok\.$/m);
    assert.match(restored.out, /^Key: .*tern\.db\.secret\.key put in place as .*restored\/secret\.key/m);
    assertOnly(join(dir, 'restored'), ['secret.key', 'tern.db']);
    assert.equal(statSync(join(dir, 'restored', 'secret.key')).mode & 0o777, 0o600);

    const db = new SQLite(join(dir, 'restored', 'tern.db'), { readonly: true });
    let stored: Set<string>;
    try {
      assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      stored = new Set((db.prepare('select id from messages').all() as Array<{ id: string }>).map((r) => r.id));
    } finally {
      db.close();
    }
    const missing = beforeBackup.filter((id) => !stored.has(id));
    assert.deepEqual(missing, [], `${missing.length} of the ${beforeBackup.length} messages acknowledged before the backup are missing`);
    assert.ok(stored.size <= sentBeforeEnd + 8, 'nothing in the backup that was not sent before it ended');
    process.stdout.write(
      `# backup of ${report.bytes} bytes in ${report.seconds} s (copy and check), ${((ended - began) / 1000).toFixed(1)} s for the command; ` +
        `${beforeBackup.length} acknowledged before it, ${duringBackup} while it ran, ${stored.size} in the backup\n`,
    );

    // A Tern started on it serves the messages, and opens the secrets sealed with the key that came with it.
    const back = await startTernProcess(restoredUrl, await freePort(), { TERN_SECRET_KEY: '' }, 180_000);
    try {
      const message = await request(back, 'GET', `/sms/v1/messages/${beforeBackup.at(-1)}`, { key: tenant.key });
      assert.equal(message.status, 200, message.text);
      const reopened = await request(back, 'GET', `/commons/v1/channels/${tenant.channelId}/webhook-secret`, { key: tenant.key });
      assert.equal(reopened.status, 200, reopened.text);
      assert.equal(reopened.body.secret, secret.body.secret);
    } finally {
      await back.stop();
    }
  });

  it('refuses to overwrite a file, or the database itself, and backs up only a database that is there', async () => {
    const env = { TERN_DATABASE_URL: liveUrl };
    const target = join(dir, 'backups', 'again.db');
    writeFileSync(target, 'keep me');
    const refused = await tern(env, ['backup', target]);
    assert.equal(refused.code, 5);
    assert.match(refused.err, /again\.db exists: choose another name, or --force to replace it/);
    assert.equal(readFileSync(target, 'utf8'), 'keep me');

    const forced = await tern(env, ['backup', target, '--force']);
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.out, /^Key: .*live\/secret\.key\. Keep a copy with the backup \(--with-key writes one beside it\)\.$/m);
    const copy = new SQLite(target, { readonly: true });
    assert.deepEqual(copy.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'a backup is one file, with no log');
    copy.close();

    // Nor is a key copy: refused before anything is written.
    const keyed = join(dir, 'backups', 'keyed.db');
    writeFileSync(`${keyed}.secret.key`, 'not this one');
    const keyKept = await tern(env, ['backup', keyed, '--with-key']);
    assert.equal(keyKept.code, 5);
    assert.match(keyKept.err, /keyed\.db\.secret\.key exists/);
    assert.equal(readFileSync(`${keyed}.secret.key`, 'utf8'), 'not this one');
    assert.equal(existsSync(keyed), false);

    const itself = await tern(env, ['backup', join(dir, 'live', 'tern.db'), '--force']);
    assert.equal(itself.code, 2);
    assert.match(itself.err, /is the database itself/);
    assert.equal((await tern(env, ['backup', join(dir, 'live', 'tern.db-wal'), '--force'])).code, 2);

    const nowhere = await tern({ TERN_DATABASE_URL: `sqlite:${join(dir, 'none', 'tern.db')}` }, ['backup', join(dir, 'backups', 'x.db')]);
    assert.equal(nowhere.code, 4);
    assert.match(nowhere.err, /no database at /);
    assert.equal(existsSync(join(dir, 'none')), false, 'nothing is created');
    const noFolder = await tern(env, ['backup', join(dir, 'no-such-folder', 'x.db')]);
    assert.equal(noFolder.code, 4);
    assert.match(noFolder.err, /the folder .*no-such-folder does not exist/);
    assertOnly(join(dir, 'backups'), ['again.db', 'keyed.db.secret.key', 'tern.db', 'tern.db.secret.key']);
  });

  it('restores only into an empty data directory, and only a whole database of Tern', async () => {
    const target = join(dir, 'target');
    const env = { TERN_DATABASE_URL: `sqlite:${join(target, 'tern.db')}` };
    // Not empty: the database, or what SQLite leaves beside one.
    for (const present of ['tern.db', 'tern.db-wal', 'tern.db-shm']) {
      mkdirSync(target, { recursive: true });
      writeFileSync(join(target, present), 'something');
      const r = await tern(env, ['restore', backupFile]);
      assert.equal(r.code, 5, present);
      assert.match(r.err, new RegExp(`the data directory is not empty: .*${present.replace('.', '\\.')}`));
      assertOnly(target, [present]);
      rmSync(target, { recursive: true });
    }

    const bad = join(dir, 'bad');
    mkdirSync(bad);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['text.db', Buffer.from('a backup, honest\n'.repeat(100)), /is not a SQLite database/],
      ['empty.db', Buffer.alloc(0), /is not a SQLite database/],
      ['half.db', readFileSync(backupFile).subarray(0, Math.floor(statSync(backupFile).size / 2)), /is truncated: \d+ bytes of the \d+ its header declares/],
      ['damaged.db', damaged(readFileSync(backupFile)), /damaged \(PRAGMA integrity_check\)|not a whole SQLite database/],
      ['other.db', otherDatabase(join(bad, 'other-source.db')), /not a database of Tern: it has no migrations table/],
    ];
    for (const [name, content, why] of cases) {
      writeFileSync(join(bad, name), content);
      const r = await tern(env, ['restore', join(bad, name)]);
      assert.equal(r.code, 1, `${name}: ${r.err}`);
      assert.match(r.err, why, name);
      assertOnly(target, []);
    }

    // A copy of a live database beside its log.
    copyFileSync(backupFile, join(bad, 'live.db'));
    writeFileSync(join(bad, 'live.db-wal'), '');
    const live = await tern(env, ['restore', join(bad, 'live.db')]);
    assert.equal(live.code, 1);
    assert.match(live.err, /live\.db-wal lies beside .*make a backup with tern backup/);

    const absent = await tern(env, ['restore', join(bad, 'absent.db')]);
    assert.equal(absent.code, 4);
    assertOnly(target, []);
  });

  it('puts the key in place only when it fits: refuses a different key file or TERN_SECRET_KEY, reminds when there is none', async () => {
    const target = join(dir, 'keyed');
    const env = { TERN_DATABASE_URL: `sqlite:${join(target, 'tern.db')}` };
    mkdirSync(target);
    writeFileSync(join(target, 'secret.key'), 'another key\n');
    const other = await tern(env, ['restore', backupFile]);
    assert.equal(other.code, 5);
    assert.match(other.err, /secret\.key exists and is not the backup's key/);
    assertOnly(target, ['secret.key']);

    const envKey = await tern({ ...env, TERN_SECRET_KEY: 'k'.repeat(40) }, ['restore', backupFile]);
    assert.equal(envKey.code, 5);
    assert.match(envKey.err, /is not the key TERN_SECRET_KEY gives/);
    assertOnly(target, ['secret.key']);

    const noKeyFile = await tern(env, ['restore', backupFile, '--key', join(dir, 'no.key')]);
    assert.equal(noKeyFile.code, 4);
    rmSync(target, { recursive: true });

    // A backup without its key: restored, with what to do about the key.
    const alone = join(dir, 'alone.db');
    copyFileSync(backupFile, alone);
    const r = await tern(env, ['restore', alone]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Key: none\. Put the key file of the Tern that made the backup at .*keyed\/secret\.key before starting Tern/m);
    assertOnly(target, ['tern.db']);
  });

  it('with TERN_SECRET_KEY, --with-key writes its value, and a restore under the same value takes the backup', async () => {
    const key = 'e'.repeat(40);
    const file = join(dir, 'backups', 'env-key.db');
    const made = await tern({ TERN_DATABASE_URL: liveUrl, TERN_SECRET_KEY: key }, ['backup', file, '--with-key']);
    assert.equal(made.code, 0, made.err);
    assert.match(made.out, /^Key: written to .*env-key\.db\.secret\.key \(readable by its owner only\)/m);
    assert.equal(readFileSync(`${file}.secret.key`, 'utf8'), `${key}\n`);
    const target = join(dir, 'env-restored');
    const restored = await tern({ TERN_DATABASE_URL: `sqlite:${join(target, 'tern.db')}`, TERN_SECRET_KEY: key }, ['restore', file, '--json']);
    assert.equal(restored.code, 0, restored.err);
    const report = restored.json();
    assert.equal(report.integrity, 'ok');
    assert.deepEqual(report.key, { source: 'TERN_SECRET_KEY', written: false });
    assert.equal(report.migrations.unknown.length, 0);
    assertOnly(target, ['tern.db']);
  });

  it('on PostgreSQL, prints the pg_dump and pg_restore commands and exits with a usage error', async () => {
    const env = { TERN_DATABASE_URL: 'postgres://tern:s3cr%40t@db.example:5433/ternprod?schema=tern&pool=20&sslmode=require', TERN_SECRET_KEY: 'k'.repeat(40) };
    const b = await tern(env, ['backup', '/backups/tern.dump']);
    assert.equal(b.code, 2);
    assert.match(
      b.err,
      /^ {2}PGPASSWORD='…' pg_dump --format=custom --schema=tern --host=db\.example --port=5433 --username=tern --dbname='dbname=ternprod sslmode=require' --file=\/backups\/tern\.dump$/m,
    );
    assert.match(b.err, /keep TERN_SECRET_KEY with the dump/);
    const r = await tern(env, ['restore', '/backups/tern.dump']);
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      /^ {2}PGPASSWORD='…' pg_restore --exit-on-error --single-transaction --no-owner --host=db\.example --port=5433 --username=tern --dbname='dbname=ternprod sslmode=require' \/backups\/tern\.dump$/m,
    );
    for (const out of [b.err, r.err, b.out, r.out]) assert.doesNotMatch(out, /s3cr/, 'the password is never written');
  });
});

/** The backup with a page in its middle overwritten. */
function damaged(content: Buffer): Buffer {
  const copy = Buffer.from(content);
  const pageSize = copy.readUInt16BE(16);
  const page = Math.floor(copy.length / pageSize / 2);
  copy.fill(0xa5, page * pageSize, (page + 1) * pageSize);
  return copy;
}

/** A SQLite database that is not Tern's. */
function otherDatabase(path: string): Buffer {
  const db = new SQLite(path);
  db.exec('create table notes (id integer primary key, text text)');
  db.close();
  return readFileSync(path);
}

describe('tern backup and restore [postgres]', { skip: PG_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' }, () => {
  it('the pg_dump and pg_restore commands it prints copy a database with its messages', async (t) => {
    if (spawnSync('pg_dump', ['--version']).status !== 0 || spawnSync('pg_restore', ['--version']).status !== 0) {
      t.skip('pg_dump and pg_restore are not installed (Debian: postgresql-client)');
      return;
    }
    const server = await startTestServer('postgres');
    const copyDb = `tern_restore_${randomBytes(4).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'tern-pgdump-'));
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const tenant = await createTenant(server, { balance: 10 });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const sent = await request(server, 'POST', '/sms/v1/messages', {
          key: tenant.key,
          body: { recipient: { to: `3361234500${i}` }, body: { text: `dump ${i}` } },
        });
        assert.equal(sent.status, 201, sent.text);
        ids.push(sent.body.messageId);
      }
      const sourceUrl = server.app.config.databaseUrl;
      const file = join(dir, 'tern.dump');
      const printed = await tern({ TERN_DATABASE_URL: sourceUrl, TERN_SECRET_KEY: 'k'.repeat(40) }, ['backup', file]);
      const { dump } = pgCommands(sourceUrl, file);
      assert.ok(printed.err.includes(`  ${dump}\n`), printed.err);
      const dumped = spawnSync('sh', ['-c', dump], { encoding: 'utf8' });
      assert.equal(dumped.status, 0, dumped.stderr);

      await admin.query(`create database ${copyDb}`);
      const copyUrl = new URL(sourceUrl);
      copyUrl.pathname = `/${copyDb}`;
      const restoreCmd = pgCommands(copyUrl.toString(), file).restore;
      const printedRestore = await tern({ TERN_DATABASE_URL: copyUrl.toString(), TERN_SECRET_KEY: 'k'.repeat(40) }, ['restore', file]);
      assert.ok(printedRestore.err.includes(`  ${restoreCmd}\n`), printedRestore.err);
      const restored = spawnSync('sh', ['-c', restoreCmd], { encoding: 'utf8' });
      assert.equal(restored.status, 0, restored.stderr);

      const store = await openStore(copyUrl.toString(), 'restored', { migrate: false });
      try {
        assert.equal(store.schemaLevel.pending, 0);
        const rows = await store.db.selectFrom('messages').select('id').execute();
        assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(ids));
      } finally {
        await store.close();
      }
    } finally {
      await server.stop();
      await admin.query(`drop database if exists ${copyDb} with (force)`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
