import assert from 'node:assert/strict';
import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteCheckpointer } from '../../src/store/sqlite-checkpoints.ts';
import { eventually, sleep } from '../support/wait.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A database in WAL mode whose writer never checkpoints itself: what reaches the file is the checkpointer's doing. */
function walDatabase(): { db: Database.Database; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tern-checkpoints-'));
  dirs.push(dir);
  const file = join(dir, 'db.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('create table t (id integer primary key, body text)');
  return { db, file };
}

/** Rows of t, as the writer sees them. */
function rowsOf(db: Database.Database): number {
  return (db.prepare('select count(*) as n from t').get() as { n: number }).n;
}

/** Rows of t in the database file alone, as it would be read without its log. */
function rowsInFileAlone(file: string): number {
  const copy = `${file}.alone`;
  copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return rowsOf(db);
  } catch {
    return 0;
  } finally {
    db.close();
    rmSync(copy, { force: true });
  }
}

/** How many times the log has started over from its beginning: the checkpoint sequence in its header. */
function logRestarts(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

test('copies the log back into the database file while writes go on', async () => {
  const { db, file } = walDatabase();
  const checkpointer = new SqliteCheckpointer(file, { busyMs: 10, idleMs: 200, targetFrames: 100 });
  try {
    const insert = db.prepare('insert into t (body) values (?)');
    for (let i = 0; i < 50; i++) {
      insert.run('x'.repeat(2_000));
      await sleep(5);
    }
    await eventually(() => rowsInFileAlone(file) === 50, 30_000, 'every row in the database file');
    // The writer never checkpoints: the rows are there by the checkpointer's doing, whose count comes a message later.
    await eventually(() => checkpointer.checkpoints > 0, 10_000, 'the checkpoints counted');
  } finally {
    await checkpointer.stop();
    db.close();
  }
});

test('checkpoints seldom while writes trickle, and often while they pour', async () => {
  const { db, file } = walDatabase();
  // At a fixed 10 ms, two seconds of trickle would be checkpointed about 200 times, each copying the same pages.
  const checkpointer = new SqliteCheckpointer(file, { busyMs: 10, idleMs: 400, targetFrames: 200 });
  try {
    const insert = db.prepare('insert into t (body) values (?)');
    let from = checkpointer.checkpoints;
    let began = Date.now();
    // A commit every 10 ms writing one to five tables (pages), so the log's length from one look to the next varies as
    // under real writes.
    for (let k = 1; k <= 4; k++) db.exec(`create table t${k} (id integer primary key, body text)`);
    const tables = [insert, ...[1, 2, 3, 4].map((k) => db.prepare(`insert into t${k} (body) values (?)`))];
    const some = db.transaction((n: number) => {
      for (let k = 0; k < n; k++) tables[k]!.run('a trickle');
    });
    for (let i = 0; i < 200; i++) {
      some(1 + (i % 5));
      await sleep(10);
    }
    await sleep(50);
    const trickle = (checkpointer.checkpoints - from) / ((Date.now() - began) / 1000);
    assert.ok(trickle < 20, `${trickle.toFixed(1)} checkpoints a second at one small commit every 10 ms`);

    from = checkpointer.checkpoints;
    const before = rowsOf(db);
    began = Date.now();
    const many = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) insert.run('y'.repeat(3_000));
    });
    // Commits of twenty rows of a page each every 2 ms for a second: 30 times the trickle's pages, or so (unpaced, a
    // quiet machine wrote 90,000 pages a second, more than a disk copies back). Held to what was written, not to the
    // clock: with the suite's other files on both cores this thread may write only a few times what the trickle did
    // (a rate against the trickle's failed so: 4.7 checkpoints a second against 4.1).
    while (Date.now() - began < 1_000) {
      many(20);
      await sleep(2);
    }
    await sleep(50);
    const pages = rowsOf(db) - before;
    const pour = checkpointer.checkpoints - from;
    assert.ok(
      pour >= Math.max(2, pages / 800),
      `${pour} checkpoints while ${pages} pages poured: a checkpoint every ${Math.round(pages / pour)} pages, not about every 200`,
    );
    await eventually(() => rowsInFileAlone(file) === rowsOf(db), 30_000, 'all of it in the file');
  } finally {
    await checkpointer.stop();
    db.close();
  }
});

test('lets the log start over beside a writer that never pauses for long, without the writer checkpointing', async () => {
  // A checkpoint copies the log as it was when it began; commits every 2 ms add to it meanwhile. One checkpoint a
  // look, the log seldom starts over (measured on a quiet disk: once in sixty seconds); the look's rounds (their rule
  // is tested in sqlite-checkpoint-rounds.test.ts) let it start over five times in a tenth of a second. How often is
  // the machine's: a disk the suite's other files keep busy makes each checkpoint's sync slower than the writer's
  // commits (3 restarts in 20 s in CI), and cores held by them slow the writer instead (one checkpoint a look then
  // keeps up) — so this asks for two restarts within half a minute, which one checkpoint a look did not reach.
  const { db, file } = walDatabase();
  db.exec('create index t_body on t (body)');
  // The log's file is not truncated here (that is the idle look's other work, drilled with a full disk): a TRUNCATE
  // between two commits empties the file, which the restarts counted below cannot see.
  const checkpointer = new SqliteCheckpointer(file, { busyMs: 10, idleMs: 200, targetFrames: 100, truncateBytes: Number.MAX_SAFE_INTEGER });
  try {
    const insert = db.prepare('insert into t (body) values (?)');
    const twenty = db.transaction(() => {
      for (let i = 0; i < 20; i++) insert.run(Math.random().toString(36).repeat(40));
    });
    twenty();
    // Counted from the checkpointer's first copy: its thread may take a while to start on a busy machine.
    await eventually(() => checkpointer.checkpoints > 0, 10_000, 'a first checkpoint');
    const from = logRestarts(file);
    const began = Date.now();
    let restarts = 0;
    while (restarts < 2 && Date.now() - began < 30_000) {
      twenty();
      await sleep(2);
      restarts = logRestarts(file) - from;
    }
    assert.ok(restarts >= 2, `the log started over ${restarts} times in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  } finally {
    await checkpointer.stop();
    db.close();
  }
});
