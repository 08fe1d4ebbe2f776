import type { Logger } from 'pino';
import { BEAT_LOOK_AFTER_MS, beatRound, type Cluster, HEARTBEAT_MS } from '../core/cluster.ts';
import { Loop } from './loop.ts';

/**
 * This node's heartbeat, and its watch over the other nodes: it beats at the start of every round (one statement,
 * which also says whether other nodes are about), and while there are, looks at their beats a moment into the round,
 * so a node that stopped beating (it died, or stalled) is noticed within a round of its last beat: `onStopped` is
 * told of it, once.
 */
export class Heartbeat {
  private readonly loop: Loop;
  private nextBeatAt = 0;
  private lookAt: number | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly onStopped: (nodes: string[]) => void,
    logger: Logger,
  ) {
    // After a failure, the next pass comes a round later at the latest.
    this.loop = new Loop(
      () => this.pass(),
      HEARTBEAT_MS,
      (err) => logger.warn({ err }, 'heartbeat failed'),
    );
  }

  /** Beats at once (before anything that counts the live nodes starts), then every round. */
  async start(): Promise<void> {
    await this.beat(Date.now());
    this.loop.start(this.next());
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<number> {
    const now = Date.now();
    if (now >= this.nextBeatAt) {
      await this.beat(now);
    } else if (this.lookAt !== null && now >= this.lookAt) {
      this.lookAt = null;
      const stopped = await this.cluster.stoppedNodes(now);
      if (stopped.length > 0) this.onStopped(stopped);
    }
    return this.next();
  }

  private async beat(now: number): Promise<void> {
    const others = await this.cluster.beat(now);
    const round = beatRound(now);
    this.nextBeatAt = round + HEARTBEAT_MS;
    this.lookAt = others > 0 ? Math.max(round + BEAT_LOOK_AFTER_MS, now) : null;
  }

  private next(): number {
    return Math.min(this.nextBeatAt, this.lookAt ?? Number.POSITIVE_INFINITY);
  }
}
