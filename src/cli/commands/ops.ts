import { existsSync } from 'node:fs';
import net from 'node:net';
import { CliError, colours, EXIT, type Io } from '../io.ts';
import { json, line } from '../output.ts';

/** The database URL without its password (user names and hosts are kept). */
export function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//…@');
}

/** The configuration of TERN_* variables, or a usage error naming the bad setting. */
export async function configFor(io: Io) {
  const { ConfigError, loadConfig } = await import('../../config/index.ts');
  try {
    return loadConfig(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.USAGE);
    throw err;
  }
}

/**
 * `tern migrate`: brings the database of TERN_DATABASE_URL up to date, saying which migrations it applied; with
 * `--status`, only says which are applied and which pending (exit 9 when some are).
 */
export async function migrate(io: Io, o: { json?: boolean; status?: boolean }): Promise<void> {
  const config = await configFor(io);
  if (o.status) return migrateStatus(io, config.databaseUrl, o);
  const { openStore } = await import('../../store/db.ts');
  const { migrationStatus } = await import('../../store/migration-status.ts');
  const before = await openStore(config.databaseUrl, 'tern-migrate', { migrate: false });
  const pending = (await migrationStatus(before)).pending;
  await before.close();
  const store = await openStore(config.databaseUrl, 'tern-migrate');
  const after = await migrationStatus(store);
  await store.close();
  if (o.json) return json(io, { database: redact(config.databaseUrl), applied: pending, total: after.applied.length });
  line(
    io,
    pending.length
      ? `Applied ${pending.length} migration(s) to ${redact(config.databaseUrl)}: ${pending.join(', ')}`
      : `${redact(config.databaseUrl)} is up to date.`,
  );
  line(io, `${after.applied.length} migrations, the newest ${after.applied.at(-1)?.name ?? 'none'}.`);
}

/** `tern migrate --status`: the applied and pending migrations; nothing is applied, nor created. */
async function migrateStatus(io: Io, databaseUrl: string, o: { json?: boolean }): Promise<void> {
  const { VERSION } = await import('../../version.ts');
  const { migrations } = await import('../../store/migrations/index.ts');
  const { migrationStatus } = await import('../../store/migration-status.ts');
  let state: { applied: Array<{ name: string; appliedAt: string }>; pending: string[]; unknown: string[] };
  const sqlitePath = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : null;
  if (sqlitePath !== null && sqlitePath !== ':memory:' && !existsSync(sqlitePath)) {
    // Opening it would create it.
    state = { applied: [], pending: Object.keys(migrations), unknown: [] };
  } else {
    const { openStore } = await import('../../store/db.ts');
    const store = await openStore(databaseUrl, 'tern-migrate', { migrate: false });
    try {
      state = await migrationStatus(store);
    } finally {
      await store.close();
    }
  }
  const database = redact(databaseUrl);
  if (o.json) {
    json(io, { version: VERSION, database, upToDate: state.pending.length === 0, applied: state.applied, pending: state.pending, unknown: state.unknown });
  } else {
    const c = colours(io);
    const width = Math.max(0, ...state.applied.map((m) => m.name.length), ...state.pending.map((m) => m.length));
    line(io, `Tern ${VERSION}, database ${database}`);
    line(io, `Applied: ${state.applied.length}`);
    for (const m of state.applied) line(io, `  ${m.name.padEnd(width)}  ${c.dim(m.appliedAt)}${state.unknown.includes(m.name) ? '  (by a newer Tern)' : ''}`);
    line(io, `Pending: ${state.pending.length}`);
    for (const m of state.pending) line(io, `  ${m}`);
    if (state.unknown.length > 0) {
      line(io, `${state.unknown.length} migration(s) were applied by a newer Tern; this version runs on them unless one of them broke compatibility.`);
    }
    line(io, state.pending.length ? `${state.pending.length} migration(s) to apply: tern migrate (tern serve applies them too, at start).` : 'Up to date.');
  }
  if (state.pending.length > 0) throw new CliError(`${state.pending.length} migration(s) pending`, EXIT.PENDING);
}

