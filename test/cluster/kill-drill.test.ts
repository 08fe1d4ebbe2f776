// A cluster drill: three real Tern processes on one PostgreSQL database, one of them killed (kill -9) under load.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type Cluster, holdingClaims, sendSpread, settled, skip, startCluster } from './drill-support.ts';
import { createTenant } from '../support/server.ts';

describe('cluster drill: a node killed [postgres]', { skip }, () => {
  const clusters: Cluster[] = [];
  after(async () => {
    for (const c of clusters) await c.close();
  });

  test('3 nodes, one killed (kill -9) under load: every accepted message delivered once, every webhook received', async () => {
    const cluster = await startCluster(3);
    clusters.push(cluster);
    const { nodes, reader, receiver } = cluster;
    const t = await createTenant(nodes[1]!, { balance: 1_000, channel: { defaultCallbackUrlStatus: `${receiver.url}/status` } });
    const total = 720;
    const load = sendSpread(nodes, t.key, total);
    await holdingClaims(reader.db, cluster.nodeIds[0]!);
    await nodes[0]!.kill();
    await load.done;
    const seen = await settled(reader.db, receiver);
    process.stdout.write(
      `# 3 nodes, one killed: ${load.accepted.length} of ${total} sends accepted (${JSON.stringify(Object.fromEntries(load.refused))} tried again), ${seen.stored.size} stored; ` +
        `${seen.repeated} messages and ${seen.twice} webhooks reached their peer twice (sent by the killed node, unrecorded)\n`,
    );
    assert.equal(load.accepted.length, total, 'every send accepted, on another node when the first went to the killed one');
    assert.deepEqual(
      load.accepted.filter((id) => !seen.stored.has(id)),
      [],
      'every accepted message stored',
    );
    assert.equal(seen.stored.size, total, 'one message a send, whatever the tries');
    assert.equal(seen.placements, seen.stored.size, 'one placement per stored message');
    assert.deepEqual([seen.deliveredEvents, seen.deliveredMessages], [seen.stored.size, seen.stored.size], 'one DELIVERED event per message');
    assert.equal(seen.unreceived, 0, 'every webhook received');
  });
});
