#!/usr/bin/env node
// The whole suite: typecheck, then every test file under test/ with node's test runner.
//
// The typecheck also writes the sources out as JavaScript (.test-build/, beside copies of src/ and test/), and the
// test files run from there, with no loader: a TypeScript loader's hooks made every process of the suite (a test
// file, one each) spend about 2.5 s more CPU on loading its modules — a third of the suite's CPU on two cores. What
// loads TypeScript at run time still does (worker threads given a .ts module, `tern serve` processes started from
// src/main.ts), from the copied sources. Stack traces point at the TypeScript (source maps).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

const BUILD = '.test-build';

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
const files = only.length > 0 ? only : findTests('test');
for (const f of files) {
  if (!f.endsWith('.ts') || !existsSync(f) || relative('.', f).startsWith('..')) {
    console.error(`not a test file of this repository: ${f}`);
    process.exit(2);
  }
}

rmSync(BUILD, { recursive: true, force: true });
for (const dir of ['src', 'test']) cpSync(dir, join(BUILD, dir), { recursive: true });
// What the sources find next to them by relative path from the repository's root (the console's build).
symlinkSync(join('..', 'console'), join(BUILD, 'console'));

const tsc = spawnSync('npx', ['--no-install', 'tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
if (tsc.status !== 0) {
  console.error('typecheck failed');
  process.exit(tsc.status ?? 1);
}

if (!process.env.TERN_TEST_DATABASE_URL) {
  console.log('*** PostgreSQL: TERN_TEST_DATABASE_URL is not set; the PostgreSQL runs of the integration tests are SKIPPED ***');
} else {
  console.log(`PostgreSQL runs use ${process.env.TERN_TEST_DATABASE_URL.replace(/\/\/[^@]*@/, '//…@')}`);
}

const built = files.map((f) => join(BUILD, relative('.', f)).replace(/\.ts$/, '.js'));
const run = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=3', '--test-timeout=300000', ...built],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
