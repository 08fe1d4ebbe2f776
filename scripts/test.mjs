#!/usr/bin/env node
// The whole suite: the import check, the format check, the typecheck and the lint, then every test file under test/
// with node's test runner.
//
// The typecheck also writes the sources out as JavaScript (.test-build/, beside copies of src/ and test/), and the
// test files run from there, with no loader: a TypeScript loader's hooks made every process of the suite (a test
// file, one each) spend about 2.5 s more CPU on loading its modules — a third of the suite's CPU on two cores. What
// loads TypeScript at run time still does (worker threads given a .ts module, `tern serve` processes started from
// src/main.ts), from the copied sources. Stack traces point at the TypeScript (source maps).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

const BUILD = '.test-build';
console.log(`Node ${process.version} (${process.execPath})`);

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out.sort();
}

const only = process.argv.slice(2);
// The Patroni failover drill starts two PostgreSQL servers, etcd, HAProxy and two Tern nodes: it goes last, so that
// the cluster drills do not share the two cores with it.
const LAST = /patroni-failover\.test\.ts$/;
const files = only.length > 0 ? only : findTests('test').sort((a, b) => Number(LAST.test(a)) - Number(LAST.test(b)));
for (const f of files) {
  if (!f.endsWith('.ts') || !existsSync(f) || relative('.', f).startsWith('..')) {
    console.error(`not a test file of this repository: ${f}`);
    process.exit(2);
  }
}

// The layout first (scripts/check-imports.mjs): an import circle, or one against the layers, fails in a second.
const imports = spawnSync(process.execPath, ['scripts/check-imports.mjs'], { stdio: 'inherit' });
if (imports.status !== 0) {
  console.error('import check failed');
  process.exit(imports.status ?? 1);
}

// Then the formatting (.oxfmtrc.json), in a fraction of a second: `npm run format` rewrites what it lists.
const format = spawnSync(process.execPath, ['node_modules/oxfmt/bin/oxfmt', '--check'], { stdio: 'inherit' });
if (format.status !== 0) {
  console.error('format check failed: run `npm run format`');
  process.exit(format.status ?? 1);
}

// The SDK's build (packages/sdk/dist), when its sources are newer: the CLI imports it as @tern/sdk, its declarations
// for the typecheck and its JavaScript at run time.
const sdk = spawnSync(process.execPath, ['scripts/build.mjs', '--sdk', '--if-stale'], { stdio: 'inherit' });
if (sdk.status !== 0) {
  console.error('the SDK’s build failed');
  process.exit(sdk.status ?? 1);
}

rmSync(BUILD, { recursive: true, force: true });
for (const dir of ['src', 'test']) cpSync(dir, join(BUILD, dir), { recursive: true });
// What the sources find next to them by relative path from the repository's root (the console's build).
symlinkSync(join('..', 'console'), join(BUILD, 'console'));

// The lint of the whole tree (.oxlintrc.json: a floating promise, an unused import…) runs beside the typecheck: each
// reads the whole program. What it finds is printed after the typecheck's own; `npm run lint` says the same.
const lint = spawn(process.execPath, ['node_modules/oxlint/bin/oxlint'], { stdio: ['ignore', 'pipe', 'pipe'] });
const lintOutput = [];
lint.stdout.on('data', (chunk) => lintOutput.push(chunk));
lint.stderr.on('data', (chunk) => lintOutput.push(chunk));
const exitOf = (child) => new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
const tsc = spawn('npx', ['--no-install', 'tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
const [tscStatus, lintStatus] = await Promise.all([exitOf(tsc), exitOf(lint)]);
process.stdout.write(Buffer.concat(lintOutput));
if (tscStatus !== 0 || lintStatus !== 0) {
  console.error(tscStatus !== 0 ? 'typecheck failed' : 'lint failed');
  process.exit(tscStatus !== 0 ? tscStatus : lintStatus);
}

if (!process.env.TERN_TEST_DATABASE_URL) {
  console.log('*** PostgreSQL: TERN_TEST_DATABASE_URL is not set; the PostgreSQL runs of the integration tests are SKIPPED ***');
} else {
  console.log(`PostgreSQL runs use ${process.env.TERN_TEST_DATABASE_URL.replace(/\/\/[^@]*@/, '//…@')}`);
}

const built = files.map((f) => join(BUILD, relative('.', f)).replace(/\.ts$/, '.js'));
const run = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-concurrency=3', '--test-timeout=300000', ...built], { stdio: 'inherit' });
process.exit(run.status ?? 1);
