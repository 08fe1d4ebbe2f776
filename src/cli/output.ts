import Table from 'cli-table3';
import { colours, type Io } from './io.ts';

export function json(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function line(io: Io, text = ''): void {
  io.stdout.write(`${text}\n`);
}

/** A cell of a tab-separated line: its tabs and line breaks as spaces, so that a row stays one line of fields. */
function tsvCell(v: unknown): string {
  return v === undefined || v === null ? '' : String(v).replace(/[\t\r\n]+/g, ' ');
}

/**
 * A table: boxed for people on a terminal, else (piped, or `--output tsv`) tab-separated lines under a header line,
 * which cut, awk and spreadsheets read. Cells that are absent are empty.
 */
export function table(io: Io, head: string[], rows: unknown[][]): void {
  if ((io.tables ?? (io.stdout.isTTY ? 'table' : 'tsv')) === 'tsv') {
    io.stdout.write([head, ...rows].map((r) => `${r.map(tsvCell).join('\t')}\n`).join(''));
    return;
  }
  const c = colours(io);
  const t = new Table({
    head: head.map((h) => c.bold(h)),
    style: { head: [], border: [] },
    wordWrap: true,
  });
  for (const r of rows) t.push(r.map((v) => (v === undefined || v === null ? '' : String(v))));
  io.stdout.write(`${t.toString()}\n`);
}

/** Key/value lines: `Balance   12.5 €`. */
export function facts(io: Io, pairs: Array<[string, unknown]>): void {
  const c = colours(io);
  const width = Math.max(...pairs.map(([k]) => k.length));
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '') continue;
    io.stdout.write(`${c.dim(k.padEnd(width))}  ${String(v)}\n`);
  }
}

export function euros(amount: number | undefined): string {
  if (amount === undefined) return '';
  return `${amount.toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} €`;
}

const FAILED = new Set(['UNDELIVERABLE', 'UNDELIVERED', 'FAILED', 'DOWN', 'GONE', 'REFUSED', 'REVOKED']);
const GOOD = new Set(['DELIVERED', 'READ', 'UP', 'ACTIVE', 'SENT']);

export function status(io: Io, value: string | undefined, detail?: string): string {
  if (!value) return '';
  const c = colours(io);
  const text = detail ? `${value} (${detail})` : value;
  if (FAILED.has(value)) return c.red(text);
  if (GOOD.has(value)) return c.green(text);
  return c.yellow(text);
}

export function date(iso: string | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** A message's text, whatever its type. */
export function bodyText(body: any): string {
  if (!body) return '';
  if (typeof body.text === 'string') return body.text;
  if (body.type) return `[${body.type}]`;
  return '';
}
