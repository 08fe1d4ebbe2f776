// deploy/tern.service: what it runs and how it is confined, and systemd's own verdict (`systemd-analyze verify`, and
// `systemd-analyze security` for the exposure its hardening leaves).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { envPairs, execForm, parseDockerfile } from '../support/dockerfile.ts';

const UNIT = 'deploy/tern.service';
const text = readFileSync(UNIT, 'utf8');

/** Section → directive → its values in order (a directive may be given several times). */
function parseUnit(source: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let section: Record<string, string[]> | null = null;
  for (const [i, line] of source.split('\n').entries()) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(t);
    if (header) {
      section = out[header[1]!] ??= {};
      continue;
    }
    const m = /^(\w+)=(.*)$/.exec(t);
    if (!m || !section) throw new Error(`${UNIT}:${i + 1}: ${t}`);
    (section[m[1]!] ??= []).push(m[2]!);
  }
  return out;
}

const unit = parseUnit(text);
const service = unit.Service!;
const one = (name: string) => {
  const v = service[name];
  assert.ok(v, `${name} is set`);
  return v.at(-1)!;
};

const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const systemdVersion = analyze.status === 0 ? Number(/systemd (\d+)/.exec(analyze.stdout)?.[1]) : null;
const dir = mkdtempSync(join(tmpdir(), 'tern-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The unit with Node at the path of this test's Node: verify wants ExecStart's program to exist. */
function runnableCopy(name: string, edit: (s: string) => string = (s) => s): string {
  const path = join(dir, name);
  writeFileSync(path, edit(text.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `)));
  return path;
}

function verify(path: string) {
  const r = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8', cwd: dir });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe(UNIT, () => {
  test('runs the build in /opt/tern with /usr/bin/node as the image does, its data in /var/lib/tern', () => {
    const final = parseDockerfile(readFileSync('Dockerfile', 'utf8')).stages.at(-1)!;
    const entrypoint = execForm(final.instructions.findLast((i) => i.keyword === 'ENTRYPOINT')!.args)!;
    const cmd = execForm(final.instructions.findLast((i) => i.keyword === 'CMD')!.args)!;
    const image = [...entrypoint, ...cmd].map((a) => a.replace(/^node$/, '/usr/bin/node').replace(/^\/app\//, '/opt/tern/'));
    assert.equal(one('ExecStart'), image.join(' '));
    assert.equal(one('WorkingDirectory'), '/var/lib/tern', 'its state directory, as the image works in its volume');
    assert.equal(one('Type'), 'exec');
    const imageEnv = Object.assign({}, ...final.instructions.filter((i) => i.keyword === 'ENV').map((i) => envPairs(i.args))) as Record<string, string>;
    const env = Object.fromEntries(service.Environment!.flatMap((e) => e.split(/\s+/)).map((p) => p.split('=', 2) as [string, string]));
    assert.deepEqual(env, imageEnv, 'the same defaults as the image');
    assert.equal(one('StateDirectory'), 'tern');
    assert.equal(env.TERN_DATABASE_URL, 'sqlite:/var/lib/tern/tern.db', 'the database in the state directory');
    assert.equal(one('StateDirectoryMode'), '0700');
    assert.equal(one('EnvironmentFile'), '-/etc/tern/tern.env', 'settings from /etc/tern/tern.env, when it exists');
  });

  test('as its own unprivileged user, stopped with SIGTERM and the time to drain, restarted on failure', () => {
    assert.equal(one('User'), 'tern');
    assert.notEqual(one('User'), 'root');
    assert.equal(one('KillSignal'), 'SIGTERM');
    assert.ok(Number(one('TimeoutStopSec')) >= 30, 'time to drain');
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('RestartPreventExitStatus'), '78', 'a wrong setting (exit 78) is not retried in a loop');
    assert.equal(one('LimitNOFILE'), '65536');
    assert.deepEqual(unit.Install?.WantedBy, ['multi-user.target']);
  });

  test('hardened, but lets V8 compile: no MemoryDenyWriteExecute', () => {
    for (const [name, value] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      CapabilityBoundingSet: '',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      SystemCallErrorNumber: 'EPERM',
    })) {
      assert.equal(one(name), value, name);
    }
    assert.equal(service.SystemCallFilter?.[0], '@system-service');
    assert.equal(service.MemoryDenyWriteExecute, undefined, 'the JIT needs pages that are written and then run');
    assert.ok(!/^MemoryDenyWriteExecute=/m.test(text));
  });

  test('systemd-analyze verify finds nothing to say', { skip: systemdVersion === null && 'systemd-analyze not installed (Debian package systemd)' }, () => {
    const r = verify(runnableCopy('tern.service'));
    assert.equal(r.output, '');
    assert.equal(r.status, 0);
    // It does speak when something is wrong, so its silence means something.
    const typo = verify(runnableCopy('typo.service', (s) => s.replace('ProtectHome=yes', 'ProtectHomme=yes')));
    assert.match(typo.output, /Unknown key 'ProtectHomme'/);
    const missing = verify(runnableCopy('missing.service', (s) => s.replace(/^ExecStart=\S+/m, 'ExecStart=/nonexistent/node')));
    assert.notEqual(missing.status, 0);
    assert.match(missing.output, /\/nonexistent\/node is not executable/);
  });

  test(
    'systemd-analyze security rates its exposure 2.0 or less ("OK")',
    { skip: (systemdVersion === null || systemdVersion < 250) && `systemd-analyze security --offline needs systemd 250 or later (${systemdVersion ?? 'not installed'})` },
    () => {
      const security = (threshold: number) =>
        spawnSync('systemd-analyze', ['security', '--offline=yes', `--threshold=${threshold}`, join(dir, 'tern.service')], { encoding: 'utf8', cwd: dir });
      runnableCopy('tern.service');
      const r = security(20);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const level = Number(/Overall exposure level for tern\.service: (\d+\.\d)/.exec(r.stdout)?.[1]);
      assert.ok(level <= 2.0, `exposure ${level}`);
      assert.notEqual(security(Math.floor(level * 10) - 1).status, 0, 'the threshold is enforced');
    },
  );
});
