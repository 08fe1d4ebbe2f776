// One look of the SQLite checkpointer (sqlite-checkpoints.worker.mjs): checkpoints in a row until one finds nothing
// new. A checkpoint copies the log as it stood when it began, and a writer that never pauses has added to it
// meanwhile; the log starts over only at a transaction that begins with all of it copied. Each round copies what came
// in during the round before (a few frames), so that the writer's next transaction starts the log over — instead of
// the writer copying the rest itself, and syncing the file, at its own threshold (wal_autocheckpoint), on the thread
// that serves requests. Kept apart from the thread so that the rule is tested without one.

/**
 * @param {() => { log: number; checkpointed: number }} checkpoint one PASSIVE checkpoint: the log's frames, and how
 *   many of them it copied
 * @param {{ seen: number; complete: boolean; maxRounds: number }} last the log's frames at the last look, and whether
 *   that look copied all of it (then the writer's next commit started the log over: all of it is new)
 */
export function checkpointRounds(checkpoint, { seen, complete, maxRounds }) {
  let r = checkpoint();
  // Frames written since the last look, then what each round found new — all of the log when the writer started it
  // over in between, as it will once the rounds catch up: the pacing must see the whole rate, not the few frames
  // after the last restart.
  let added = complete ? r.log : Math.max(0, r.log - seen);
  /** Checkpoints that found frames to copy. */
  let copying = added > 0 ? 1 : 0;
  let rounds = 1;
  for (let before = -1; rounds < maxRounds && r.checkpointed === r.log && r.log > before; rounds++) {
    before = r.log;
    r = checkpoint();
    const found = r.log >= before ? r.log - before : r.log;
    added += found;
    if (found > 0) copying++;
  }
  return { log: r.log, complete: r.checkpointed === r.log, added, copying, rounds };
}
