// The upgrade policy, in what a machine can check: within a major version, migrations only add — new tables, new
// columns that are nullable or have a default, new indexes — so that a node of the previous minor version keeps
// working on a migrated schema (a rolling upgrade) and the previous version can run again (going back).
//
// What is checked, in every migration numbered after 1.0.0's last (035), comments aside:
// - no schema builder call that removes or changes: dropTable, dropView, dropColumn, dropConstraint, renameTo,
//   renameColumn, alterColumn (setDataType, setNotNull, dropDefault …), modifyColumn;
// - no raw SQL that does: drop table/view/column/constraint, rename, alter column, set not null, alter … type;
// - a column added to an existing table (alterTable … addColumn) that is notNull has a defaultTo;
// unless the migration is in `breakingMigrations` with the major version that brings it.
// And for every migration: its file is registered in index.ts under its own name, in order.
// Not checked (read the migration): what an UPDATE does to data older nodes read, a unique index on existing data.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { breakingMigrations, migrations } from '../../src/store/migrations/index.ts';

const DIR = new URL('../../src/store/migrations/', import.meta.url);
/** The first migration the policy holds for: those up to 035 shipped before it (008 and 028 rebuilt tables). */
const FIRST_CHECKED = 36;

const FORBIDDEN_CALLS = ['dropTable', 'dropView', 'dropColumn', 'dropConstraint', 'renameTo', 'renameColumn', 'alterColumn', 'modifyColumn'];
const FORBIDDEN_SQL: Array<[RegExp, string]> = [
  [/\bdrop\s+(table|view|column|constraint)\b/i, 'drops a table, view, column or constraint'],
  [/\brename\b/i, 'renames'],
  [/\balter\s+column\b/i, 'alters a column'],
  [/\bset\s+not\s+null\b/i, 'makes a column not null'],
  [/\balter\s+table\b[^;]*\btype\b/i, "changes a column's type"],
];

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** What in a migration's source would break a node of the previous version; empty when it only adds. */
function breaches(source: string): string[] {
  const code = withoutComments(source);
  const found: string[] = [];
  for (const call of FORBIDDEN_CALLS) if (new RegExp(`\\.${call}\\s*\\(`).test(code)) found.push(`calls ${call}`);
  for (const literal of code.match(/sql`[^`]*`/g) ?? []) {
    for (const [pattern, what] of FORBIDDEN_SQL) if (pattern.test(literal)) found.push(`raw SQL ${what}: ${literal.slice(0, 80)}`);
  }
  // Each alterTable statement, up to its execute(): its added columns that are notNull need a default.
  for (const statement of code.match(/\.alterTable\s*\([\s\S]*?\.execute\s*\(/g) ?? []) {
    for (const added of statement.split(/\.addColumn\s*\(/).slice(1)) {
      const column = added.split(/\)\s*\.(?=addColumn|execute|dropColumn|alterColumn)/)[0]!;
      if (/\.notNull\s*\(/.test(column) && !/\.defaultTo\s*\(/.test(column)) {
        found.push(`adds a notNull column without a default to an existing table: ${column.slice(0, 60).trim()}`);
      }
    }
  }
  return found;
}

const files = readdirSync(DIR).filter((f) => /^\d{3}-.*\.ts$/.test(f) && !f.endsWith('.d.ts'));
const source = (file: string) => readFileSync(new URL(file, DIR), 'utf8');

test('migrations after 035 only add, unless listed as breaking with their major version', () => {
  const checked = files.filter((f) => Number(f.slice(0, 3)) >= FIRST_CHECKED);
  const problems = checked.flatMap((f) => {
    const name = f.replace(/\.ts$/, '');
    return name in breakingMigrations ? [] : breaches(source(f)).map((b) => `${name}: ${b}`);
  });
  assert.deepEqual(problems, [], 'a migration within a major version only adds (CHANGELOG.md); list a breaking one in breakingMigrations');
});

test('breaking migrations name a migration after 035 and the major version that brings it', () => {
  for (const [name, version] of Object.entries(breakingMigrations)) {
    assert.ok(name in migrations, `${name} is a migration`);
    assert.ok(Number(name.slice(0, 3)) >= FIRST_CHECKED, `${name} comes after 1.0.0`);
    assert.match(version, /^([2-9]|[1-9]\d+)\.0\.0$/, `${name}: a major version after 1 (x.0.0)`);
  }
});

test('every migration file is registered under its own name, in order', () => {
  const names = Object.keys(migrations);
  assert.deepEqual(names, files.map((f) => f.replace(/\.ts$/, '')).sort());
  assert.deepEqual(names, [...names].sort(), 'applied in name order');
  for (const name of names) assert.match(name, /^\d{3}-[a-z0-9]+(-[a-z0-9]+)*$/);
});

test('the check finds what breaks an older node, and lets what only adds pass', () => {
  // Shipped migrations that rebuilt tables, which the policy now forbids.
  assert.deepEqual(breaches(source('008-connectors.ts')), ['calls dropTable']);
  assert.deepEqual(breaches(source('028-rollup-shards.ts')), ['calls dropTable', 'calls renameTo']);
  // Shipped migrations that only added.
  for (const f of ['026-smpp-concat-parts.ts', '033-smpp-credential-window.ts', '035-dispatch-waiting.ts']) assert.deepEqual(breaches(source(f)), [], f);

  const cases: Array<[string, number]> = [
    ["await db.schema.alterTable('m').addColumn('a', 'text').execute();", 0],
    ["await db.schema.alterTable('m').addColumn('a', 'integer', (c) => c.notNull().defaultTo(0)).execute();", 0],
    ["await db.schema.alterTable('m').addColumn('a', 'integer', (c) => c.notNull()).execute();", 1],
    ["await db.schema.alterTable('m').addColumn('a', 'text').addColumn('b', 'text', (c) => c.notNull()).execute();", 1],
    ["await db.schema.createTable('t').addColumn('a', 'text', (c) => c.notNull()).execute();", 0],
    ["await db.schema.createIndex('i').on('m').column('a').execute();", 0],
    ["await db.schema.alterTable('m').dropColumn('a').execute();", 1],
    ["await db.schema.alterTable('m').renameColumn('a', 'b').execute();", 1],
    ["await db.schema.alterTable('m').alterColumn('a', (c) => c.setDataType('bigint')).execute();", 1],
    ['await sql`alter table m drop column a`.execute(db);', 1],
    ['await sql`ALTER TABLE m ALTER COLUMN a SET NOT NULL`.execute(db);', 2],
    ['await sql`alter table m rename to n`.execute(db);', 1],
    ["await sql`update m set a = 'x' where a is null`.execute(db);", 0],
    ['// the old table is dropped by a later major version (dropTable)\n/* renameTo */ export const x = 1;', 0],
  ];
  for (const [code, expected] of cases) assert.equal(breaches(code).length, expected, `${code} → ${breaches(code).join('; ')}`);
});
