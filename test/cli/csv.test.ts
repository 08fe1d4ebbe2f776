// The CLI's CSV files (campaign send, lookup --file): a malformed or unreadable file is wrong usage (2), named with
// its line, before anything is asked of Tern (nothing listens at the URL given here).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { readCsvFile, recipientsOf } from '../../src/cli/csv.ts';
import { run } from '../../src/cli/index.ts';
import { CliError, EXIT, type Io } from '../../src/cli/io.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tern-cli-csv-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function tern(argv: string[]): Promise<{ code: number | 'serving'; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env: { TERN_URL: 'http://127.0.0.1:9', TERN_API_KEY: 'no-tern-here', TERN_PROFILE: join(dir, 'profile.json'), NO_COLOR: '1' },
    readStdin: async () => '',
  };
  return { code: await run(argv, io), out, err };
}

it('reads a file whole: its text, and its records with their lines', () => {
  const path = file('ok.csv', '\uFEFFnumber;text\r\n33612345678;"Hi; you"\r\n\r\n33612345679;"two\nlines"\n');
  const { text, records } = readCsvFile(path);
  assert.ok(text.startsWith('\uFEFFnumber'));
  assert.deepEqual(recipientsOf(records), [
    { line: 2, to: '33612345678', text: 'Hi; you' },
    { line: 4, to: '33612345679', text: 'two\nlines' },
  ]);
});

it('refuses a malformed file or one it cannot read as wrong usage, naming the file and the line', () => {
  const usage = (message: string | RegExp) => (e: unknown) =>
    e instanceof CliError && e.exitCode === EXIT.USAGE && (typeof message === 'string' ? e.message === message : message.test(e.message));
  const open = file('open.csv', 'number,text\n33612345678,ok\n33612345679,"never closed\n');
  assert.throws(() => readCsvFile(open), usage(`${open}: line 3: a quoted field is not closed`));
  const trailing = file('trailing.csv', '33612345678;"a"b\n');
  assert.throws(() => readCsvFile(trailing), usage(`${trailing}: line 1: text after the closing quote of a field`));
  assert.throws(() => readCsvFile(join(dir, 'missing.csv')), usage(/missing\.csv: ENOENT/));
});

it('campaign send and lookup --file stop on a malformed file with exit code 2, before calling Tern', async () => {
  const open = file('campaign.csv', 'number;refClient\n33612345001;a\n33612345002;"b\n');
  const campaign = await tern(['campaign', 'send', open, '--text', 'Sale today']);
  assert.equal(campaign.code, 2, campaign.err);
  assert.match(campaign.err, /campaign\.csv: line 3: a quoted field is not closed/);
  const numbers = file('numbers.csv', 'number\n33612345678\n"336"12345679\n');
  const lookup = await tern(['lookup', '--file', numbers]);
  assert.equal(lookup.code, 2, lookup.err);
  assert.match(lookup.err, /numbers\.csv: line 3: text after the closing quote of a field/);
});
