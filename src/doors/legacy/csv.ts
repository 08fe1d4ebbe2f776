/**
 * sendSMSBatch.do's file: one message a row, columns `numero;message;emetteur[;ref]`. The manual's example is
 * comma-separated with a quoted header, so both separators are read (the one the first row uses most, `;` on a tie),
 * fields may be quoted with `"` (`""` inside is one quote, line breaks allowed), and a first row whose first field is
 * `numero` is a header.
 */
import { fail } from '../../core/errors.ts';

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

/** The separator the first row uses most (outside quotes); `;` when it uses neither more. */
function separatorOf(text: string): ';' | ',' {
  let semi = 0;
  let comma = 0;
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && c === ';') semi++;
    else if (!quoted && c === ',') comma++;
  }
  return comma > semi ? ',' : ';';
}

/** The records of a CSV text, each with the line it starts on. */
export function parseCsv(text: string, sep: string): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) bad(start, 'a quoted field is not closed');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== sep && text[i] !== '\n' && text[i] !== '\r') bad(line, 'text after the closing quote of a field');
      } else {
        const from = i;
        while (i < n && text[i] !== sep && text[i] !== '\n' && text[i] !== '\r') i++;
        field = text.slice(from, i);
      }
      fields.push(field);
      if (i < n && text[i] === sep) {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    line++;
    if (fields.some((f) => f.trim() !== '')) records.push({ line: start, fields });
  }
  return records;
}

/** The rows of a batch file (header left out); a malformed file is an error naming its line. */
export function parseBatchFile(text: string): BatchRow[] {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const records = parseCsv(body, separatorOf(body));
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
