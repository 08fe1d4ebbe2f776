/**
 * The statements the pipeline runs on every batch (a batch's messages, events, queue rows, operator records), written
 * as SQL text once per row count and run with their values, instead of built through Kysely's query builder on each
 * call: building a 60-row insert of messages took as long as SQLite took to run it. Values are always bound, never
 * written into the text, which is the one Kysely writes for the same statement (the upserts' update clauses read the
 * inserted row, `excluded`, instead of binding its values twice): the statement cache and the SQL profile see one
 * statement per row count as before.
 */
import { CompiledQuery, PostgresAdapter, type QueryResult } from 'kysely';
import type { Db } from './schema.ts';

/**
 * Texts kept by statement and row count: a few hundred in practice (a dozen statements, row counts up to their
 * callers' chunks), a few megabytes at most; beyond the bound they are dropped and made again.
 */
const texts = new Map<string, string>();
const MAX_TEXTS = 2_000;

function cached(key: string, make: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    if (texts.size >= MAX_TEXTS) texts.clear();
    text = make();
    texts.set(key, text);
  }
  return text;
}

/** Whether `db` (a store's handle or one of its transactions) runs on PostgreSQL, whose placeholders are numbered. */
export function onPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** `count` placeholders separated by commas: `?, ?` on SQLite, `$from, $from+1` on PostgreSQL. */
export function placeholders(pg: boolean, count: number, from = 1): string {
  if (!pg) return count === 0 ? '' : '?' + ', ?'.repeat(count - 1);
  let s = '';
  for (let i = 0; i < count; i++) s += i === 0 ? `$${from}` : `, $${from + i}`;
  return s;
}

/** `rows` parenthesised tuples of `width` placeholders each, numbered on from `from` on PostgreSQL. */
export function tuples(pg: boolean, rows: number, width: number, from = 1): string {
  const parts: string[] = [];
  for (let r = 0; r < rows; r++) parts.push(`(${placeholders(pg, width, from + r * width)})`);
  return parts.join(', ');
}

/**
 * Runs the statement `name` whose text depends only on the dialect and `size` (its row or list count), made by
 * `make` the first time, with `values` bound in order.
 */
export function runCached<R = unknown>(db: Db, name: string, size: number, make: (pg: boolean) => string, values: readonly unknown[]): Promise<QueryResult<R>> {
  const pg = onPostgres(db);
  const text = cached(`${pg ? 'p' : 's'}|${name}|${size}`, () => make(pg));
  return db.executeQuery<R>(CompiledQuery.raw(text, values as unknown[]));
}

/** Every column of a table's row type, checked complete by the compiler (a column added to the table must be listed). */
export function columnsOf<Row>(all: Record<keyof Row & string, true>): ReadonlyArray<keyof Row & string> {
  return Object.keys(all) as Array<keyof Row & string>;
}

/**
 * Inserts `rows` into `table` (every column in `columns` given for every row), `chunk` rows a statement, with `tail`
 * after the values (an `on conflict` clause). A value left undefined is stored as null.
 */
export async function insertRows<Row>(
  db: Db,
  table: string,
  columns: ReadonlyArray<keyof Row & string>,
  rows: readonly Row[],
  chunk: number,
  tail = '',
): Promise<void> {
  const head = insertHead(table, columns);
  // The statement is its head and tail: two inserts into one table with other columns or clauses are two statements.
  const name = tail ? `${head}| ${tail}` : head;
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk);
    const values: unknown[] = [];
    for (const row of part) for (const c of columns) values.push(row[c] ?? null);
    await runCached(db, name, part.length, (pg) => head + tuples(pg, part.length, columns.length) + (tail ? ` ${tail}` : ''), values);
  }
}

const heads = new WeakMap<ReadonlyArray<string>, string>();

/** `insert into "table" ("a", "b") values `, made once for each list of columns. */
function insertHead(table: string, columns: ReadonlyArray<string>): string {
  let head = heads.get(columns);
  if (head === undefined || !head.startsWith(`insert into "${table}" `)) {
    head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
    heads.set(columns, head);
  }
  return head;
}