interface Check {
  name: string;
  ok: boolean;
  /** A warning: worth knowing, not a failure. */
  warn?: boolean;
  detail: string;
  fix?: string;
}

function portFree(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

async function tern(host: string, port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * `tern doctor`: checks what `tern serve` needs — the configuration, the database (and PostgreSQL's reachability),
 * the ports, text-to-speech (espeak-ng), the console's build — and says what to fix. Exits 1 when something must be fixed.
 */
export async function doctor(io: Io, o: { json?: boolean }): Promise<void> {
  const { VERSION } = await import('../../version.ts');
  const checks: Check[] = [{ name: 'Tern', ok: true, detail: `version ${VERSION}` }];
  const { ConfigError, loadConfig } = await import('../../config/index.ts');
  let config;
  try {
    config = loadConfig(io.env);
    checks.push({
      name: 'configuration',
      ok: true,
      detail: io.env.TERN_CONFIG ? `TERN_* variables and ${io.env.TERN_CONFIG}` : 'TERN_* variables (defaults elsewhere)',
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    checks.push({ name: 'configuration', ok: false, detail: err.message, fix: 'correct the setting it names (README, "Configuration")' });
  }

  if (config) {
    const postgres = !config.databaseUrl.startsWith('sqlite:');
    if (postgres) {
      const pg = (await import('pg')).default;
      const u = new URL(config.databaseUrl);
      u.searchParams.delete('schema');
      u.searchParams.delete('pool');
      const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 3000 });
      try {
        await client.connect();
        const v = await client.query<{ server_version: string }>('show server_version');
        const version = v.rows[0]?.server_version ?? '';
        // Tern's sessions set plan_cache_mode, which PostgreSQL knows from 12 on.
        const supported = Number.parseInt(version, 10) >= 12;
        checks.push({
          name: 'PostgreSQL',
          ok: supported,
          detail: `${u.hostname}:${u.port || 5432} answers (PostgreSQL ${version})`,
          ...(!supported && { fix: 'PostgreSQL 12 or later' }),
        });
      } catch (err) {
        checks.push({
          name: 'PostgreSQL',
          ok: false,
          detail: `${redact(config.databaseUrl)}: ${(err as Error).message}`,
          fix: 'start PostgreSQL, or correct TERN_DATABASE_URL (postgres://user@host:5432/db)',
        });
      } finally {
        await client.end().catch(() => undefined);
      }
      if (!config.secretKey)
        checks.push({
          name: 'secret key',
          ok: false,
          detail: 'TERN_SECRET_KEY is not set',
          fix: 'set TERN_SECRET_KEY (32 characters or more, the same on every node): openssl rand -base64 32',
        });
    } else {
      checks.push({ name: 'PostgreSQL', ok: true, warn: false, detail: 'not used (SQLite)' });
    }
    if (!postgres || checks.find((c) => c.name === 'PostgreSQL')?.ok) {
      try {
        const { openStore } = await import('../../store/db.ts');
        const { migrationStatus } = await import('../../store/migration-status.ts');
        const path = config.databaseUrl.slice('sqlite:'.length);
        if (!postgres && !existsSync(path)) {
          checks.push({ name: 'database', ok: true, warn: true, detail: `${path} does not exist yet`, fix: 'tern serve (or tern migrate) creates it' });
        } else {
          const store = await openStore(config.databaseUrl, 'tern-doctor', { migrate: false });
          try {
            await store.ping();
            const { applied, pending, unknown } = await migrationStatus(store);
            const level = `${applied.length} migrations applied, the newest ${applied.at(-1)?.name ?? 'none'}`;
            checks.push(
              pending.length
                ? {
                    name: 'database',
                    ok: true,
                    warn: true,
                    detail: `${redact(config.databaseUrl)}: ${level}; ${pending.length} pending`,
                    fix: 'tern migrate (tern serve applies them too)',
                  }
                : unknown.length
                  ? {
                      name: 'database',
                      ok: true,
                      warn: true,
                      detail: `${redact(config.databaseUrl)}: ${level}, ${unknown.length} of them by a newer Tern`,
                      fix: 'upgrade this installation to the version the other nodes run',
                    }
                  : { name: 'database', ok: true, detail: `${redact(config.databaseUrl)}: up to date (${level}, 0 pending)` },
            );
          } finally {
            await store.close();
          }
        }
      } catch (err) {
        checks.push({
          name: 'database',
          ok: false,
          detail: `${redact(config.databaseUrl)}: ${(err as Error).message}`,
          fix: 'check that the path or database exists and is writable',
        });
      }
    }

    const ports: Array<[string, string, number | null]> = [
      ['HTTP port', config.httpHost, config.httpPort],
      ['SMPP port', config.smppHost, config.smppPort],
      ['HTTPS port', config.httpHost, config.httpsPort],
      ['SMPP TLS port', config.smppHost, config.smppTlsPort],
    ];
    for (const [name, host, port] of ports) {
      if (port === null || port === 0) continue;
      const problem = await portFree(host, port);
      if (problem === null) checks.push({ name, ok: true, detail: `${host}:${port} is free` });
      else if (name === 'HTTP port' && (await tern(host, port)))
        checks.push({
          name,
          ok: true,
          warn: true,
          detail: `${host}:${port}: a Tern already answers there`,
          fix: 'stop it first, or choose another TERN_HTTP_PORT',
        });
      else
        checks.push({
          name,
          ok: false,
          detail: `${host}:${port}: ${problem}`,
          fix: problem === 'EADDRINUSE' ? `another program listens there: stop it or choose another port` : 'choose another address or port',
        });
    }
  }

  if (config) {
    // The engine tern serve would use (TERN_TTS_ENGINE): the built-in one, or the espeak-ng program.
    try {
      const { createTextToSpeech } = await import('../../speech/engine.ts');
      const tts = createTextToSpeech(config.tts);
      const a = await tts.availability();
      await tts.close();
      const fix = config.tts.engine === 'espeak-ng' ? 'apt install espeak-ng, or TERN_TTS_ENGINE=wasm (built in)' : 'reinstall the packages (npm ci)';
      checks.push(
        a.ok
          ? { name: 'text-to-speech', ok: true, detail: `${config.tts.engine}: speaks every voice language (${a.version})` }
          : {
              name: 'text-to-speech',
              ok: true,
              warn: true,
              detail: `${config.tts.engine}: ${a.reason}; voice messages would answer 503 (SMS and RCS work)`,
              fix,
            },
      );
    } catch (err) {
      checks.push({ name: 'text-to-speech', ok: true, warn: true, detail: (err as Error).message, fix: 'TERN_TTS_ENGINE=wasm (built in)' });
    }
  }

  const { CONSOLE_DIST } = await import('../../doors/console/routes.ts');
  checks.push(
    existsSync(`${CONSOLE_DIST}/index.html`)
      ? { name: 'console', ok: true, detail: 'built (served at /console/)' }
      : { name: 'console', ok: true, warn: true, detail: 'not built: /console/ says so', fix: 'npm run build:console (npm ci runs it)' },
  );
  const node = process.versions.node.split('.').map(Number);
  const nodeOk = node[0]! > 20 || (node[0] === 20 && node[1]! >= 19);
  checks.push({ name: 'Node.js', ok: nodeOk, detail: process.versions.node, ...(!nodeOk && { fix: 'Node.js 20.19 or later is required' }) });

  if (o.json) json(io, checks);
  else {
    const c = colours(io);
    for (const ch of checks) {
      const mark = !ch.ok ? c.red('✗') : ch.warn ? c.yellow('!') : c.green('✓');
      line(io, `${mark} ${ch.name.padEnd(14)} ${ch.detail}`);
      if (ch.fix) line(io, `  ${' '.repeat(14)} ${c.dim('→')} ${ch.fix}`);
    }
  }
  if (checks.some((ch) => !ch.ok)) throw new CliError(`${checks.filter((ch) => !ch.ok).length} problem(s) to fix`, EXIT.FAILED);
}
