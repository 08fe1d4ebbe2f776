import { sql } from 'kysely';
import type { Store } from './db.ts';
import { migrations } from './migrations/index.ts';

/** The migrations the database has, and those this version of Tern would still apply. */
export async function migrationStatus(store: Store): Promise<{ applied: string[]; pending: string[] }> {
  const table = store.schema ? sql`${sql.id(store.schema)}.kysely_migration` : sql`kysely_migration`;
  let applied: string[] = [];
  try {
    const rows = await sql<{ name: string }>`select name from ${table} order by name`.execute(store.db);
    applied = rows.rows.map((r) => r.name);
  } catch {
    // no migration table yet: nothing applied
  }
  const done = new Set(applied);
  return { applied, pending: Object.keys(migrations).filter((m) => !done.has(m)) };
}
