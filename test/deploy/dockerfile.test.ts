// The image's recipe, read instruction by instruction (no container engine runs here, and hadolint is not in Debian):
// what it is built from, what the last stage holds, who runs it, and how it starts, stops and says it is ready.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { envPairs, execForm, healthcheck, parseDockerfile, parseInstructions, type Stage } from '../support/dockerfile.ts';

const dockerfile = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
const final = dockerfile.stages.at(-1)!;
const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  scripts: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const last = (stage: Stage, keyword: string) => all(stage, keyword).at(-1);
const stageNamed = (name: string) => dockerfile.stages.find((s) => s.name === name) ?? assert.fail(`no stage named ${name}`);

/** COPY's sources and destination, and the stage it copies from (null: the build context). */
function copies(stage: Stage): Array<{ from: string | null; sources: string[]; dest: string }> {
  return all(stage, 'COPY').map((c) => {
    const from = /--from=(\S+)/.exec(c.args)?.[1] ?? null;
    const words = c.args.split(/\s+/).filter((w) => !w.startsWith('--'));
    return { from, sources: words.slice(0, -1), dest: words.at(-1)! };
  });
}

/** Runs a command with node as this test's node and answers its exit code. */
function exitCode(command: string[], env: Record<string, string>): Promise<number | null> {
  const [program, ...args] = command;
  assert.equal(program, 'node');
  const child = spawn(process.execPath, args, { env: { ...env, PATH: process.env.PATH ?? '' }, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('the Dockerfile parser', () => {
  test('joins continuation lines, drops comments (also between continuations), keeps each instruction’s line', () => {
    const ins = parseInstructions('# syntax=docker/dockerfile:1\nFROM a AS b\nRUN one \\\n  # a comment\n  two\n\nenv A=1 B="x y"\n');
    assert.deepEqual(ins.map((i) => [i.keyword, i.args, i.line]), [['FROM', 'a AS b', 2], ['RUN', 'one   two', 3], ['ENV', 'A=1 B="x y"', 7]]);
    assert.deepEqual(envPairs('A=1 B="x y" C=sqlite:/d/t.db'), { A: '1', B: 'x y', C: 'sqlite:/d/t.db' });
    assert.deepEqual(envPairs('A some value'), { A: 'some value' });
    assert.throws(() => parseInstructions('RUN a \\\n'), /continuation that never ends/);
    assert.throws(() => parseDockerfile('RUN x\nFROM a'), /before the first FROM/);
  });

  test('tells the exec form from the shell form, which a JSON mistake silently turns into', () => {
    assert.deepEqual(execForm('["node", "main.js"]'), ['node', 'main.js']);
    assert.equal(execForm('node main.js'), null);
    assert.equal(execForm("['node', 'main.js']"), null, 'single quotes are not JSON: the builder runs it through a shell');
    assert.equal(execForm('["node", 1]'), null);
    const h = healthcheck('--interval=5s --retries=3 CMD ["node", "-e", "0"]');
    assert.deepEqual(h, { options: { interval: '5s', retries: '3' }, command: ['node', '-e', '0'] });
    assert.equal(healthcheck('NONE'), 'NONE');
    assert.throws(() => healthcheck('--interval=5s node x'));
  });

  test('substitutes global ARG defaults in FROM', () => {
    const d = parseDockerfile('ARG BASE=node:24-slim\nFROM ${BASE} AS one\nFROM $BASE\n');
    assert.deepEqual(d.stages.map((s) => [s.from, s.name]), [['node:24-slim', 'one'], ['node:24-slim', null]]);
  });
});

describe('Dockerfile', () => {
  test('multi-stage, every stage on the official slim Node 24 image', () => {
    assert.ok(dockerfile.stages.length >= 2, 'a build stage and a final stage');
    for (const s of dockerfile.stages) assert.match(s.from, /^node:24(-bookworm)?-slim(@sha256:[0-9a-f]{64})?$/, `stage ${s.name ?? '(final)'}`);
    assert.equal(final.name, null, 'the last stage is the image');
  });

  test('the build stage compiles with npm ci and npm run build; the Node binaries of the install are left out everywhere', () => {
    const runs = dockerfile.stages.flatMap((s) => all(s, 'RUN').map((r) => ({ stage: s, args: r.args })));
    const build = runs.find((r) => /\bnpm run build\b/.test(r.args)) ?? assert.fail('no stage runs npm run build');
    assert.ok(all(build.stage, 'RUN').some((r) => /\bnpm ci\b/.test(r.args)), 'npm ci before the build');
    // npm ci for Linux would bring a Node binary (node-linux-*) the base image has already.
    const nodeBinaries = Object.keys(packageJson.optionalDependencies ?? {}).filter((n) => n.startsWith('node-linux-'));
    assert.ok(nodeBinaries.length > 0, 'package.json brings Node through node-linux-* packages');
    const deletion = runs.find((r) => /\bnpm pkg delete\b/.test(r.args)) ?? assert.fail('nothing removes the node-linux-* packages');
    const deleted = [...deletion.args.matchAll(/optionalDependencies\.(\S+)/g)].map((m) => m[1]);
    assert.deepEqual(deleted.sort(), nodeBinaries.sort(), 'every node-linux-* package is removed');
    for (const r of runs.filter((x) => /\bnpm ci\b/.test(x.args))) {
      const manifest = copies(r.stage).find((c) => c.sources.some((s) => s.endsWith('package.json')));
      assert.equal(manifest?.from, deletion.stage.name, `stage ${r.stage.name ?? '(final)'} installs from the manifest without them`);
      assert.match(r.args, /--ignore-scripts/, 'the package’s prepare step would build before the sources are copied');
    }
  });

  test('the last stage holds dist/, console/dist, bin/, package.json, the SDK and production node_modules, owned by root', () => {
    let workdir = '/';
    for (const i of final.instructions) {
      if (i.keyword === 'WORKDIR') workdir = i.args;
      if (i.keyword === 'COPY') assert.equal(workdir, '/app', `line ${i.line}: the application is copied into /app`);
    }
    const held = copies(final).flatMap((c) => (c.dest.endsWith('/') || c.dest === '.' ? c.sources.map((s) => join(c.dest, basename(s))) : [c.dest]));
    assert.deepEqual(held.sort(), ['bin', 'console/dist', 'dist', 'node_modules', 'package.json', 'packages/sdk/dist', 'packages/sdk/package.json']);
    for (const c of all(final, 'COPY')) assert.doesNotMatch(c.args, /--chown|--chmod/, `line ${c.line}: the application is not the server's to change`);
    const modules = copies(final).find((c) => c.dest === 'node_modules')!;
    assert.ok(all(stageNamed(modules.from!), 'RUN').some((r) => /\bnpm ci\b.*--omit=dev/.test(r.args)), 'production dependencies only');
    for (const built of ['dist', 'packages/sdk/dist']) {
      const compiled = copies(final).find((c) => c.dest === built)!;
      assert.ok(all(stageNamed(compiled.from!), 'RUN').some((r) => /\bnpm run build\b/.test(r.args)), `${built} as npm run build makes it`);
    }
    // node_modules/@tern/sdk is the workspace's link: each install has the SDK's manifest to make it.
    for (const stage of dockerfile.stages.filter((s) => all(s, 'RUN').some((r) => /\bnpm ci\b/.test(r.args)))) {
      const manifest = stage.instructions.findIndex((i) => i.keyword === 'COPY' && /\bpackages\/sdk\/package\.json\b/.test(i.args));
      const install = stage.instructions.findIndex((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
      assert.ok(manifest >= 0 && manifest < install, `stage ${stage.name}: the SDK's manifest before npm ci`);
    }
  });

  test('runs as a user of its own, not root, who owns the one volume, which holds the database', () => {
    const user = last(final, 'USER')?.args ?? assert.fail('no USER: the image would run as root');
    const [uid, gid] = user.split(':');
    assert.match(uid!, /^\d+$/, 'numeric, so that a runtime can tell it is not root without reading /etc/passwd');
    assert.notEqual(Number(uid), 0);
    const setup = all(final, 'RUN').map((r) => r.args).join('\n');
    assert.match(setup, new RegExp(`useradd\\b[^\\n]*--uid ${uid}\\b`), 'the user exists in the image');
    assert.match(setup, new RegExp(`groupadd\\b[^\\n]*--gid ${gid}\\b`), 'its group too');
    const volumes = all(final, 'VOLUME');
    assert.equal(volumes.length, 1, 'one volume');
    assert.deepEqual(execForm(volumes[0]!.args), ['/var/lib/tern']);
    assert.match(setup, /install -d -o tern -g tern -m 0700 \/var\/lib\/tern/, 'the volume’s directory belongs to that user, and to it alone');
    const env = Object.assign({}, ...all(final, 'ENV').map((e) => envPairs(e.args))) as Record<string, string>;
    assert.equal(env.TERN_DATABASE_URL, 'sqlite:/var/lib/tern/tern.db', 'the database (and secret.key beside it) in the volume');
    assert.equal(last(final, 'WORKDIR')?.args, '/var/lib/tern', 'the server works in its volume: relative paths land there');
  });

  test('exposes the HTTP and SMPP ports Tern listens on by default', () => {
    const ports = all(final, 'EXPOSE').flatMap((e) => e.args.split(/\s+/));
    const defaults = loadConfig({});
    assert.deepEqual(ports.sort(), [String(defaults.httpPort), String(defaults.smppPort)].sort());
    assert.deepEqual(ports.sort(), ['8080', '8776']);
  });

  test('starts `node dist/main.js serve` in exec form, with the memory settings of `npm run serve`', () => {
    const entrypoint = execForm(last(final, 'ENTRYPOINT')!.args) ?? assert.fail('ENTRYPOINT in shell form: SIGTERM would reach a shell, not Node');
    const cmd = execForm(last(final, 'CMD')!.args) ?? assert.fail('CMD in shell form');
    assert.deepEqual([...entrypoint, ...cmd], ['node', '--max-semi-space-size=16', '/app/dist/main.js', 'serve']);
    const serve = packageJson.scripts.serve!;
    for (const flag of entrypoint.filter((a) => a.startsWith('--'))) assert.ok(serve.includes(flag), `${flag} as npm run serve`);
    const env = Object.assign({}, ...all(final, 'ENV').map((e) => envPairs(e.args))) as Record<string, string>;
    assert.match(serve, new RegExp(`MALLOC_ARENA_MAX=\\$\\{MALLOC_ARENA_MAX:-${env.MALLOC_ARENA_MAX}\\}`), 'MALLOC_ARENA_MAX as npm run serve');
    const stop = last(final, 'STOPSIGNAL')?.args ?? 'SIGTERM';
    assert.equal(stop, 'SIGTERM');
  });

  test('its HEALTHCHECK asks /readyz with Node (no curl in a slim image): healthy on 200, not on 503 or no answer', async () => {
    const h = healthcheck(last(final, 'HEALTHCHECK')?.args ?? assert.fail('no HEALTHCHECK'));
    assert.notEqual(h, 'NONE');
    if (h === 'NONE') return;
    const command = h.command ?? assert.fail('HEALTHCHECK CMD in shell form: /bin/sh -c, and a JSON mistake goes unnoticed');
    assert.equal(command[0], 'node');
    assert.ok(h.options.timeout && h.options.interval && h.options['start-period'], 'interval, timeout and start period set');

    const asked: string[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      asked.push(req.url!);
      res.writeHead(status).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = String((server.address() as { port: number }).port);
    try {
      assert.equal(await exitCode(command, { TERN_HTTP_PORT: port }), 0, 'ready');
      status = 503;
      assert.equal(await exitCode(command, { TERN_HTTP_PORT: port }), 1, 'not ready: the database does not answer');
      assert.deepEqual(asked, ['/readyz', '/readyz']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal(await exitCode(command, { TERN_HTTP_PORT: port }), 1, 'nothing listening');
  });
});

describe('.dockerignore', () => {
  // The allowlist form: `*`, then `!path` for what the build reads; the last rule that matches a path decides.
  const rules = readFileSync('.dockerignore', 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => ({ include: l.startsWith('!'), pattern: l.replace(/^!/, '').replace(/\/$/, '') }));
  const sent = (path: string) => {
    let included = true;
    for (const r of rules) {
      if (r.pattern === '*' || path === r.pattern || path.startsWith(`${r.pattern}/`)) included = r.include;
    }
    return included;
  };

  test('sends the build everything it copies from the context', () => {
    assert.equal(rules[0]?.pattern, '*', 'an allowlist: what is not named stays out');
    const fromContext = dockerfile.stages.flatMap((s) => copies(s).filter((c) => c.from === null).flatMap((c) => c.sources));
    assert.ok(fromContext.length > 0);
    for (const source of fromContext) assert.ok(sent(source), `${source} is copied but not sent`);
  });

  test('keeps out installed packages, build output, data, secrets and git', () => {
    for (const path of ['node_modules', 'dist', 'console/dist', 'console/dist/index.html', 'data/tern.db', '.git', 'deploy/secrets/admin_key', '.test-build', 'test']) {
      assert.equal(sent(path), false, path);
    }
  });
});
