// What `tern` does at a terminal: the key read unseen to Enter, and completion scripts that complete.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../../src/cli/index.ts';
import { CliError, type Io, type KeyInput, readHiddenLine } from '../../src/cli/io.ts';

/** A terminal that types `chunks` once reading starts, and records raw mode. */
function terminal(chunks: string[]): KeyInput & { raw: boolean[] } {
  const events = new EventEmitter();
  const raw: boolean[] = [];
  return {
    raw,
    on: (e, l) => events.on(e, l),
    off: (e, l) => events.off(e, l),
    setRawMode: (r: boolean) => raw.push(r),
    resume: () => setImmediate(() => chunks.forEach((c) => events.emit('data', Buffer.from(c)))),
    pause: () => undefined,
  };
}

test('a key typed at the terminal: nothing echoed, Enter ends it, Backspace takes back, raw mode undone', async () => {
  let shown = '';
  const input = terminal(['tern_', 'abc', 'x\u007f', 'déf\r', 'after']);
  const key = await readHiddenLine(input, (s) => (shown += s), 'API key: ');
  assert.equal(key, 'tern_abcdéf');
  assert.equal(shown, 'API key: \n');
  assert.deepEqual(input.raw, [true, false]);
  // A pasted key with its line break, in one chunk; Ctrl-D on an empty line ends it empty; Ctrl-C cancels.
  assert.equal(await readHiddenLine(terminal(['pasted-key\n']), () => undefined, ''), 'pasted-key');
  assert.equal(await readHiddenLine(terminal(['\u0004']), () => undefined, ''), '');
  await assert.rejects(
    readHiddenLine(terminal(['ab\u0003']), () => undefined, ''),
    (e: unknown) => e instanceof CliError && e.exitCode === 130,
  );
});

async function tern(argv: string[]): Promise<{ code: number | 'serving'; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {}, readStdin: async () => '' };
  return { code: await run(argv, io), out, err };
}

test('--version prints the version', async () => {
  const r = await tern(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.out, /^\d+\.\d+\.\d+/);
});

test('completion: bash completes commands, subcommands and options from the command tree', async () => {
  const script = await tern(['completion', 'bash']);
  assert.equal(script.code, 0, script.err);
  const dir = mkdtempSync(join(tmpdir(), 'tern-completion-'));
  try {
    const file = join(dir, 'tern.bash');
    writeFileSync(file, script.out);
    const complete = (...words: string[]) => {
      const line = ['tern', ...words];
      const r = spawnSync(
        'bash',
        ['-c', `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _tern; printf '%s\\n' "\${COMPREPLY[@]}"`, 'x', file, ...line],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    assert.ok(complete('').includes('campaign'));
    assert.ok(complete('').includes('--output'));
    assert.deepEqual(complete('cam'), ['campaign']);
    assert.deepEqual(complete('campaign', ''), ['--help', 'send']);
    assert.ok(complete('campaign', 'send', 'file.csv', '--').includes('--concurrency'));
    assert.deepEqual(complete('--url', 'http://x', 'admin', 'rou'), ['routes']);
    assert.ok(complete('admin', 'routes', '').includes('list'));
    assert.deepEqual(complete('completion', '--h'), ['--help']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('completion: zsh and fish scripts name every command; an unknown shell is wrong usage', async () => {
  const zsh = await tern(['completion', 'zsh']);
  assert.equal(zsh.code, 0);
  assert.match(zsh.out, /^#compdef tern/);
  assert.match(zsh.out, /bashcompinit/);
  const fish = await tern(['completion', 'fish']);
  assert.equal(fish.code, 0);
  const lines = fish.out.split('\n');
  for (const expected of [
    String.raw`complete -c tern -n '__tern_at \'campaign\'' -a 'send' -d `,
    String.raw`complete -c tern -n '__tern_at \'campaign send\'' -l concurrency -d `,
    String.raw`complete -c tern -n '__tern_at \'\'' -a 'lookup' -d `,
  ]) {
    assert.ok(
      lines.some((l) => l.startsWith(expected)),
      expected,
    );
  }
  assert.equal((await tern(['completion', 'powershell'])).code, 2);
  // bash reads the bash script without error.
  const check = spawnSync('bash', ['-n'], { input: (await tern(['completion', 'bash'])).out, encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});
