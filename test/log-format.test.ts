// What `tern serve` writes: one format from the first line to the last — human-readable lines on a terminal, JSON
// lines otherwise, TERN_LOG_FORMAT deciding when set — with the demo's keys readable in both.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createOutput, prettyLine } from '../src/log-format.ts';
import { TEST_SECRET_KEY } from './support/server.ts';
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
    assert.match(line, /^\d{2}:\d{2}:\d{2}\.\d{3} WARN  \[smpp\] bind refused  systemId=acme reason="two words" limits=\{"binds":2\}\n {4}Error: boom\n {8}at here\n$/);
    assert.doesNotMatch(line, /pid=|hostname=/);
  });
});

describe('createOutput', () => {
  it('writes JSON lines when not on a terminal, announcements included, whatever the log level', () => {
    const out = new Capture(false);
    const o = createOutput({ logLevel: 'silent', logFormat: null }, out);
    assert.equal(o.format, 'json');
    o.logger.info('not shown at level silent');
    o.announce('demo SMS channel', { type: 'SMS', apiKey: 'tern_x' }, ['  SMS channel, key: tern_x']);
    const lines = out.text.trim().split('\n');
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!);
    assert.equal(record.msg, 'demo SMS channel');
    assert.equal(record.apiKey, 'tern_x');
  });

  it('writes human-readable lines on a terminal, and the announcements as they are', () => {
    const out = new Capture(true);
    const o = createOutput({ logLevel: 'info', logFormat: null }, out);
    assert.equal(o.format, 'pretty');
    o.logger.info({ port: 8080 }, 'listening');
    o.announce('demo SMS channel', { apiKey: 'tern_x' }, ['', '  SMS channel, key: tern_x']);
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

/** Runs `tern serve --demo` until it has printed how to replace a key, and answers what it wrote on stdout. */
async function firstStart(env: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tern-first-start-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--demo'], {
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
    await eventually(() => /credentials/.test(stdout) && /\n$/.test(stdout), 30_000, 'the start-up output');
    return stdout;
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('tern serve --demo output', { timeout: 90_000 }, () => {
  it('is JSON lines, first to last, when stdout is not a terminal, with every key in a record of its own', async () => {
    const text = await firstStart({});
    const records = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const channels = records.filter((r) => typeof r.apiKey === 'string');
    assert.deepEqual(channels.map((r) => r.type), ['SMS', 'RCS', 'VOICE']);
    for (const r of channels) assert.match(String(r.example), new RegExp(`X-Api-Key: ${r.apiKey}`));
    assert.ok(records.some((r) => typeof r.operatorKey === 'string'), 'the operator key made on the first start is printed');
    assert.ok(records.some((r) => /\/admin\/v1\/channels\/[0-9a-f-]+\/credentials/.test(String(r.example ?? ''))));
  });

  it('is human-readable lines with TERN_LOG_FORMAT=pretty', async () => {
    const text = await firstStart({ TERN_LOG_FORMAT: 'pretty' });
    for (const line of text.split('\n')) assert.ok(!line.startsWith('{'), `a JSON line in the pretty output: ${line}`);
    assert.match(text, /^\d{2}:\d{2}:\d{2}\.\d{3} INFO {2}Tern listening on http:\/\/localhost:\d+/m);
    for (const type of ['SMS', 'RCS', 'VOICE']) assert.match(text, new RegExp(`^ {2}${type} channel [0-9a-f-]+, key \\(shown once, keep it\\): tern_`, 'm'));
    assert.match(text, /^Lost a key\? /m);
  });
});
