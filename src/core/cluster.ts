import type { Store } from '../store/db.ts';
import { forgetNode, heartbeat, holdSlots, liveNodeCount } from '../store/cluster.ts';

/** How often a node says it is alive, and how long after its last word it is taken for gone. */
export const HEARTBEAT_MS = 5_000;
export const NODE_GONE_AFTER_MS = 3 * HEARTBEAT_MS;

/**
 * This node as a member of the cluster: it says it is alive, counts the live nodes, and holds a fair share of each
 * connector's binds (a slot is a bind; slots of a node that died are taken over when its lease runs out).
 */
export class Cluster {
  private readonly startedAt = Date.now();

  constructor(
    private readonly store: Store,
    readonly nodeId: string,
  ) {}

  beat(now = Date.now()): Promise<void> {
    return heartbeat(this.store, this.nodeId, this.startedAt, now);
  }

  liveNodes(now = Date.now()): Promise<number> {
    return liveNodeCount(this.store, now - NODE_GONE_AFTER_MS);
  }

  /** The slots of `connector` (of `total`) this node holds now; held for NODE_GONE_AFTER_MS unless renewed. */
  async slots(connector: string, total: number, now = Date.now()): Promise<number[]> {
    const share = Math.ceil(total / (await this.liveNodes(now)));
    return holdSlots(this.store, connector, this.nodeId, total, share, now, NODE_GONE_AFTER_MS);
  }

  /** A node stopping cleanly gives its slots back at once. */
  leave(): Promise<void> {
    return forgetNode(this.store, this.nodeId);
  }
}
