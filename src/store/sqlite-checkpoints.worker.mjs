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
import { checkpointRounds } from './sqlite-checkpoint-rounds.mjs';

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
      const look = checkpointRounds(() => db.pragma('wal_checkpoint(PASSIVE)')[0], { seen, complete, maxRounds: MAX_ROUNDS });
      const { added, copying } = look;
      complete = look.complete;
      seen = look.log;
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
