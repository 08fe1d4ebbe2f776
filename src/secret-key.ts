import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface SecretKey {
  key: string | null;
  /** Where it came from: the setting, a key file beside the SQLite database, or nowhere. */
  source: 'TERN_SECRET_KEY' | 'file' | 'none';
  path?: string;
}

/**
 * The key that seals the secrets Tern keeps: TERN_SECRET_KEY when it is set. Without it, a single node on SQLite keeps
 * a key of its own in `secret.key` beside its database (made on the first start, readable by its owner only), so the
 * embedded defaults seal secrets too; back it up with the database. Nodes sharing a PostgreSQL database must all be
 * given the same TERN_SECRET_KEY.
 */
export function resolveSecretKey(setting: string | null, databaseUrl: string): SecretKey {
  if (setting !== null) return { key: setting, source: 'TERN_SECRET_KEY' };
  if (!databaseUrl.startsWith('sqlite:')) return { key: null, source: 'none' };
  const path = secretKeyFile(databaseUrl);
  if (path === null) return { key: randomBytes(32).toString('base64'), source: 'file' };
  try {
    return { key: readFileSync(path, 'utf8').trim(), source: 'file', path };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(path), { recursive: true });
  try {
    // 'wx': two processes starting at once on the same file keep the first key written.
    writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { key: readFileSync(path, 'utf8').trim(), source: 'file', path };
}

/** Where a node on SQLite keeps its key when TERN_SECRET_KEY is not set: `secret.key` beside the database. */
export function secretKeyFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? null : join(dirname(resolve(file)), 'secret.key');
}
