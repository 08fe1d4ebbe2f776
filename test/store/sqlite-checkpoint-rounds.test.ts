import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkpointRounds } from '../../src/store/sqlite-checkpoint-rounds.mjs';

/** A log as successive checkpoints find it: each entry is one checkpoint's [frames in the log, frames copied]. */
function log(...looks: Array<[number, number]>) {
  let i = 0;
  const checkpoint = () => {
    const [log, checkpointed] = looks[Math.min(i, looks.length - 1)]!;
    i++;
    return { log, checkpointed };
  };
  return { checkpoint, calls: () => i };
}

test('goes round until a checkpoint finds nothing new, counting what each found', () => {
  const l = log([100, 100], [103, 103], [103, 103]);
  const look = checkpointRounds(l.checkpoint, { seen: 40, complete: false, maxRounds: 8 });
  assert.equal(l.calls(), 3);
  assert.deepEqual(look, { log: 103, complete: true, added: 60 + 3, copying: 2, rounds: 3 });
});

test('after a look that copied all, the whole log is new (the writer started it over)', () => {
  const look = checkpointRounds(log([30, 30], [30, 30]).checkpoint, { seen: 500, complete: true, maxRounds: 8 });
  assert.deepEqual(look, { log: 30, complete: true, added: 30, copying: 1, rounds: 2 });
});

test('stops at a checkpoint that could not copy everything (a reader holds the log)', () => {
  const l = log([100, 60], [120, 120]);
  const look = checkpointRounds(l.checkpoint, { seen: 100, complete: false, maxRounds: 8 });
  assert.equal(l.calls(), 1);
  assert.deepEqual(look, { log: 100, complete: false, added: 0, copying: 0, rounds: 1 });
});

test('a writer that started the log over between two rounds: what it wrote since is counted, and the look ends', () => {
  const l = log([100, 100], [4, 4], [9, 9]);
  const look = checkpointRounds(l.checkpoint, { seen: 0, complete: false, maxRounds: 8 });
  assert.equal(l.calls(), 2);
  assert.deepEqual(look, { log: 4, complete: true, added: 104, copying: 2, rounds: 2 });
});

test('gives up after maxRounds beside a writer that adds a frame every round', () => {
  let frames = 10;
  const look = checkpointRounds(() => ({ log: ++frames, checkpointed: frames }), { seen: 0, complete: false, maxRounds: 8 });
  assert.deepEqual(look, { log: 18, complete: true, added: 18, copying: 8, rounds: 8 });
});
