// Tern's version (tern --version, tern doctor) and `tern migrate --status`: the applied and pending migrations,
// without applying or creating anything, and the exit code that says whether some are pending.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { run } from '../../src/cli/index.ts';
import type { Io } from '../../src/cli/io.ts';
import { openStore } from '../../src/store/db.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { TERN_MAIN } from '../support/process.ts';
import { forEachDialect, freshDatabase } from '../support/server.ts';

/** The repository's root (the test files run from .test-build/test/…) and its package.json's version. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NAMES = Object.keys(migrations);
const PG_URL = process.env.TERN_TEST_DATABASE_URL;

async function tern(env: NodeJS.ProcessEnv, argv: string[]) {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env,
    readStdin: async () => '',
  };
  const code = await run(argv, io);
  return { code, out, err, json: () => JSON.parse(out) };
}

it('has a semver version, and tern --version and -V print it', async () => {
  assert.match(VERSION, /^\d+\.\d+\.\d+$/);
  for (const flag of ['--version', '-V']) {
    const r = await tern({}, [flag]);
    assert.equal(r.code, 0);
    assert.equal(r.out, `${VERSION}\n`);
  }
  assert.match((await tern({}, ['--help'])).out, /-V, --version/);
});

it('reads the version at run time from the compiled modules and from the TypeScript sources', () => {
  // Compiled JavaScript (as dist/ is; here the test build, one folder deeper) and the sources through tsx.
  const compiled = spawnSync(process.execPath, [TERN_MAIN, '--version'], { encoding: 'utf8', cwd: tmpdir() });
  assert.equal(compiled.status, 0, compiled.stderr);
  assert.equal(compiled.stdout, `${VERSION}\n`);
  const sources = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts'), '-V'], { encoding: 'utf8', cwd: ROOT });
  assert.equal(sources.status, 0, sources.stderr);
  assert.equal(sources.stdout, `${VERSION}\n`);
});

forEachDialect('tern migrate --status', (dialect) => {
  it('lists pending migrations without applying or creating anything (exit 9), then applied ones with their time (exit 0)', async () => {
    const db = await freshDatabase(dialect);
    // A database nothing made yet: a file that does not exist, a schema that does not exist.
    let url = db.url;
    let schema: string | null = null;
    if (dialect === 'sqlite') rmSync(url.slice('sqlite:'.length), { force: true });
    else {
      schema = `${new URL(url).searchParams.get('schema')}_new`;
      const u = new URL(url);
      u.searchParams.set('schema', schema);
      url = u.toString();
    }
    const env = { TERN_DATABASE_URL: url, TERN_SECRET_KEY: 'x'.repeat(32), NO_COLOR: '1' };
    try {
      const fresh = await tern(env, ['migrate', '--status']);
      assert.equal(fresh.code, 9, fresh.err);
      assert.match(fresh.err, new RegExp(`tern: ${NAMES.length} migration\\(s\\) pending`));
      assert.match(fresh.out, new RegExp(`^Tern ${VERSION.replaceAll('.', '\\.')}, database `, 'm'));
      assert.match(fresh.out, /^Applied: 0$/m);
      assert.match(fresh.out, new RegExp(`^Pending: ${NAMES.length}$`, 'm'));
      for (const name of NAMES) assert.match(fresh.out, new RegExp(`^  ${name}$`, 'm'));
      assert.match(fresh.out, /tern migrate \(tern serve applies them too, at start\)\.$/m);
      if (dialect === 'sqlite') assert.equal(existsSync(url.slice('sqlite:'.length)), false, 'the file is not created');
      else assert.equal(await schemaExists(schema!), false, 'the schema is not created');

      const asJson = await tern(env, ['migrate', '--status', '--json']);
      assert.equal(asJson.code, 9);
      assert.deepEqual(asJson.json(), {
        version: VERSION,
        database: url.replace(/\/\/[^@/]*@/, '//…@'),
        upToDate: false,
        applied: [],
        pending: NAMES,
        unknown: [],
      });

      const started = Date.now();
      assert.equal((await tern(env, ['migrate'])).code, 0);
      const done = await tern(env, ['migrate', '--status', '--json']);
      assert.equal(done.code, 0, done.err);
      const status = done.json();
      assert.equal(status.upToDate, true);
      assert.deepEqual(status.pending, []);
      assert.deepEqual(
        status.applied.map((m: { name: string }) => m.name),
        NAMES,
      );
      for (const m of status.applied) {
        const at = Date.parse(m.appliedAt);
        assert.ok(at >= started - 1000 && at <= Date.now() + 1000, `${m.name} applied at ${m.appliedAt}`);
      }
      const text = await tern(env, ['migrate', '--status']);
      assert.equal(text.code, 0);
      assert.match(text.out, new RegExp(`^Applied: ${NAMES.length}$`, 'm'));
      assert.match(text.out, new RegExp(`^  ${NAMES[0]} +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`, 'm'));
      assert.match(text.out, /^Pending: 0$/m);
      assert.match(text.out, /^Up to date\.$/m);

      // One migration short (as a database left by the previous version would be): pending again, nothing applied.
      const store = await openStore(url, 'test', { migrate: false });
      await sql`delete from kysely_migration where name = ${NAMES.at(-1)!}`.execute(store.db);
      await store.close();
      const behind = await tern(env, ['migrate', '--status', '--json']);
      assert.equal(behind.code, 9);
      assert.deepEqual(behind.json().pending, [NAMES.at(-1)]);
      assert.equal((await tern(env, ['migrate', '--status'])).code, 9, 'still pending: --status applied nothing');

      const doctor = await tern({ ...env, TERN_HTTP_PORT: '0', TERN_SMPP_PORT: '0' }, ['doctor', '--json']);
      const checks = doctor.json() as Array<{ name: string; detail: string }>;
      assert.equal(checks.find((c) => c.name === 'Tern')?.detail, `version ${VERSION}`);
      assert.match(
        checks.find((c) => c.name === 'database')!.detail,
        new RegExp(`${NAMES.length - 1} migrations applied, the newest ${NAMES.at(-2)}; 1 pending`),
      );
    } finally {
      if (schema) await dropSchema(schema);
      await db.cleanup();
    }
  });
});

it('tern migrate --status refuses a bad configuration as wrong usage (exit 2)', async () => {
  const r = await tern({ TERN_DATABASE_URL: 'mysql://nowhere' }, ['migrate', '--status']);
  assert.equal(r.code, 2);
  assert.match(r.err, /TERN_DATABASE_URL/);
});

async function schemaExists(schema: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return (await c.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount === 1;
  } finally {
    await c.end();
  }
}

async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`drop schema if exists ${schema} cascade`);
  await c.end();
}
