import { dirname, resolve } from 'node:path';

/** Where a node keeps its files when its database is not a SQLite file: the default database's directory. */
const DEFAULT_DATA_DIRECTORY = './data';

/**
 * The directory a node keeps its own files in (the secret key file, the keys made on a first start): the SQLite
 * database's directory, or `./data` (from the working directory) when the database is PostgreSQL or in memory.
 */
export function dataDirectory(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') return dirname(resolve(file));
  }
  return resolve(DEFAULT_DATA_DIRECTORY);
}
