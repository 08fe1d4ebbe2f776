#!/usr/bin/env node
// The whole suite: typecheck, then every test file under test/ with node's test runner (through tsx).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

if (only.length === 0) {
  const tsc = spawnSync('npx', ['--no-install', 'tsc', '-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.error('typecheck failed');
    process.exit(tsc.status ?? 1);
  }
}

if (!process.env.TERN_TEST_DATABASE_URL) {
  console.log('*** PostgreSQL: TERN_TEST_DATABASE_URL is not set; the PostgreSQL runs of the integration tests are SKIPPED ***');
} else {
  console.log(`PostgreSQL runs use ${process.env.TERN_TEST_DATABASE_URL.replace(/\/\/[^@]*@/, '//…@')}`);
}

const run = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-timeout=300000', ...files],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
