/**
 * A CSV text as rows of fields: `,` or `;` (whichever the first line uses most), fields quoted with `"` (`""` is one
 * quote; separators and line breaks allowed inside), LF or CRLF, a UTF-8 byte order mark ignored, blank rows left out.
 */
export function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  const clean = text.replace(/^\uFEFF/, '');
  const first = clean.split(/\r?\n/, 1)[0] ?? '';
  const sep = (first.match(/;/g)?.length ?? 0) > (first.match(/,/g)?.length ?? 0) ? ';' : ',';
  const rows: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let lineNo = 1;
  let rowLine = 1;
  const endRow = () => {
    fields.push(field);
    if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
    fields = [];
    field = '';
  };
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i]!;
    if (quoted) {
      if (c === '"' && clean[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') lineNo++;
        field += c;
      }
    } else if (c === '"' && field === '') quoted = true;
    else if (c === sep) {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && clean[i + 1] === '\n') i++;
      endRow();
      lineNo++;
      rowLine = lineNo;
    } else field += c;
  }
  endRow();
  return rows;
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
 * The rows of a campaign file: with a header, the columns named number (numero, msisdn, to, phone), text (message)
 * and refClient (ref); without one, number, then text, then refClient.
 */
export function recipientsOf(text: string): Recipient[] {
  const rows = parseCsv(text);
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
