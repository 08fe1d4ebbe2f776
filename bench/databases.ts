/**
 * The databases a benchmark row is measured on: SQLite always, PostgreSQL when a URL is given (BENCH_DATABASE_URL,
 * else TERN_TEST_DATABASE_URL) and answers. Each server gets a schema of its own in that database (`?schema=`).
 * BENCH_DIALECTS=sqlite (or postgres) measures one of them only.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type Dialect = 'sqlite' | 'postgres';

const PG_URL = process.env.BENCH_DATABASE_URL || process.env.TERN_TEST_DATABASE_URL || '';

function wanted(dialect: Dialect): boolean {
  const list = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim());
  return list.includes(dialect);
}

export async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

let postgresState: Promise<string | null> | undefined;

/** null when PostgreSQL can be measured, else why not (said in the table's PostgreSQL column). */
export function postgresUnavailable(): Promise<string | null> {
  postgresState ??= (async () => {
    if (!wanted('postgres')) return 'not measured (BENCH_DIALECTS)';
    if (!PG_URL) return 'not measured: no PostgreSQL URL (BENCH_DATABASE_URL or TERN_TEST_DATABASE_URL)';
    try {
      await withPostgres((c) => c.query('select 1'));
      return null;
    } catch (err) {
      return `not measured: PostgreSQL unreachable (${(err as Error).message})`;
    }
  })();
  return postgresState;
}

/** The dialects to measure, and for each one left out, why. */
export async function dialects(): Promise<{ measured: Dialect[]; skipped: Partial<Record<Dialect, string>> }> {
  const measured: Dialect[] = [];
  const skipped: Partial<Record<Dialect, string>> = {};
  if (wanted('sqlite')) measured.push('sqlite');
  else skipped.sqlite = 'not measured (BENCH_DIALECTS)';
  const why = await postgresUnavailable();
  if (why === null) measured.push('postgres');
  else skipped.postgres = why;
  return { measured, skipped };
}

export const schemaName = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

export async function createSchema(name = schemaName('bench')): Promise<string> {
  await withPostgres((c) => c.query(`create schema ${name}`));
  return name;
}

export async function dropSchema(name: string): Promise<void> {
  await withPostgres((c) => c.query(`drop schema if exists ${name} cascade`));
}

export async function schemaExists(name: string): Promise<boolean> {
  return withPostgres(async (c) => (await c.query('select 1 from pg_namespace where nspname = $1', [name])).rowCount === 1);
}

/** The URL a Tern server is given for a schema of the benchmark's PostgreSQL database. */
export function postgresUrl(schema: string): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', schema);
  return u.toString();
}
