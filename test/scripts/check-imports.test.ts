// scripts/check-imports.mjs on small trees of its own: what it must refuse, and what it must let through.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The script beside the compiled tests' tree (.test-build/test/scripts/ → scripts/). */
const SCRIPT = fileURLToPath(new URL('../../../scripts/check-imports.mjs', import.meta.url));

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A tree of src/ files (path → text), checked; its exit code and what it printed. */
function check(files: Record<string, string>): { status: number | null; out: string; err: string } {
  const root = mkdtempSync(join(tmpdir(), 'tern-imports-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, 'src', path)), { recursive: true });
    writeFileSync(join(root, 'src', path), text);
  }
  const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** Imports pointing down the layers, as the layout wants them. */
const LAYERED = {
  'domain/money.ts': 'export const cents = (n: number) => n * 100;\n',
  'store/ledger.ts': "import { cents } from '../domain/money.ts';\nexport const row = cents(1);\n",
  'core/funds.ts': "import { row } from '../store/ledger.ts';\nimport type { Metrics } from '../metrics.ts';\nexport const funds = row;\n",
  'metrics.ts': 'export interface Metrics { n: number }\n',
  'doors/rest/funds.ts': "import { funds } from '../../core/funds.ts';\nexport const answer = funds;\n",
  'app/index.ts': "import { answer } from '../doors/rest/funds.ts';\nimport { row } from '../store/ledger.ts';\nexport const app = answer + row;\n",
  'cli/index.ts': "export async function main() {\n  const { app } = await import('../app/index.ts');\n  return app;\n}\n",
  'main.ts': "import { main } from './cli/index.ts';\nvoid main();\n",
};

describe('scripts/check-imports.mjs', () => {
  test('a tree whose imports point down the layers passes', () => {
    const r = check(LAYERED);
    assert.equal(r.status, 0, r.err);
    assert.match(r.out, /8 files of src\/, 8 imports between them: no circle, none against the layers/);
  });

  test('the store importing the core is an import against the layers', () => {
    const r = check({
      ...LAYERED,
      'store/ledger.ts': "import { cents } from '../domain/money.ts';\nimport type { funds } from '../core/funds.ts';\nexport const row = cents(1);\n",
    });
    assert.equal(r.status, 1);
    assert.match(r.err, /src\/store\/ledger\.ts -> src\/core\/funds\.ts: store may not import core \(it may import domain, basics\)/);
  });

  test('a door reaching past the core into the store is refused', () => {
    const r = check({ ...LAYERED, 'doors/rest/funds.ts': "import { row } from '../../store/ledger.ts';\nexport const answer = row;\n" });
    assert.equal(r.status, 1);
    assert.match(r.err, /src\/doors\/rest\/funds\.ts -> src\/store\/ledger\.ts: doors may not import store/);
  });

  test('the pure rules import nothing of ours', () => {
    const r = check({ ...LAYERED, 'domain/money.ts': "import type { Metrics } from '../metrics.ts';\nexport const cents = (n: number) => n * 100;\n" });
    assert.equal(r.status, 1);
    assert.match(r.err, /domain may not import metrics \(it may import nothing of ours\)/);
  });

  test('a circle of type imports inside one room is refused, naming its files', () => {
    const r = check({
      ...LAYERED,
      'core/campaigns.ts': "import type { Sms } from './sms.ts';\nexport interface Campaign { sms: Sms }\n",
      'core/sms.ts': "import type {\n  Campaign,\n} from './campaigns.ts';\nexport interface Sms { campaign?: Campaign }\n",
    });
    assert.equal(r.status, 1);
    assert.match(r.err, /^import circle: src\/core\/campaigns\.ts, src\/core\/sms\.ts$/m);
  });

  test('dynamic imports and re-exports count', () => {
    const dynamic = check({ ...LAYERED, 'store/ledger.ts': "export async function row() {\n  return (await import('../core/funds.ts')).funds;\n}\n" });
    assert.equal(dynamic.status, 1);
    assert.match(dynamic.err, /store may not import core/);
    const reexport = check({ ...LAYERED, 'store/ledger.ts': "export { funds as row } from '../core/funds.ts';\n" });
    assert.equal(reexport.status, 1);
    assert.match(reexport.err, /store may not import core/);
  });

  test('only the CLI may import the SDK (@tern/sdk)', () => {
    const cli = check({ ...LAYERED, 'cli/client.ts': "import { sendWithRetries } from '@tern/sdk';\nexport const send = sendWithRetries;\n" });
    assert.equal(cli.status, 0, cli.err);
    const door = check({
      ...LAYERED,
      'doors/rest/funds.ts': "import { funds } from '../../core/funds.ts';\nimport type { Tern } from '@tern/sdk';\nexport const answer = funds;\n",
    });
    assert.equal(door.status, 1);
    assert.match(door.err, /^src\/doors\/rest\/funds\.ts: imports @tern\/sdk, which only cli may import$/m);
  });

  test('a path built from strings is not an import', () => {
    const r = check({
      ...LAYERED,
      'store/ledger.ts': "import { join } from 'node:path';\nexport const row = 1;\nexport const DIST = join('..', '..', 'core', 'funds.ts');\n",
    });
    assert.equal(r.status, 0, r.err);
  });

  test('a file in no room, and an import of a file that is not there, are reported', () => {
    const r = check({
      ...LAYERED,
      'tools/extra.ts': 'export const x = 1;\n',
      'core/funds.ts': "import { row } from '../store/gone.ts';\nexport const funds = row;\n",
    });
    assert.equal(r.status, 1);
    assert.match(r.err, /src\/tools\/extra\.ts: in no room/);
    assert.match(r.err, /src\/core\/funds\.ts: imports \.\.\/store\/gone\.ts, which is no file/);
  });

  test('the console (a browser build) may import the pure rules of src/, and nothing else outside its folder', () => {
    // Paths are under src/; `../console/src/` is the console's folder beside it.
    const page = "import { cents } from '../../../src/domain/money.ts';\nimport { ui } from '../ui.ts';\nexport const p = cents(ui);\n";
    const withConsole = { ...LAYERED, '../console/src/ui.ts': 'export const ui = 1;\n', '../console/src/pages/funds.ts': page };
    const ok = check(withConsole);
    assert.equal(ok.status, 0, ok.err);
    assert.match(ok.out, /console\/src\/: 1 import\(s\) of src\/domain\/, none of anything else outside it/);
    const core = check({ ...withConsole, '../console/src/pages/funds.ts': `${page}import { funds } from '../../../src/core/funds.ts';\n` });
    assert.equal(core.status, 1);
    assert.match(
      core.err,
      /^console\/src\/pages\/funds\.ts: imports \.\.\/\.\.\/\.\.\/src\/core\/funds\.ts; of what lies outside console\/src\/, the console may import only src\/domain\/$/m,
    );
    const gone = check({ ...withConsole, '../console/src/pages/funds.ts': "import { x } from '../../../src/domain/gone.ts';\nexport const p = x;\n" });
    assert.equal(gone.status, 1);
    assert.match(gone.err, /console\/src\/pages\/funds\.ts: imports \.\.\/\.\.\/\.\.\/src\/domain\/gone\.ts/);
  });
});
