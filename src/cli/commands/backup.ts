import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, EXIT, type Io } from '../io.ts';
import { json, line } from '../output.ts';
import { configFor, redact } from './ops.ts';

const SEALED = 'webhook signing secrets, and the passwords and keys of operator connections';

/** The key copy `tern backup --with-key` writes beside a backup, and `tern restore` looks for. */
export function keyCopyOf(backupFile: string): string {
  return `${resolve(backupFile)}.secret.key`;
}

/** A shell word: quoted when it holds anything but the plainest characters. */
function shellWord(s: string): string {
  return /^[\w./:=@%+,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The pg_dump and pg_restore commands for the database of a PostgreSQL URL: its host, port, user, database and
 * (Tern's `?schema=`) schema; its other libpq parameters (sslmode …) in a connection string. The password is never
 * written out: PGPASSWORD (or ~/.pgpass) gives it.
 */
export function pgCommands(databaseUrl: string, file: string): { dump: string; restore: string; password: boolean } {
  const u = new URL(databaseUrl);
  const schema = u.searchParams.get('schema');
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  const extra = [...u.searchParams].filter(([k]) => !['schema', 'pool', 'options'].includes(k));
  const dbname = extra.length === 0 ? database : [`dbname=${database}`, ...extra.map(([k, v]) => `${k}=${v}`)].join(' ');
  const connection = [
    `--host=${shellWord(u.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost')}`,
    `--port=${u.port || '5432'}`,
    ...(u.username ? [`--username=${shellWord(decodeURIComponent(u.username))}`] : []),
    `--dbname=${shellWord(dbname)}`,
  ].join(' ');
  const password = u.password !== '';
  const env = password ? `PGPASSWORD='…' ` : '';
  return {
    dump: `${env}pg_dump --format=custom${schema ? ` --schema=${shellWord(schema)}` : ''} ${connection} --file=${shellWord(file)}`,
    restore: `${env}pg_restore --exit-on-error --single-transaction --no-owner ${connection} ${shellWord(file)}`,
    password,
  };
}

function keyRule(password: boolean): string[] {
  return [
    ...(password ? ['  (PGPASSWORD: the password of TERN_DATABASE_URL, not shown here; ~/.pgpass works too)'] : []),
    '',
    `The secret key is not in the database: keep TERN_SECRET_KEY with the dump, and start the nodes of a restored`,
    `database with the same value, or its sealed secrets (${SEALED}) cannot be opened.`,
  ];
}

interface KeyInfo {
  source: 'TERN_SECRET_KEY' | 'file' | 'none';
  /** The key file beside the database (source file). */
  file?: string;
  /** The copy written beside the backup (--with-key). */
  copy?: string;
}

/**
 * `tern backup FILE`: a consistent copy of the SQLite database of TERN_DATABASE_URL, made while Tern serves, checked;
 * with `--with-key`, the secret key written beside it (FILE.secret.key, readable by its owner only). On PostgreSQL:
 * the pg_dump command to run, and a usage error.
 */
export async function backup(io: Io, file: string, o: { force?: boolean; withKey?: boolean; json?: boolean }): Promise<void> {
  const config = await configFor(io);
  if (!config.databaseUrl.startsWith('sqlite:')) {
    const { dump, password } = pgCommands(config.databaseUrl, file);
    io.stderr.write(
      [
        `tern backup copies SQLite databases, and TERN_DATABASE_URL (${redact(config.databaseUrl)}) is PostgreSQL.`,
        'Back it up with pg_dump, which reads one consistent snapshot while Tern serves:',
        '',
        `  ${dump}`,
        ...keyRule(password),
        '',
      ].join('\n'),
    );
    throw new CliError('PostgreSQL is backed up with pg_dump (above)', EXIT.USAGE);
  }
  const { BackupError, backupSqlite } = await import('../../store/sqlite-backup.ts');
  const { secretKeyFile } = await import('../../secret-key.ts');
  const source = config.databaseUrl.slice('sqlite:'.length);
  if (source === ':memory:') throw new CliError('TERN_DATABASE_URL is an in-memory database: there is nothing to back up', EXIT.USAGE);

  const keyFile = secretKeyFile(config.databaseUrl)!;
  const key: KeyInfo = config.secretKey !== null ? { source: 'TERN_SECRET_KEY' } : existsSync(keyFile) ? { source: 'file', file: keyFile } : { source: 'none' };
  const copy = keyCopyOf(file);
  if (o.withKey) {
    if (key.source === 'none')
      throw new CliError(`--with-key: there is no key to copy (TERN_SECRET_KEY is not set and ${keyFile} does not exist)`, EXIT.NOT_FOUND);
    if (existsSync(copy) && !o.force) throw new CliError(`${copy} exists: choose another name, or --force to replace it`, EXIT.CONFLICT);
  }

  const started = performance.now();
  let result;
  try {
    result = await backupSqlite(source, file, { force: o.force === true });
  } catch (err) {
    if (err instanceof BackupError) throw new CliError(err.message, refusalExit(err.refusal));
    throw err;
  }
  const seconds = (performance.now() - started) / 1000;
  if (o.withKey) {
    const value = key.source === 'TERN_SECRET_KEY' ? config.secretKey! : readFileSync(keyFile, 'utf8').trim();
    writePrivate(copy, `${value}\n`);
    key.copy = copy;
  }

  if (o.json) {
    return json(io, {
      database: redact(config.databaseUrl),
      file: result.file,
      bytes: result.bytes,
      migrations: { applied: result.migrations.applied, ...(result.migrations.latest !== null && { latest: result.migrations.latest }) },
      integrity: 'ok',
      seconds: Math.round(seconds * 1000) / 1000,
      key,
    });
  }
  line(
    io,
    `Backed up ${redact(config.databaseUrl)} to ${result.file}: ${mebibytes(result.bytes)}, ${result.migrations.applied} migrations ` +
      `(the newest ${result.migrations.latest ?? 'none'}), integrity ok, in ${seconds.toFixed(1)} s.`,
  );
  line(io, `The secret key is not in the backup, and the database's sealed secrets (${SEALED}) open only with it.`);
  if (key.copy) line(io, `Key: written to ${key.copy} (readable by its owner only). Keep it as safe as the backup: with both, the secrets can be read.`);
  else if (key.source === 'TERN_SECRET_KEY')
    line(io, 'Key: TERN_SECRET_KEY. Keep its value with the backup (or use --with-key); a restored Tern needs the same.');
  else if (key.source === 'file') line(io, `Key: ${key.file}. Keep a copy with the backup (--with-key writes one beside it).`);
  else line(io, `Key: none yet (${keyFile} does not exist): this database holds no sealed secret.`);
}

/**
 * `tern restore FILE`: puts a backup back as the SQLite database of TERN_DATABASE_URL, into an empty data directory,
 * after checking it; and the key: FILE.secret.key (or --key) is put beside the database when none is there. On
 * PostgreSQL: the pg_restore command to run, and a usage error.
 */
export async function restore(io: Io, file: string, o: { key?: string; json?: boolean }): Promise<void> {
  const config = await configFor(io);
  if (!config.databaseUrl.startsWith('sqlite:')) {
    const { restore: command, password } = pgCommands(config.databaseUrl, file);
    io.stderr.write(
      [
        `tern restore puts back SQLite databases, and TERN_DATABASE_URL (${redact(config.databaseUrl)}) is PostgreSQL.`,
        'Restore a pg_dump file with pg_restore, into an empty database (or one without that schema), with no Tern running on it:',
        '',
        `  ${command}`,
        ...keyRule(password),
        '',
      ].join('\n'),
    );
    throw new CliError('PostgreSQL is restored with pg_restore (above)', EXIT.USAGE);
  }
  const { BackupError, restoreSqlite } = await import('../../store/sqlite-backup.ts');
  const { secretKeyFile } = await import('../../secret-key.ts');
  const { VERSION } = await import('../../version.ts');
  const target = config.databaseUrl.slice('sqlite:'.length);
  if (target === ':memory:') throw new CliError('TERN_DATABASE_URL is an in-memory database: there is nowhere to restore to', EXIT.USAGE);

  // The key is settled before anything is written: a restore that could not open its secrets is refused whole.
  const keyCopy = o.key !== undefined ? resolve(o.key) : existsSync(keyCopyOf(file)) ? keyCopyOf(file) : null;
  if (o.key !== undefined && !existsSync(keyCopy!)) throw new CliError(`--key: no key file at ${keyCopy}`, EXIT.NOT_FOUND);
  const backupKey = keyCopy === null ? null : readFileSync(keyCopy, 'utf8').trim();
  const keyFile = secretKeyFile(config.databaseUrl)!;
  const keyThere = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : null;
  if (backupKey !== null && config.secretKey !== null && backupKey !== config.secretKey) {
    throw new CliError(
      `${keyCopy} is not the key TERN_SECRET_KEY gives: start with TERN_SECRET_KEY set to the backup's key (or unset, to use the key file)`,
      EXIT.CONFLICT,
    );
  }
  if (backupKey !== null && config.secretKey === null && keyThere !== null && keyThere !== backupKey) {
    throw new CliError(`${keyFile} exists and is not the backup's key (${keyCopy}): move it away first`, EXIT.CONFLICT);
  }

  let result;
  try {
    result = restoreSqlite(file, target);
  } catch (err) {
    if (err instanceof BackupError) throw new CliError(err.message, refusalExit(err.refusal));
    throw err;
  }
  let written = false;
  if (backupKey !== null && config.secretKey === null && keyThere === null) {
    writePrivate(keyFile, `${backupKey}\n`);
    written = true;
  }

  if (o.json) {
    return json(io, {
      backup: resolve(file),
      database: redact(config.databaseUrl),
      bytes: result.bytes,
      migrations: {
        applied: result.migrations.applied,
        ...(result.migrations.latest !== null && { latest: result.migrations.latest }),
        unknown: result.migrations.unknown,
      },
      integrity: 'ok',
      key: {
        source: config.secretKey !== null ? 'TERN_SECRET_KEY' : keyThere !== null || written ? 'file' : 'none',
        ...(config.secretKey === null && { file: keyFile }),
        written,
      },
    });
  }
  line(
    io,
    `Restored ${resolve(file)} to ${result.file}: ${mebibytes(result.bytes)}, ${result.migrations.applied} migrations ` +
      `(the newest ${result.migrations.latest ?? 'none'}), integrity ok.`,
  );
  if (result.migrations.unknown.length > 0) {
    line(
      io,
      `It was made by a newer Tern than this one (${VERSION}): migrations ${result.migrations.unknown.join(', ')}. Run that version on it if this one refuses to start.`,
    );
  }
  if (config.secretKey !== null)
    line(io, `Key: TERN_SECRET_KEY. It must be the key of the Tern that made the backup, or the sealed secrets (${SEALED}) cannot be opened.`);
  else if (written) line(io, `Key: ${keyCopy} put in place as ${keyFile} (readable by its owner only).`);
  else if (keyThere !== null)
    line(io, `Key: ${keyFile} (already there${backupKey !== null ? ", the same as the backup's" : ''}). It must be the key of the Tern that made the backup.`);
  else {
    line(io, `Key: none. Put the key file of the Tern that made the backup at ${keyFile} before starting Tern (or set TERN_SECRET_KEY to its value):`);
    line(io, `  without it, Tern makes a new key and the sealed secrets (${SEALED}) cannot be opened.`);
  }
  line(io, 'Start Tern on it: tern serve.');
}

function refusalExit(refusal: 'missing' | 'exists' | 'invalid' | 'same-file'): number {
  return { missing: EXIT.NOT_FOUND, exists: EXIT.CONFLICT, invalid: EXIT.FAILED, 'same-file': EXIT.USAGE }[refusal];
}

/** Writes a file readable by its owner only, whole or not at all. */
function writePrivate(path: string, content: string): void {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  writeFileSync(partial, content, { mode: 0o600 });
  chmodSync(partial, 0o600);
  renameSync(partial, path);
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
