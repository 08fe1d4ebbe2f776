import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Tern's version: the `version` of its package.json, read at run time from the package this module belongs to —
 * found by walking up from the module's folder, so it is the same from src/ (a TypeScript loader), from dist/ (the
 * build) and from the test build.
 */
function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'tern' && typeof pkg.version === 'string') return pkg.version;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Tern's package.json was not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const VERSION: string = readVersion();

/** Compares two `major.minor.patch` versions (a pre-release suffix is ignored): negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split('-')[0]!
      .split('.')
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
