// deploy/compose.yaml: valid against the Compose Specification's JSON schema (no container engine runs here), and
// coherent where the schema cannot see: what it builds, what it waits for, which secrets reach which setting.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { composeValidator, interpolate } from '../support/compose-schema.ts';
import { execForm, parseDockerfile } from '../support/dockerfile.ts';

const FILE = 'deploy/compose.yaml';
const text = readFileSync(FILE, 'utf8');
// Compose reads YAML merge keys (`<<: *anchor`).
const raw = parse(text, { merge: true }) as any;
const compose = interpolate(raw, {}) as any;
const validate = composeValidator();
const ternNodes = Object.entries(compose.services as Record<string, any>).filter(([name]) => name.startsWith('tern'));

const errorsOf = (doc: unknown) => (validate(doc) ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message}`));
const clone = <T>(v: T): T => structuredClone(v);

describe('Compose interpolation (as the tests read the file)', () => {
  test('defaults, required values, escapes', () => {
    const env = { SET: 'x', EMPTY: '' };
    assert.equal(interpolate('${SET:-d}/${UNSET:-d}/${EMPTY:-d}/${EMPTY-d}/$SET/$$SET', env), 'x/d/d//x/$SET');
    assert.equal(interpolate('${UNSET:-${SET}}', env), 'x', 'a default may itself be interpolated');
    assert.throws(() => interpolate('${UNSET:?set it}', env), /UNSET: set it/);
    assert.throws(() => interpolate('${EMPTY:?}', env), /EMPTY/);
    assert.throws(() => interpolate('${not valid}', env), /invalid interpolation/);
    assert.deepEqual(interpolate({ a: ['${SET}', 1, true] }, env), { a: ['x', 1, true] });
  });
});

describe(FILE, () => {
  test('is valid against the Compose Specification’s schema, as written and interpolated, also with other ports', () => {
    assert.deepEqual(errorsOf(raw), []);
    assert.deepEqual(errorsOf(compose), []);
    const moved = interpolate(raw, { TERN_1_HTTP_PORT: '9080', TERN_2_SMPP_PORT: '9777', TERN_SECRETS_DIR: '/etc/tern/secrets' });
    assert.deepEqual(errorsOf(moved), []);
    assert.deepEqual(moved.services['tern-1'].ports, ['9080:8080', '8776:8776']);
    assert.equal(moved.secrets.secret_key.file, '/etc/tern/secrets/secret_key');
  });

  test('the schema refuses what Compose refuses (the validator is not a formality)', () => {
    const unknownKey = clone(compose);
    unknownKey.services['tern-1'].restart_policy = 'always';
    assert.match(errorsOf(unknownKey).join('\n'), /\/services\/tern-1 must NOT have additional properties/);
    const badCondition = clone(compose);
    badCondition.services['tern-1'].depends_on.postgres.condition = 'service_ready';
    assert.match(errorsOf(badCondition).join('\n'), /depends_on\/postgres\/condition must be equal to one of the allowed values/);
    const badHealthcheck = clone(compose);
    badHealthcheck.services.postgres.healthcheck.interval = 5;
    assert.match(errorsOf(badHealthcheck).join('\n'), /healthcheck\/interval must be string/);
    const badSecret = clone(compose);
    badSecret.secrets.admin_key = { path: './secrets/admin_key' };
    assert.match(errorsOf(badSecret).join('\n'), /\/secrets\/admin_key must NOT have additional properties/);
    const badName = clone(compose);
    badName.services['tern 3'] = badName.services['tern-1'];
    assert.notDeepEqual(errorsOf(badName), []);
    assert.match(errorsOf({ services: { x: { image: 'a', ports: [true] } } }).join('\n'), /\/services\/x\/ports\/0 must be/);
    assert.deepEqual(errorsOf({ services: { x: { image: 'a', ports: ['8080:8080'] } } }), []);
  });

  test('PostgreSQL and two Tern nodes built from the repository root; the nodes start once PostgreSQL is healthy', () => {
    assert.ok(compose.services.postgres, 'a PostgreSQL service');
    assert.match(compose.services.postgres.image, /^postgres:\d+/);
    assert.equal(ternNodes.length, 2);
    for (const [name, node] of ternNodes) {
      const context = resolve(dirname(FILE), node.build.context);
      assert.equal(context, resolve('.'), `${name} is built from the repository root`);
      assert.equal(resolve(context, node.build.dockerfile ?? 'Dockerfile'), resolve('Dockerfile'));
      assert.equal(node.depends_on.postgres.condition, 'service_healthy', `${name} waits for PostgreSQL`);
      for (const dep of Object.keys(node.depends_on)) assert.ok(compose.services[dep], `${name} depends on ${dep}, which exists`);
      assert.ok(node.init, `${name}: an init process forwards SIGTERM from the first instant`);
      assert.match(node.stop_grace_period, /^\d+s$/);
      assert.ok(Number.parseInt(node.stop_grace_period, 10) >= 20, `${name}: time to drain`);
    }
    // The nodes start together: migrations take a lock, so the second waits for the first's, never on the first node.
    assert.equal(compose.services['tern-2'].depends_on['tern-1'], undefined);
  });

  test('every service has a health check; a node’s asks /readyz on the port its container listens on', () => {
    for (const [name, service] of Object.entries(compose.services as Record<string, any>)) {
      const hc = service.healthcheck;
      assert.ok(hc && Array.isArray(hc.test) && hc.test[0] === 'CMD', `${name}: a health check in exec form`);
      assert.ok(hc.interval && hc.timeout && hc.retries && hc.start_period, `${name}: interval, timeout, retries, start period`);
    }
    assert.equal(compose.services.postgres.healthcheck.test[1], 'pg_isready');
    const containerPort = loadConfig({}).httpPort;
    for (const [name, node] of ternNodes) {
      const script = node.healthcheck.test.at(-1) as string;
      assert.ok(script.includes(`http://127.0.0.1:${containerPort}/readyz`), `${name}: ${script}`);
      assert.ok(node.ports.some((p: string) => p.endsWith(`:${containerPort}`)), `${name} publishes that port`);
    }
  });

  test('nodes have their own ids and host ports', () => {
    const ids = ternNodes.map(([, n]) => n.environment.TERN_NODE_ID);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.every((id) => typeof id === 'string' && id !== ''));
    const hostPorts = ternNodes.flatMap(([, n]) => n.ports.map((p: string) => p.split(':')[0]));
    assert.equal(new Set(hostPorts).size, hostPorts.length, hostPorts.join(' '));
    assert.ok(ternNodes.every(([, n]) => n.ports.some((p: string) => p.endsWith(':8776'))), 'SMPP published');
  });

  test('named volumes for PostgreSQL’s data and each node’s data directory (the image’s volume)', () => {
    const imageVolume = execForm(parseDockerfile(readFileSync('Dockerfile', 'utf8')).stages.at(-1)!.instructions.find((i) => i.keyword === 'VOLUME')!.args)![0];
    const declared = new Set(Object.keys(compose.volumes));
    const mounts = (service: any) => (service.volumes as string[]).map((v) => v.split(':') as [string, string]);
    assert.deepEqual(mounts(compose.services.postgres), [['postgres-data', '/var/lib/postgresql/data']]);
    for (const [name, node] of ternNodes) {
      const [source, target] = mounts(node)[0]!;
      assert.equal(target, imageVolume, name);
      assert.ok(declared.has(source), `${name}: ${source} is a named volume`);
    }
    const used = Object.values(compose.services as Record<string, any>).flatMap((s) => mounts(s).map(([source]) => source));
    assert.deepEqual([...declared].sort(), [...new Set(used)].sort(), 'every named volume is used, every one used is declared');
  });

  test('secrets reach PostgreSQL and Tern as files, and Tern reads each through its TERN_*_FILE setting', () => {
    const declared = Object.keys(compose.secrets);
    for (const [name, secret] of Object.entries(compose.secrets as Record<string, any>)) {
      assert.ok(secret.file || secret.environment, `${name} comes from a file or the environment`);
    }
    const pg = compose.services.postgres;
    assert.equal(pg.environment.POSTGRES_PASSWORD_FILE, '/run/secrets/postgres_password');
    assert.ok(pg.secrets.includes('postgres_password'));
    assert.equal(pg.environment.POSTGRES_PASSWORD, undefined, 'no password in the environment');

    const dir = mkdtempSync(join(tmpdir(), 'tern-compose-'));
    try {
      for (const [name, node] of ternNodes) {
        const fileSettings = Object.entries(node.environment as Record<string, string>).filter(([k]) => k.endsWith('_FILE'));
        assert.deepEqual(fileSettings.map(([k]) => k).sort(), ['TERN_ADMIN_KEY_FILE', 'TERN_DATABASE_URL_FILE', 'TERN_SECRET_KEY_FILE']);
        const values: Record<string, string> = {
          TERN_DATABASE_URL: 'postgres://tern:pw@postgres:5432/tern',
          TERN_SECRET_KEY: 'k'.repeat(44),
          TERN_ADMIN_KEY: 'a'.repeat(48),
        };
        const env: Record<string, string> = { ...node.environment };
        for (const [setting, path] of fileSettings) {
          const secret = /^\/run\/secrets\/([\w.-]+)$/.exec(path)?.[1] ?? assert.fail(`${name} ${setting}: ${path} is not a secret`);
          assert.ok(node.secrets.includes(secret), `${name} is given ${secret}`);
          assert.ok(declared.includes(secret));
          // The file as the operator writes it (a final line break), where the container finds it.
          const local = join(dir, secret);
          writeFileSync(local, `${values[setting.replace(/_FILE$/, '')]}\n`);
          env[setting] = local;
        }
        // Over the image's own defaults, as the container sees its environment.
        const config = loadConfig({ TERN_DATABASE_URL: 'sqlite:/var/lib/tern/tern.db', ...env });
        assert.equal(config.databaseUrl, values.TERN_DATABASE_URL, `${name}: PostgreSQL, not the image's SQLite default`);
        assert.equal(config.secretKey, values.TERN_SECRET_KEY);
        assert.equal(config.adminKey, values.TERN_ADMIN_KEY);
        assert.equal(config.nodeId, node.environment.TERN_NODE_ID);
        assert.equal(config.publicUrl, null, 'TERN_PUBLIC_URL left empty is unset');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the file’s own instructions make a database URL that PostgreSQL’s settings answer', () => {
    const printf = /printf '(postgres:\/\/[^']+?)(\\n)?'/.exec(text)?.[1] ?? assert.fail('no instruction for the database URL');
    const url = new URL(printf.replace('%s', 'password'));
    const pg = compose.services.postgres.environment;
    assert.equal(url.username, pg.POSTGRES_USER);
    assert.equal(url.pathname, `/${pg.POSTGRES_DB}`);
    assert.ok(compose.services[url.hostname], `${url.hostname} is the PostgreSQL service`);
    assert.equal(url.port, '5432');
    for (const secret of Object.keys(compose.secrets)) assert.ok(text.includes(`secrets/${secret}`), `the instructions make ${secret}`);
  });
});
