import type { Store } from '../store/db.ts';
import { findNode, forgetNode, heartbeat, holdSlots, liveNodeCount, otherBeats } from '../store/cluster.ts';
import type { Claimants } from './idempotency.ts';

/** How often a node says it is alive, and how long after its last word it is taken for gone. */
export const HEARTBEAT_MS = 5_000;
export const NODE_GONE_AFTER_MS = 3 * HEARTBEAT_MS;
/**
 * Nodes beat at the start of each round of HEARTBEAT_MS by their clock (the same instants on every node); the other
 * nodes' beats are looked at this long after, when every live node has beaten (a beat a little late is within it).
 */
export const BEAT_LOOK_AFTER_MS = 1_000;

/** The start of the round of beats `time` falls in. */
export function beatRound(time: number): number {
  return Math.floor(time / HEARTBEAT_MS) * HEARTBEAT_MS;
}

export interface ClusterOptions {
  /** The longest lease a node takes on work: a node that stopped may hold work that long after its last beat. */
  leaseMs?: number;
}

/**
 * This node as a member of the cluster: it says it is alive, counts the live nodes, holds a fair share of each
 * connector's binds (a slot is a bind; slots of a node that died are taken over when its lease runs out), and
 * notices when another node stops beating (it died or stalled), so the work it held is taken over.
 */
export class Cluster implements Claimants {
  private readonly startedAt = Date.now();
  /** This process among every one that ever served under this node id: the id and when the process started. */
  readonly self: string;
  /** Nodes watched: seen since this long ago (long enough for their leases to have run out since). */
  private readonly watchMs: number;
  /** The other nodes' last beats as the recent looks found them (newest last). */
  private looks: Array<{ at: number; beats: Map<string, number> }> = [];
  /** Nodes found stopped, until they beat again. */
  private readonly stopped = new Set<string>();

  constructor(
    private readonly store: Store,
    readonly nodeId: string,
    opts: ClusterOptions = {},
  ) {
    this.watchMs = NODE_GONE_AFTER_MS + (opts.leaseMs ?? 0);
    this.self = `${nodeId}@${this.startedAt}`;
  }

  /**
   * Whether the process `claimant` (as `self` names one) is gone: its node has not beaten for NODE_GONE_AFTER_MS (its
   * lease on what it holds ended), this node's watch found it stopped, or its node id beats from a process started
   * since. A SQLite database is served by one process: any other one is gone.
   */
  async gone(claimant: string, now = Date.now()): Promise<boolean> {
    if (claimant === this.self) return false;
    if (this.store.dialect === 'sqlite') return true;
    const at = claimant.lastIndexOf('@');
    if (at <= 0) return false;
    const nodeId = claimant.slice(0, at);
    if (this.stopped.has(nodeId)) return true;
    const node = await findNode(this.store, nodeId);
    return node === null || node.seenAt < now - NODE_GONE_AFTER_MS || String(node.startedAt) !== claimant.slice(at + 1);
  }

  /** Says this node is alive; answers how many other nodes are watched (seen lately). */
  beat(now = Date.now()): Promise<number> {
    return heartbeat(this.store, this.nodeId, this.startedAt, now, now - this.watchMs);
  }

  /**
   * The nodes that stopped beating, each answered once until it beats again. Meant to be called once a round,
   * BEAT_LOOK_AFTER_MS into it: a node whose last beat is still the one a look a round ago found missed its beat in
   * between. Its beats are compared with its own, so a node whose clock is off is not taken for stopped. A node with
   * no look a round ago to compare with (just seen) counts as stopped when its last beat is older than two rounds.
   */
  async stoppedNodes(now = Date.now()): Promise<string[]> {
    const beats = new Map((await otherBeats(this.store, this.nodeId, now - this.watchMs)).map((b) => [b.id, b.seenAt]));
    const roundAgo = this.looks.filter((l) => l.at <= now - (HEARTBEAT_MS - BEAT_LOOK_AFTER_MS)).at(-1);
    const found: string[] = [];
    for (const [id, seenAt] of beats) {
      const before = roundAgo?.beats.get(id);
      const silent = before === undefined ? seenAt < now - 2 * HEARTBEAT_MS : seenAt === before;
      if (!silent) this.stopped.delete(id);
      else if (!this.stopped.has(id)) {
        this.stopped.add(id);
        found.push(id);
      }
    }
    for (const id of this.stopped) if (!beats.has(id)) this.stopped.delete(id);
    this.looks = [...this.looks.filter((l) => l.at > now - 2 * HEARTBEAT_MS), { at: now, beats }];
    return found;
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
