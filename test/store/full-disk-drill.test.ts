// The full-disk drill on SQLite: Tern's database on a small tmpfs filled while sends run, then freed; a start on a
// full disk. No process exits by itself, sends are answered 201 or 507 (with Retry-After), /readyz says not ready
// while the disk is full, everything resumes once space is freed, and nothing answered 201 is lost.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { httpLoad } from '../cluster/database-faults.ts';
import { freePort, startTernProcess, TERN_MAIN } from '../support/process.ts';
import { createTenant, request, TEST_ADMIN_KEY, TEST_SECRET_KEY, UNLIMITED } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

/** Writes `path` until the filesystem has no room left (ENOSPC); answers the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'a');
  let written = 0;
  try {
    for (const size of [256 * 1024, 16 * 1024, 1024]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** `mount -t tmpfs` of `sizeMb` on `dir`, or why it cannot be done here. */
function mountTmpfs(dir: string, sizeMb: number): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `mounting a tmpfs is not permitted here (${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()})`;
  }
}

interface Started {
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** `tern serve` on `databaseUrl`, its standard output kept; waits for /healthz only (a full disk is not ready). */
async function startOnly(databaseUrl: string): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [TERN_MAIN, 'serve'], {
    env: {
      ...process.env,
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: String(port),
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: String(await freePort()),
      TERN_DATABASE_URL: databaseUrl,
      TERN_ADMIN_KEY: TEST_ADMIN_KEY,
      TERN_SECRET_KEY: TEST_SECRET_KEY,
      TERN_RATE_LIMITS: UNLIMITED,
      TERN_LOG_LEVEL: 'warn',
      TERN_LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      eventually(async () => ((await fetch(`${url}/healthz`).catch(() => null))?.ok ? true : undefined), 90_000, 'Tern to answer /healthz'),
      exited.then((code) => {
        throw new Error(`tern exited (${code}) at start: ${out}`);
      }),
    ]);
  } catch (err) {
    // Not left running: a live child would keep the file's process, and the suite, waiting.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    throw err;
  }
  return {
    url,
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

function integrity(file: string): { ok: string; ids: Set<string> } {
  const db = new Database(file, { readonly: true });
  try {
    const ok = db.pragma('integrity_check', { simple: true }) as string;
    const ids = new Set((db.prepare('select id from messages').all() as Array<{ id: string }>).map((r) => r.id));
    return { ok, ids };
  } finally {
    db.close();
  }
}

test('SQLite on a full disk: 507 and not ready while full, everything back once space is freed, nothing accepted lost; a start on a full disk serves reads', async (t) => {
  if (process.platform !== 'linux') {
    t.skip('the full-disk drill mounts a tmpfs: Linux only');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tern-full-disk-'));
  const why = mountTmpfs(dir, 32);
  if (why) {
    rmSync(dir, { recursive: true, force: true });
    t.skip(why);
    return;
  }
  const file = join(dir, 'tern.db');
  const filler = join(dir, 'filler');
  const processes: Array<{ stop(): Promise<void> }> = [];
  try {
    const node = await startTernProcess(`sqlite:${file}`, await freePort(), { TERN_SMPP_PORT: String(await freePort()) });
    processes.push(node);
    const tenant = await createTenant(node, { balance: 10_000 });

    // Sends run while the disk fills up.
    let stop = false;
    const load = httpLoad(node.url, tenant.key, 6, () => stop, 'full disk');
    await sleep(500);
    const filled = fill(filler);
    let readyWhileFull: { status: number; body: any } | null = null;
    try {
      await eventually(async () => (load.answers.some((a) => a.status === 507) ? true : undefined), 30_000, 'a send answered 507');
      const r = await request(node, 'GET', '/readyz');
      readyWhileFull = { status: r.status, body: r.body };
    } finally {
      stop = true;
      await load.done;
    }
    const fullAnswers = load.answers.filter((a) => a.status === 507);
    process.stdout.write(
      `# disk filled (${(filled / 1024).toFixed(0)} KiB of filler): ${load.answers.filter((a) => a.status === 201).length} sends accepted, ${fullAnswers.length} answered 507\n`,
    );
    assert.equal(node.child.exitCode, null, 'Tern is running');
    assert.deepEqual(
      load.answers.filter((a) => a.status !== 201 && a.status !== 507),
      [],
      'every send answered 201 or 507',
    );
    for (const a of fullAnswers) {
      assert.equal(a.errorCode, '507.001');
      assert.ok(Number(a.retryAfter) > 0, 'a 507 says when to try again');
    }
    assert.equal(readyWhileFull?.status, 503, '/readyz is not ready while the disk is full');
    assert.match(String(readyWhileFull?.body.detail), /full/);

    // Space freed: ready again by itself, and sends accepted.
    rmSync(filler);
    await eventually(async () => ((await request(node, 'GET', '/readyz')).status === 200 ? true : undefined), 20_000, '/readyz ready once space is freed');
    const after = [];
    for (let i = 0; i < 20; i++) {
      const r = await request(node, 'POST', '/sms/v1/messages', {
        key: tenant.key,
        body: { recipient: { to: `33612${String(i).padStart(5, '0')}5` }, body: { text: `after ${i}` } },
      });
      assert.equal(r.status, 201, r.text);
      after.push(r.body.messageId as string);
    }
    // Idle, the log's file is truncated: it does not regrow to fill the freed space.
    await eventually(() => (!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size <= 1024 * 1024 ? true : undefined), 15_000, 'the idle log truncated');
    const wal = existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0;
    process.stdout.write(
      `# space freed: ready again, the log ${(wal / 1024).toFixed(0)} KiB beside a database of ${(statSync(file).size / 1024).toFixed(0)} KiB\n`,
    );
    await node.stop();

    const accepted = [...load.answers.flatMap((a) => (a.id ? [a.id] : [])), ...after];
    const first = integrity(file);
    assert.equal(first.ok, 'ok');
    assert.deepEqual(
      accepted.filter((id) => !first.ids.has(id)),
      [],
      'every message answered 201 is stored',
    );

    // A start on a full disk: it says why, serves reads, refuses writes with 507, and writes again once there is room.
    fill(filler);
    const full = await startOnly(`sqlite:${file}`);
    processes.push(full);
    assert.match(full.output(), /disk holding the database is full/, 'the start says the disk is full');
    const notReady = await request(full, 'GET', '/readyz');
    assert.equal(notReady.status, 503, notReady.text);
    const read = await request(full, 'GET', `/sms/v1/messages/${accepted[0]}`, { key: tenant.key });
    assert.equal(read.status, 200, read.text);
    const refused = await request(full, 'POST', '/sms/v1/messages', {
      key: tenant.key,
      body: { recipient: { to: '33612999995' }, body: { text: 'on a full disk' } },
    });
    assert.equal(refused.status, 507, refused.text);
    assert.equal(refused.body.errorCode, '507.001');
    rmSync(filler);
    await eventually(async () => ((await request(full, 'GET', '/readyz')).status === 200 ? true : undefined), 20_000, '/readyz ready once space is freed');
    const accepted2 = await request(full, 'POST', '/sms/v1/messages', {
      key: tenant.key,
      body: { recipient: { to: '33612999985' }, body: { text: 'room again' } },
    });
    assert.equal(accepted2.status, 201, accepted2.text);
    assert.equal(full.child.exitCode, null, 'Tern is running');
    await full.stop();
    const second = integrity(file);
    assert.equal(second.ok, 'ok');
    assert.ok(second.ids.has(accepted2.body.messageId), 'the send accepted after the full start is stored');

    // A database that does not exist yet cannot be made on a full disk: the start fails saying so.
    fill(filler);
    const port = await freePort();
    const failed = spawn(process.execPath, [TERN_MAIN, 'serve'], {
      env: {
        ...process.env,
        TERN_HTTP_HOST: '127.0.0.1',
        TERN_HTTP_PORT: String(port),
        TERN_SMPP_PORT: '0',
        TERN_DATABASE_URL: `sqlite:${join(dir, 'new.db')}`,
        TERN_SECRET_KEY: TEST_SECRET_KEY,
        TERN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    failed.stderr!.on('data', (b: Buffer) => (said += b.toString()));
    const code = await new Promise<number | null>((resolve) => failed.once('exit', (c) => resolve(c)));
    assert.notEqual(code, 0);
    assert.match(said, /full/, `the failed start says why: ${said}`);
  } finally {
    for (const p of processes) await p.stop().catch(() => undefined);
    try {
      execFileSync('umount', [dir]);
    } catch {
      execFileSync('umount', ['-l', dir]);
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
