#!/usr/bin/env node
// `npm run build`: the SDK (packages/sdk/dist), which the CLI imports as @tern/sdk, then src/ compiled to dist/
// (tsconfig.build.json) beside the modules that are JavaScript already (the worker threads' entries), then the console
// (console/dist).
//
// `--server`: the SDK and dist/. `--sdk`: the SDK alone. `--if-stale`: each only when a file of its sources (or a
// tsconfig) is newer than its last build, so `npm start` after an edit runs what was edited and costs nothing when
// nothing was.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const args = new Set(process.argv.slice(2));
const STAMP = join('dist', '.tsbuildinfo');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

const newest = (inputs) => Math.max(...inputs.map((f) => statSync(f).mtimeMs));
const newestSource = () => newest([...files('src'), 'tsconfig.json', 'tsconfig.build.json', 'package.json']);

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

// The SDK first: the CLI's compilation reads its declarations, and dist/ imports its JavaScript at run time.
const SDK = join('packages', 'sdk');
const SDK_BUILT = join(SDK, 'dist', 'index.js');
const sdkStale = () =>
  !existsSync(SDK_BUILT) ||
  newest([...files(join(SDK, 'src')), join(SDK, 'tsconfig.json'), join(SDK, 'package.json'), 'tsconfig.json']) > statSync(SDK_BUILT).mtimeMs;
const sdkBuilt = !args.has('--if-stale') || sdkStale();
if (sdkBuilt) {
  // Its JavaScript and declarations, with the generated types beside them.
  run(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', join(SDK, 'tsconfig.json')]);
  copyFileSync(join(SDK, 'src', 'schema.d.ts'), join(SDK, 'dist', 'schema.d.ts'));
  const now = new Date();
  utimesSync(SDK_BUILT, now, now);
}
if (args.has('--sdk')) process.exit(0);

const stale = sdkBuilt || !existsSync(STAMP) || newestSource() > statSync(STAMP).mtimeMs;
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
if (!args.has('--server')) run('npm', ['run', '--silent', 'build:console']);
