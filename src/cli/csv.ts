import { readFileSync } from 'node:fs';
import { CsvError, type CsvRecord, parseCsv } from '../domain/csv.ts';
import { CliError, EXIT } from './io.ts';

/** A CSV file's text and records; a file that cannot be read, or is malformed, is a usage error naming it. */
export function readCsvFile(file: string): { text: string; records: CsvRecord[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${file}: ${(err as Error).message}`, EXIT.USAGE);
  }
  try {
    return { text, records: parseCsv(text) };
  } catch (err) {
    if (err instanceof CsvError) throw new CliError(`${file}: ${err.message}`, EXIT.USAGE);
    throw err;
  }
}

export interface Recipient {
  line: number;
  to: string;
  text?: string;
  refClient?: string;
}

const NUMBER = ['number', 'numero', 'msisdn', 'to', 'phone', 'recipient'];
const TEXT = ['text', 'message', 'body'];
const REF = ['refclient', 'ref', 'reference'];

/**
 * The rows of a campaign file (its text or its records): with a header, the columns named number (numero, msisdn,
 * to, phone), text (message) and refClient (ref); without one, number, then text, then refClient.
 */
export function recipientsOf(csv: string | CsvRecord[]): Recipient[] {
  const rows = typeof csv === 'string' ? parseCsv(csv) : csv;
  if (rows.length === 0) return [];
  const head = rows[0]!.fields.map((f) => f.trim().toLowerCase());
  const header = head.some((h) => NUMBER.includes(h));
  const col = (names: string[], fallback: number) => (header ? head.findIndex((h) => names.includes(h)) : fallback);
  const n = col(NUMBER, 0);
  const t = col(TEXT, 1);
  const r = col(REF, 2);
  return rows.slice(header ? 1 : 0).map(({ line, fields }) => ({
    line,
    to: (fields[n] ?? '').trim(),
    ...(t >= 0 && fields[t]?.trim() ? { text: fields[t] } : {}),
    ...(r >= 0 && fields[r]?.trim() ? { refClient: fields[r]!.trim() } : {}),
  }));
}
