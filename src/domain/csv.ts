/**
 * CSV as Tern reads and writes it, for the legacy door's batch file, the CLI's files and the console (whose browser
 * build imports this module, so it stays free of Node). Fields are separated by `,` or `;` (the one the first record
 * uses most outside quotes), may be quoted with `"` (`""` inside is one quote; separators and line breaks allowed),
 * records end with LF, CRLF or CR, a UTF-8 byte order mark is ignored and blank records are left out. A malformed
 * text is a CsvError naming the line it goes wrong on.
 */

export type CsvSeparator = ',' | ';';

export interface CsvRecord {
  /** The line the record starts on (from 1), to name it in errors. */
  line: number;
  fields: string[];
}

export class CsvError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'CsvError';
  }
}

const BOM = '\uFEFF';

/** The separator the first record uses most (outside quotes); `onTie` when it uses neither more. */
export function separatorOf(text: string, onTie: CsvSeparator = ','): CsvSeparator {
  let semi = 0;
  let comma = 0;
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '\n' || c === '\r') break;
    else if (c === ';') semi++;
    else if (c === ',') comma++;
  }
  return semi === comma ? onTie : semi > comma ? ';' : ',';
}

/** The records of a CSV text, each with the line it starts on; a quote opens a field only at its start. */
export function parseCsv(text: string, separator: CsvSeparator = separatorOf(text)): CsvRecord[] {
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  const n = body.length;
  const records: CsvRecord[] = [];
  let line = 1;
  let i = 0;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (body[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new CsvError(start, 'a quoted field is not closed');
          const c = body[i]!;
          if (c === '"') {
            if (body[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n' || (c === '\r' && body[i + 1] !== '\n')) line++;
          field += c;
          i++;
        }
        if (i < n && body[i] !== separator && body[i] !== '\n' && body[i] !== '\r') throw new CsvError(line, 'text after the closing quote of a field');
      } else {
        const from = i;
        while (i < n && body[i] !== separator && body[i] !== '\n' && body[i] !== '\r') i++;
        field = body.slice(from, i);
      }
      fields.push(field);
      if (i < n && body[i] === separator) {
        i++;
        continue;
      }
      break;
    }
    if (body[i] === '\r') i++;
    if (body[i] === '\n') i++;
    line++;
    if (fields.some((f) => f.trim() !== '')) records.push({ line: start, fields });
  }
  return records;
}

/** One field, quoted when it holds what the reader would take for something else. */
function csvField(value: unknown): string {
  const s = value === undefined || value === null ? '' : String(value);
  return /[",;\r\n\uFEFF]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Records as CSV: `,` separated, CRLF after each; parseCsv reads back every record with a field that is not blank. */
export function toCsv(records: unknown[][]): string {
  return records.map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
}
