// How a node notices that another stopped beating (died or stalled), from the beats in the nodes table, at the times
// its heartbeat looks (a second into each round of 5 s).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BEAT_LOOK_AFTER_MS, Cluster, HEARTBEAT_MS } from '../../src/core/cluster.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { freshDatabase } from '../support/server.ts';

const ROUND = HEARTBEAT_MS;
/** A round start well in the past, so the beats written here are the only ones that count. */
const R = Math.floor((Date.now() - 3_600_000) / ROUND) * ROUND;
const look = (k: number) => R + k * ROUND + BEAT_LOOK_AFTER_MS;

describe('noticing a node that stopped beating', () => {
  let database: { url: string; cleanup(): Promise<void> };
  let store: Store;
  before(async () => {
    database = await freshDatabase('sqlite');
    store = await openStore(database.url, 'watcher');
  });
  after(async () => {
    await store.close();
    await database.cleanup();
  });

  async function beat(id: string, at: number): Promise<void> {
    await store.db
      .insertInto('nodes')
      .values({ id, started_at: R, seen_at: at })
      .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: at }))
      .execute();
  }

  it('a node that misses a beat is noticed at the next look, once, and again after it beat anew', async () => {
    const watcher = new Cluster(store, 'watcher');
    await beat('steady', R);
    await beat('stalls', R);
    assert.deepEqual(await watcher.stoppedNodes(look(0)), []);
    await beat('steady', R + ROUND);
    await beat('stalls', R + ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(1)), []);
    await beat('steady', R + 2 * ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(2)), ['stalls'], 'missed the beat of round 2');
    await beat('steady', R + 3 * ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(3)), [], 'told once');
    // It wakes up (SIGCONT) and beats again: watched anew, and noticed again when it stops again.
    await beat('steady', R + 4 * ROUND);
    await beat('stalls', R + 4 * ROUND + 300);
    assert.deepEqual(await watcher.stoppedNodes(look(4)), []);
    await beat('steady', R + 5 * ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(5)), ['stalls']);
  });

  it('a node whose clock is behind beats after the look, and is not taken for stopped', async () => {
    const watcher = new Cluster(store, 'watcher-2');
    for (let k = 0; k < 4; k++) {
      // 2.5 s behind: its round starts come after this node's looks.
      await beat('late-clock', R + k * ROUND + 2_500);
      assert.deepEqual(
        (await watcher.stoppedNodes(look(k + 1))).filter((id) => id === 'late-clock'),
        [],
        `round ${k}`,
      );
    }
  });

  it('looks closer together than a round say nothing; a node first seen long silent counts as stopped', async () => {
    const watcher = new Cluster(store, 'watcher-3');
    await beat('quiet', R + 10 * ROUND);
    await beat('gone', R + 8 * ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(10)), ['gone'], 'silent for two rounds when first seen');
    assert.deepEqual(await watcher.stoppedNodes(look(10) + 500), [], 'a second look within the round');
    await beat('quiet', R + 11 * ROUND);
    assert.deepEqual(await watcher.stoppedNodes(look(11)), []);
  });

  it('a look soon after the one before does not hide a beat missed after it', async () => {
    const watcher = new Cluster(store, 'watcher-4');
    const r = R + 20 * ROUND;
    await beat('x', r - 4_000);
    // A late first look (the node was starting), then the round's own look a moment after.
    assert.deepEqual(await watcher.stoppedNodes(r - 1_600), []);
    await beat('x', r);
    assert.deepEqual(await watcher.stoppedNodes(r + BEAT_LOOK_AFTER_MS), []);
    // x stalls: no beat at r + ROUND.
    assert.deepEqual(await watcher.stoppedNodes(r + ROUND + BEAT_LOOK_AFTER_MS), ['x']);
  });
});
