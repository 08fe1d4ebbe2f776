#!/usr/bin/env node
// `npm run build`: src/ compiled to dist/ (tsconfig.build.json) beside the modules that are JavaScript already (the
// worker threads' entries), then the SDK (packages/sdk/dist) and the console (console/dist).
//
// `--server`: only dist/. `--if-stale`: only when a file of src/ (or a tsconfig) is newer than the last build, so
// `npm start` after an edit runs what was edited and costs nothing when nothing was.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const args = new Set(process.argv.slice(2));
const STAMP = join('dist', '.tsbuildinfo');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

function newestSource() {
  const inputs = [...files('src'), 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
  return Math.max(...inputs.map((f) => statSync(f).mtimeMs));
}

function run(command, commandArgs) {
  const r = spawnSync(command, commandArgs, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// An install without the development dependencies (`npm ci --omit=dev` on a built tree, as production does) has no
// compiler: it keeps the build it has, and says so when there is none.
if (!existsSync(join('node_modules', 'typescript', 'bin', 'tsc'))) {
  if (existsSync(join('dist', 'main.js'))) {
    console.error('build: the development dependencies are not installed; dist/ is kept as it is');
    process.exit(0);
  }
  console.error('build: no dist/ and no compiler: run `npm ci` (with the development dependencies), then `npm run build`');
  process.exit(1);
}

const stale = !existsSync(STAMP) || newestSource() > statSync(STAMP).mtimeMs;
if (!args.has('--if-stale') || stale) {
  run(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  for (const f of files('src').filter((f) => f.endsWith('.mjs') || f.endsWith('.json'))) {
    const to = join('dist', relative('src', f));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(f, to);
  }
  const now = new Date();
  utimesSync(STAMP, now, now);
}
if (!args.has('--server')) {
  // The SDK (packages/sdk/dist): its JavaScript and declarations, with the generated types beside them. The container
  // image's build has only what the server needs (.dockerignore), and no SDK to build.
  const sdk = join('packages', 'sdk');
  if (existsSync(join(sdk, 'tsconfig.json'))) {
    run(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', join(sdk, 'tsconfig.json')]);
    copyFileSync(join(sdk, 'src', 'schema.d.ts'), join(sdk, 'dist', 'schema.d.ts'));
  }
  run('npm', ['run', '--silent', 'build:console']);
}
