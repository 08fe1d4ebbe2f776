/**
 * The statements the pipeline runs on every batch (a batch's messages, events, queue rows, operator records), written
 * as SQL text once per row count and run with their values, instead of built through Kysely's query builder on each
 * call: building a 60-row insert of messages took as long as SQLite took to run it. Values are always bound, never
 * written into the text, which is the one Kysely writes for the same statement (the upserts' update clauses read the
 * inserted row, `excluded`, instead of binding its values twice): the statement cache and the SQL profile see one
 * statement per row count as before.
 *
 * On PostgreSQL a batch is bound as one array per column (`unnest`, `= any`), not one placeholder per value: the
 * statement's text no longer depends on its row count, and the server parses and plans a few arrays instead of
 * thousands of placeholders (a 62-row insert of messages: 1.9 → 1.0 ms of the server's CPU).
 */
import { CompiledQuery, PostgresAdapter, type QueryResult } from 'kysely';
import { resultNotRead } from './pg-driver.ts';
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
export function runCached<R = unknown>(
  db: Db,
  name: string,
  size: number,
  make: (pg: boolean) => string,
  values: readonly unknown[],
  /** Nothing reads what it answers: a transaction on PostgreSQL sends it on without waiting (see pg-driver.ts). */
  unread = false,
): Promise<QueryResult<R>> {
  const pg = onPostgres(db);
  const text = cached(`${pg ? 'p' : 's'}|${name}|${size}`, () => {
    const made = make(pg);
    if (pg) prepareOnPostgres(made);
    return made;
  });
  const q = CompiledQuery.raw(text, values as unknown[]);
  return db.executeQuery<R>(unread ? resultNotRead(q) : q);
}

/**
 * A batch's rows in the parts its statements take: `chunk` rows a statement on PostgreSQL, where a statement's text
 * does not depend on its row count; on SQLite, where it does and each text is compiled once and kept (db.ts), parts of
 * powers of two (60 rows: 32, 16, 8, 4). Batches of every size from one to a chunk made about a thousand texts in a
 * run of the end-to-end benchmark, twice what the statement cache keeps, each compiled at its first use (0.2–0.8 ms
 * for a batch insert of messages); powers of two make a few per statement. A statement more costs a few microseconds.
 */
export function batchParts<T>(pg: boolean, items: readonly T[], chunk: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < items.length;) {
    const left = Math.min(items.length - i, chunk);
    const size = pg ? left : 2 ** Math.floor(Math.log2(left));
    parts.push(items.slice(i, i + size));
    i += size;
  }
  return parts;
}

/**
 * A list of values in the parts its statements take, `chunk` at most a part: on SQLite each part padded to the next
 * power of two (at most `chunk`) with its last value (see batchParts) — `in (…)` finds the same rows.
 */
export function listParts<T>(pg: boolean, values: readonly T[], chunk: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < values.length; i += chunk) {
    const part = values.slice(i, i + chunk);
    const length = pg || part.length <= 1 ? part.length : Math.min(chunk, 2 ** Math.ceil(Math.log2(part.length)));
    while (part.length < length) part.push(part[part.length - 1]!);
    parts.push(part);
  }
  return parts;
}

/**
 * Batch statements PostgreSQL keeps parsed, by text: each connection parses one the first time it runs it and then
 * only binds and executes it (named prepared statements), which spares the server's parser and analyser on every
 * batch; it still plans each run (Tern's connections set plan_cache_mode, see db.ts). Their texts do not depend on the
 * row count on PostgreSQL, so they are a few dozen. Statements that answer every column (`select *`, `returning *`)
 * are not kept: a column added by a newer node's migration would make the kept statement's result change type, an
 * error until reconnection.
 */
const prepared = new Map<string, string>();
const MAX_PREPARED = 200;
const ALL_COLUMNS = /^\s*select\s+(?:"?\w+"?\.)?\*|\breturning\s+(?:"?\w+"?\.)?\*/i;

function prepareOnPostgres(text: string): void {
  if (prepared.has(text) || prepared.size >= MAX_PREPARED || ALL_COLUMNS.test(text)) return;
  prepared.set(text, `tern_batch_${prepared.size + 1}`);
}

/** The name PostgreSQL keeps `text` under, when it is one of the prepared batch statements. */
export function preparedName(text: string): string | undefined {
  return prepared.get(text);
}

/** A column's type, as PostgreSQL is told the type of the array a batch binds for it. */
export type ColumnType = 'text' | 'bigint' | 'integer';

const ARRAY_TYPES: Record<ColumnType, string> = { text: 'text[]', bigint: 'int8[]', integer: 'int4[]' };

/** The columns of a table written by batch, in order, with their types. */
export interface TableColumns<Name extends string> {
  readonly table: string;
  readonly names: readonly Name[];
  readonly types: readonly ColumnType[];
}

const declared: Array<TableColumns<string>> = [];

/**
 * The columns of `table` written by batch: every column of its row type with its type, checked complete by the
 * compiler (a column added to the table must be listed).
 */
export function columnsOf<Row>(table: string, all: Record<keyof Row & string, ColumnType>): TableColumns<keyof Row & string> {
  const names = Object.keys(all) as Array<keyof Row & string>;
  const columns = { table, names, types: names.map((n) => all[n]) };
  declared.push(columns);
  return columns;
}

/** Every list of columns declared so far (by the modules loaded): a test checks their types against the database's. */
export function declaredColumns(): ReadonlyArray<TableColumns<string>> {
  return declared;
}

