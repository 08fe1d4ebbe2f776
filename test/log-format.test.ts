// What `tern serve` writes: one format from the first line to the last — human-readable lines on a terminal, JSON
// lines otherwise, TERN_LOG_FORMAT deciding when set — with the demo's keys on a terminal, and in JSON in a file
// readable by its owner only instead of the log.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createOutput, prettyLine } from '../src/log-format.ts';
import { TEST_SECRET_KEY } from './support/server.ts';
import { TERN_MAIN } from './support/process.ts';
import { eventually } from './support/wait.ts';

class Capture extends Writable {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('prettyLine', () => {
  it('writes time, level, component, message and fields on one line, and an error stack indented below', () => {
    const line = prettyLine({
      level: 40,
      time: Date.now(),
      pid: 1,
      hostname: 'h',
      component: 'smpp',
      msg: 'bind refused',
      systemId: 'acme',
      reason: 'two words',
      limits: { binds: 2 },
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' },
    });
    assert.match(
      line,
      /^\d{2}:\d{2}:\d{2}\.\d{3} WARN  \[smpp\] bind refused  systemId=acme reason="two words" limits=\{"binds":2\}\n {4}Error: boom\n {8}at here\n$/,
    );
    assert.doesNotMatch(line, /pid=|hostname=/);
  });
});

describe('createOutput', () => {
  it('writes JSON lines when not on a terminal, announcements included whatever the log level, and keys in a file of their own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tern-keys-'));
    try {
      const out = new Capture(false);
      const o = createOutput({ logLevel: 'silent', logFormat: null }, out);
      assert.equal(o.format, 'json');
      o.logger.info('not shown at level silent');
      o.announce(
        [{ msg: 'demo SMS channel', fields: { type: 'SMS', example: 'X-Api-Key: <key>' }, lines: ['  SMS channel, key: tern_x'], showsKey: true }],
        join(dir, 'data'),
      );
      const records = out.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        records.map((r) => r.msg),
        [records[0]!.msg, 'demo SMS channel'],
      );
      assert.equal(records[1]!.type, 'SMS');
      assert.ok(!out.text.includes('tern_x'), 'the key is not in the log');
      const keysFile = String(records[0]!.keysFile);
      assert.equal(dirname(keysFile), join(dir, 'data'));
      assert.ok(String(records[0]!.msg).includes(keysFile), 'the record names the file');
      assert.equal(statSync(keysFile).mode & 0o777, 0o600, 'readable by its owner only');
      assert.match(readFileSync(keysFile, 'utf8'), /^ {2}SMS channel, key: tern_x$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes no keys file when no key was made, and says so when the file cannot be written, without the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tern-keys-'));
    try {
      const out = new Capture(false);
      const o = createOutput({ logLevel: 'info', logFormat: 'json' }, out);
      o.announce([{ msg: 'demo organisation', fields: { organisationId: 'o1' }, lines: ['Demo organisation o1'], showsKey: false }], join(dir, 'none'));
      assert.equal(JSON.parse(out.text).msg, 'demo organisation');
      assert.equal(existsSync(join(dir, 'none')), false);

      // A file where the directory should be: the keys cannot be written, and are not logged instead.
      writeFileSync(join(dir, 'blocked'), '');
      const failed = new Capture(false);
      createOutput({ logLevel: 'info', logFormat: 'json' }, failed).announce(
        [{ msg: 'operator key created', fields: {}, lines: ['Operator key: tern_admin_secret'], showsKey: true }],
        join(dir, 'blocked', 'data'),
      );
      const records = failed.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(records[0]!.level, 50);
      assert.match(String(records[0]!.msg), /could not be written to a file/);
      assert.ok(!failed.text.includes('tern_admin_secret'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes human-readable lines on a terminal, and the announcements as they are', () => {
    const out = new Capture(true);
    const o = createOutput({ logLevel: 'info', logFormat: null }, out);
    assert.equal(o.format, 'pretty');
    o.logger.info({ port: 8080 }, 'listening');
    o.announce([{ msg: 'demo SMS channel', fields: {}, lines: ['', '  SMS channel, key: tern_x'], showsKey: true }], '/nonexistent');
    const lines = out.text.split('\n');
    assert.match(lines[0]!, /^\d{2}:\d{2}:\d{2}\.\d{3} .*INFO.* listening {2}port=8080$/);
    assert.deepEqual(lines.slice(1), ['', '  SMS channel, key: tern_x', '']);
  });

  it('follows TERN_LOG_FORMAT over the terminal test', () => {
    const tty = new Capture(true);
    createOutput({ logLevel: 'info', logFormat: 'json' }, tty).logger.info('x');
    assert.equal(JSON.parse(tty.text).msg, 'x');
    const pipe = new Capture(false);
    createOutput({ logLevel: 'info', logFormat: 'pretty' }, pipe).logger.info('x');
    assert.match(pipe.text, /^\d{2}:\d{2}:\d{2}\.\d{3} INFO {2}x\n$/);
  });
});

/** Runs `tern serve --demo` until it has printed how to replace a key: what it wrote on stdout, and the keys files it wrote. */
async function firstStart(env: Record<string, string>): Promise<{ stdout: string; keysFiles: Array<{ name: string; mode: number; text: string }> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tern-first-start-'));
  const child = spawn(process.execPath, [TERN_MAIN, 'serve', '--demo'], {
    env: {
      ...process.env,
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: '0',
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: '0',
      TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
      TERN_SECRET_KEY: TEST_SECRET_KEY,
      TERN_ADMIN_KEY: '',
      TERN_LOG_FORMAT: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await eventually(() => /credentials/.test(stdout) && stdout.endsWith('\n'), 30_000, 'the start-up output');
    const keysFiles = readdirSync(dir)
      .filter((name) => name.startsWith('keys-'))
      .map((name) => ({ name, mode: statSync(join(dir, name)).mode & 0o777, text: readFileSync(join(dir, name), 'utf8') }));
    return { stdout, keysFiles };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('tern serve --demo output', { timeout: 90_000 }, () => {
  it('is JSON lines, first to last, when stdout is not a terminal, with no key in them: the keys are in a file readable by its owner only beside the database, which a record names', async () => {
    const { stdout: text, keysFiles } = await firstStart({});
    const records = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const channels = records.filter((r) => typeof r.channelId === 'string' && typeof r.example === 'string');
    assert.deepEqual(
      channels.map((r) => r.type),
      ['SMS', 'RCS', 'VOICE'],
    );
    for (const r of channels) assert.match(String(r.example), /X-Api-Key: <key>/);
    assert.ok(records.some((r) => /\/admin\/v1\/channels\/[0-9a-f-]+\/credentials/.test(String(r.example ?? ''))));

    assert.equal(keysFiles.length, 1, 'one keys file, beside the database');
    const [file] = keysFiles;
    assert.equal(file!.mode, 0o600);
    const named = records.filter((r) => typeof r.keysFile === 'string');
    assert.equal(named.length, 1);
    assert.ok(String(named[0]!.keysFile).endsWith(`/${file!.name}`), 'the record names the file');
    const keys = [...file!.text.matchAll(/\btern_[A-Za-z0-9_-]{20,}/g)].map((m) => m[0]);
    assert.match(file!.text, /^Operator key \(for \/admin\/v1\), shown once, keep it: \S+$/m);
    const operatorKey = /^Operator key .*: (\S+)$/m.exec(file!.text)![1]!;
    for (const type of ['SMS', 'RCS', 'VOICE'])
      assert.match(file!.text, new RegExp(`^ {2}${type} channel [0-9a-f-]+, key \\(shown once, keep it\\): tern_`, 'm'));
    for (const secret of [...keys, operatorKey]) assert.ok(!text.includes(secret), `a key made on the first start is in the log: ${secret.slice(0, 8)}…`);
    assert.ok(keys.length >= 3);
  });

  it('is human-readable lines with TERN_LOG_FORMAT=pretty, the keys shown there and written nowhere else', async () => {
    const { stdout: text, keysFiles } = await firstStart({ TERN_LOG_FORMAT: 'pretty' });
    for (const line of text.split('\n')) assert.ok(!line.startsWith('{'), `a JSON line in the pretty output: ${line}`);
    assert.match(text, /^\d{2}:\d{2}:\d{2}\.\d{3} INFO {2}Tern listening on http:\/\/localhost:\d+/m);
    for (const type of ['SMS', 'RCS', 'VOICE']) assert.match(text, new RegExp(`^ {2}${type} channel [0-9a-f-]+, key \\(shown once, keep it\\): tern_`, 'm'));
    assert.match(text, /^Operator key \(for \/admin\/v1\), shown once, keep it: \S+$/m);
    assert.match(text, /^Lost a key\? /m);
    assert.deepEqual(keysFiles, []);
  });
});
