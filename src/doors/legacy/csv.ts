/**
 * sendSMSBatch.do's file: one message a row, columns `numero;message;emetteur[;ref]`. The manual's example is
 * comma-separated with a quoted header, so both separators are read (the one the first row uses most, `;` on a tie,
 * as the columns are documented), and a first row whose first field is `numero` is a header.
 */
import { fail } from '../../core/errors.ts';
import { CsvError, parseCsv, separatorOf } from '../../domain/csv.ts';

export interface BatchRow {
  /** The file's line the row starts on (from 1), to name it in errors. */
  line: number;
  numero: string;
  message: string;
  /** Empty when the row leaves it to the request's `emetteur` or the channel's default. */
  emetteur: string;
  ref: string;
}

export const MAX_BATCH_ROWS = 10_000;
const MAX_COLUMNS = 4;

function bad(line: number, why: string): never {
  return fail('INVALID_REQUEST', `line ${line}: ${why}`, 'fichier');
}

function recordsOf(text: string) {
  try {
    return parseCsv(text, separatorOf(text, ';'));
  } catch (err) {
    if (err instanceof CsvError) bad(err.line, err.reason);
    throw err;
  }
}

/** The rows of a batch file (header left out); a malformed file is an error naming its line. */
export function parseBatchFile(text: string): BatchRow[] {
  const records = recordsOf(text);
  if (records.length > 0 && records[0]!.fields[0]!.trim().toLowerCase() === 'numero') records.shift();
  if (records.length === 0) fail('INVALID_REQUEST', 'the file has no row (numero;message;emetteur[;ref])', 'fichier');
  if (records.length > MAX_BATCH_ROWS) fail('INVALID_REQUEST', `at most ${MAX_BATCH_ROWS} rows, got ${records.length}`, 'fichier');
  return records.map(({ line, fields }) => {
    if (fields.length > MAX_COLUMNS) bad(line, `${fields.length} columns; the columns are numero, message, emetteur and ref`);
    const [numero = '', message = '', emetteur = '', ref = ''] = fields;
    if (numero.trim() === '') bad(line, 'numero is empty');
    if (message === '') bad(line, 'message is empty');
    return { line, numero: numero.trim(), message, emetteur: emetteur.trim(), ref: ref.trim() };
  });
}
