import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes the keys made on this start (the lines a terminal would have shown) to a new file in `directory`, readable
 * and writable by its owner only, and answers its path. Each start that makes keys writes a file of its own.
 */
export function writeKeysFile(directory: string, lines: readonly string[], now = new Date()): string {
  mkdirSync(directory, { recursive: true });
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const path = join(directory, `keys-${stamp}.txt`);
  const text = [`Keys made by Tern at ${now.toISOString()}, each shown here only: keep them elsewhere, then delete this file.`, ...lines, ''].join('\n');
  // 'wx': never over a file already there; 0600: the key file is for the account Tern runs as.
  writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
  return path;
}