/**
 * `column` among `count` values bound from placeholder `from`: `in (?, …)` on SQLite; on PostgreSQL `= any($from)`,
 * the values bound as one text array (`listValues`).
 */
export function inList(pg: boolean, column: string, count: number, from = 1): string {
  return pg ? `${column} = any($${from}::text[])` : `${column} in (${placeholders(false, count)})`;
}

/** The values of an `inList`, as bound. */
export function listValues(pg: boolean, values: readonly unknown[]): unknown[] {
  return pg ? [arrayLiteral(values)] : [...values];
}

/**
 * A PostgreSQL array literal of texts, numbers and nulls, written as the driver writes an array but without its two
 * regular expressions an element: most values have no quote or backslash to escape.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ',';
    const v = values[i];
    if (v === null || v === undefined) literal += 'NULL';
    else if (typeof v === 'number') literal += String(v);
    else if (typeof v === 'string') literal += v.includes('\\') || v.includes('"') ? `"${v.replace(/[\\"]/g, '\\$&')}"` : `"${v}"`;
    else throw new TypeError(`a batch binds texts, numbers and nulls, not ${typeof v}`);
  }
  return `${literal}}`;
}

/**
 * Runs the statement `name` for `values`, `chunk` of them a statement, and answers the rows it returns: `statement` is
 * given the condition that `column` is among them (an `inList` bound after the `leading` values).
 */
export async function runByList<R = unknown>(
  db: Db,
  query: { name: string; column: string; chunk: number; leading?: readonly unknown[]; unread?: boolean },
  values: readonly unknown[],
  statement: (pg: boolean, among: string) => string,
): Promise<R[]> {
  const leading = query.leading ?? [];
  const pg = onPostgres(db);
  const out: R[] = [];
  for (const part of listParts(pg, values, query.chunk)) {
    const r = await runCached<R>(
      db,
      query.name,
      part.length,
      (p) => statement(p, inList(p, query.column, part.length, leading.length + 1)),
      [...leading, ...listValues(pg, part)],
      query.unread,
    );
    for (const row of r.rows) out.push(row);
  }
  return out;
}

/**
 * `rows` rows of `width` values as a table `v` to update from, its columns `column1`…: `(values (?, …), …) as v` on
 * SQLite; on PostgreSQL `unnest(…) as v(column1, …)`, a text array a column (the statement casts what is not text).
 * Its values come first in the statement, bound by `rowValues`.
 */
export function valuesTable(pg: boolean, rows: number, width: number): string {
  if (!pg) return `(values ${tuples(false, rows, width)}) as v`;
  const names: string[] = [];
  const arrays: string[] = [];
  for (let c = 1; c <= width; c++) {
    names.push(`column${c}`);
    arrays.push(`$${c}::text[]`);
  }
  return `unnest(${arrays.join(', ')}) as v(${names.join(', ')})`;
}

/** The values of a `valuesTable`, given row after row: as they are on SQLite, a column at a time on PostgreSQL. */
export function rowValues(pg: boolean, width: number, flat: readonly unknown[]): unknown[] {
  if (!pg) return [...flat];
  const columns: unknown[][] = [];
  for (let c = 0; c < width; c++) columns.push([]);
  for (let i = 0; i < flat.length; i++) columns[i % width]!.push(flat[i] ?? null);
  return columns.map(arrayLiteral);
}

/**
 * Inserts `rows` into the table of `columns` (every column given for every row), `chunk` rows a statement, with
 * `tail` after the values (an `on conflict` clause). A value left undefined is stored as null.
 */
export async function insertRows<Name extends string>(
  db: Db,
  columns: TableColumns<Name>,
  rows: ReadonlyArray<Record<Name, unknown>>,
  chunk: number,
  tail = '',
): Promise<void> {
  const { table, names } = columns;
  const head = insertHead(table, names);
  // The statement is its head and tail: two inserts into one table with other columns or clauses are two statements.
  const name = tail ? `${head}| ${tail}` : head;
  const end = tail ? ` ${tail}` : '';
  const pg = onPostgres(db);
  const unread = !/\breturning\b/i.test(tail);
  for (const part of batchParts(pg, rows, chunk)) {
    if (pg) {
      const arrays: unknown[][] = names.map(() => []);
      for (const row of part) for (let c = 0; c < names.length; c++) arrays[c]!.push(row[names[c]!] ?? null);
      await runCached(
        db,
        name,
        0,
        () => `${head}select * from unnest(${columns.types.map((t, c) => `$${c + 1}::${ARRAY_TYPES[t]}`).join(', ')})${end}`,
        arrays.map(arrayLiteral),
        unread,
      );
    } else {
      const values: unknown[] = [];
      for (const row of part) for (const c of names) values.push(row[c] ?? null);
      await runCached(db, name, part.length, () => `${head}values ${tuples(false, part.length, names.length)}${end}`, values, unread);
    }
  }
}

const heads = new WeakMap<ReadonlyArray<string>, string>();

/**
 * The declared columns of a table as a select list (`"id", "status", …`): what a batch read answers instead of `*`,
 * so PostgreSQL can keep it prepared, and a column a newer node's migration adds is not read by code that does not
 * know it.
 */
export function selectList(columns: TableColumns<string>): string {
  return columns.names.map((c) => `"${c}"`).join(', ');
}

/** `insert into "table" ("a", "b") `, made once for each list of columns. */
function insertHead(table: string, columns: ReadonlyArray<string>): string {
  let head = heads.get(columns);
  if (head === undefined || !head.startsWith(`insert into "${table}" `)) {
    head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) `;
    heads.set(columns, head);
  }
  return head;
}
