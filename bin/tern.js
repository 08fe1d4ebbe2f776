#!/usr/bin/env node
// `tern`: the compiled build (dist/, made by `npm run build`, and by `npm ci` through `prepare`); in a checkout
// without one, the sources through the TypeScript loader of the development dependencies.
import { existsSync } from 'node:fs';

const built = new URL('../dist/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api').catch(() => {
    console.error('tern: no build in dist/ (run `npm run build`)');
    process.exit(1);
  });
  register();
  await import('../src/main.ts');
}
