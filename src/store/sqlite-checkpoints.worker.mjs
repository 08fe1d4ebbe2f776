// The SQLite checkpointer's thread (see sqlite-checkpoints.ts): its own connection to the database file, copying
// what the write-ahead log holds back into the database (PASSIVE: never waiting on, nor holding up, the writer), often
// while there is something to copy, rarely when there is not.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, busyMs, idleMs } = workerData;
const db = new Database(file, { fileMustExist: true });
let timer = null;
let seen = -1;
let stopped = false;

function tick() {
  timer = null;
  let delay = busyMs;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    // Nothing new since the last look: the writer is idle, look again later.
    if (r.log === seen && r.checkpointed === r.log) delay = idleMs;
    seen = r.log;
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
