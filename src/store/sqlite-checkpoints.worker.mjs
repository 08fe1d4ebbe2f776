// The SQLite checkpointer's thread (see sqlite-checkpoints.ts): its own connection to the database file, copying
// what the write-ahead log holds back into the database (PASSIVE: never waiting on, nor holding up, the writer).
//
// Paced by how fast the log grows: each checkpoint copies every page written since the last one once (a page
// written by a hundred commits is copied once) and syncs the file, so at a trickle of writes, checkpoints every
// busyMs copied the same few pages and synced over and over. The next look comes when the log should hold about
// targetFrames new frames at the rate just seen: busyMs under load, and whenever a checkpoint could not copy all of
// the log (readers still on it), up to idleMs at a trickle; idleMs too while nothing is written.
//
// Once the log is idle (nothing committed since a checkpoint that copied all of it) and its file is larger than
// truncateBytes, a TRUNCATE checkpoint cuts the file to nothing: the log's file otherwise keeps the size it reached
// (up to journal_size_limit), several times a small database's, on a disk that may have little room (a disk that
// was full, then freed, saw the log regrow and fill it again). It waits for no lock: busy, it is tried at the next
// idle look.
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, busyMs, idleMs, targetFrames, truncateBytes } = workerData;
const db = new Database(file, { fileMustExist: true });
// The TRUNCATE checkpoint alone never waits for the writer (nor makes it wait long); the others wait as they did.
const busyTimeout = db.pragma('busy_timeout', { simple: true });
let truncated = 0;

function walBytes() {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
let timer = null;
/** The log's frame count at the last checkpoint, and whether it copied all of it. */
let seen = 0;
let complete = false;
/** PRAGMA data_version at the last look: it changes when another connection commits. */
let version = null;
let delay = busyMs;
let stopped = false;
/** Checkpoints a look takes at most to catch up with a writer that never pauses. */
const MAX_ROUNDS = 8;

function tick() {
  timer = null;
  try {
    const now = db.pragma('data_version', { simple: true });
    if (now === version && complete) {
      // Nothing committed since a checkpoint that copied everything: look again later, with the log's file cut
      // back to nothing if it is large.
      delay = idleMs;
      if (walBytes() > truncateBytes) {
        db.pragma('busy_timeout = 0');
        try {
          const [r] = db.pragma('wal_checkpoint(TRUNCATE)');
          if (r.busy === 0) {
            truncated++;
            parentPort.postMessage({ truncated });
          }
        } finally {
          db.pragma(`busy_timeout = ${busyTimeout}`);
        }
      }
    } else {
      version = now;
      // A checkpoint copies the log as it stood when it began, and a writer that never pauses has added to it
      // meanwhile; the log starts over only at a transaction that begins with all of it copied. Rounds copy what
      // came in during the round before (a few frames each) until one finds nothing new, so that the writer's next
      // transaction starts the log over — instead of the writer copying the rest itself, and syncing the file, at
      // its own threshold (wal_autocheckpoint), on the thread that serves requests.
      let [r] = db.pragma('wal_checkpoint(PASSIVE)');
      // Frames written since the last look: after a checkpoint that copied all, the writer's next commit started the
      // log over, so all of it; otherwise (readers kept the log), what it grew by. Then what each round found new —
      // all of the log when the writer started it over in between, as it will once the rounds catch up: the pacing
      // below must see the whole rate, not the few frames after the last restart.
      let added = complete ? r.log : Math.max(0, r.log - seen);
      /** Checkpoints that found frames to copy. */
      let copying = added > 0 ? 1 : 0;
      for (let round = 1, before = -1; round < MAX_ROUNDS && r.checkpointed === r.log && r.log > before; round++) {
        before = r.log;
        [r] = db.pragma('wal_checkpoint(PASSIVE)');
        const found = r.log >= before ? r.log - before : r.log;
        added += found;
        if (found > 0) copying++;
      }
      complete = r.checkpointed === r.log;
      seen = r.log;
      // Towards the delay that lets targetFrames accumulate at that rate, at most doubling at a time, shortening at
      // once; soon again when not all could be copied.
      const wanted = added > 0 ? (delay * targetFrames) / added : idleMs;
      delay = complete ? Math.round(Math.min(idleMs, Math.max(busyMs, Math.min(wanted, delay * 2)))) : busyMs;
      parentPort.postMessage({ checkpoints: copying });
    }
  } catch (err) {
    parentPort.postMessage({ error: err.message });
    delay = idleMs;
  }
  if (!stopped) timer = setTimeout(tick, delay);
}

parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  stopped = true;
  if (timer) clearTimeout(timer);
  db.close();
  parentPort.close();
});

tick();
