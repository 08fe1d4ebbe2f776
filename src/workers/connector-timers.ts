import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { HIGH_LANE, type Lane, LOW_LANE } from '../core/domain/fair-queue.ts';
import type { ConnectorRecord, Router } from '../core/ports.ts';
import type { ConnectorService } from '../core/routing/service.ts';
import { Loop } from './loop.ts';

/**
 * Records handed over a pass. Small enough that a pass (a simulated network's receipts applied, polls answered) takes
 * a few milliseconds: a backlog is worked through a batch at a time, with requests answered in between.
 */
const BATCH = 200;

/**
 * Hands connectors the records whose time came (a receipt a simulated network owes, a status to poll for): claimed
 * with a lease, so across nodes each record is handled once, then settled with what the connector keeps for later.
 * Workers per lane, each lane with its own next due time: a record of the high lane (an OTP's receipt) is taken as
 * soon as it falls due, never behind a pass through a campaign's backlog. Woken for a lane when records fall due in
 * it, at its next record's time, and (both lanes) by the node's safety poll.
 */
export class ConnectorTimers {
  private readonly loops: ReadonlyMap<Lane, Loop[]>;

  constructor(
    private readonly service: ConnectorService,
    private readonly router: Router,
    private readonly logger: Logger,
    private readonly leaseMs = 60_000,
  ) {
    const workers = (lane: Lane, count: number) =>
      Array.from({ length: count }, (_, i) => {
        // The first keeps the lane's timer (its next due record); the others run only when woken.
        const loop: Loop = new Loop(() => this.pass(lane, loop, i === 0), null, (err) => logger.error({ err, lane }, 'connector timers failed; retrying'));
        return loop;
      });
    // Two workers for the high lane: a record that falls due while one is applying what it took (a transaction the
    // node's other work stretches out) is taken by the other at once.
    this.loops = new Map([
      [HIGH_LANE, workers(HIGH_LANE, 2)],
      [LOW_LANE, workers(LOW_LANE, 1)],
    ]);
  }

  start(): void {
    // One worker per lane looks at once; a second one starts when woken.
    for (const [first, ...others] of this.loops.values()) {
      first!.start();
      for (const loop of others) loop.start(Number.POSITIVE_INFINITY);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.loops.values()].flat().map((l) => l.stop()));
  }

  /** Records fell due in these lanes (all of them: something may be due anywhere): an idle worker of each takes them. */
  wake(lanes: Iterable<Lane> = this.loops.keys()): void {
    for (const lane of lanes) {
      const loops = this.loops.get(lane) ?? [];
      (loops.find((l) => !l.isRunning) ?? loops[0])?.wake();
    }
  }

  private async pass(lane: Lane, loop: Loop, keepsTimer: boolean): Promise<number | null> {
    for (;;) {
      const now = Date.now();
      // Records a connector keeps for later are written with their new time, which wakes their lane again.
      const { due, nextDue } = await this.service.claimDue(now, BATCH, this.leaseMs, lane);
      const byConnector = new Map<string, ConnectorRecord[]>();
      for (const d of due) byConnector.set(d.connector, [...(byConnector.get(d.connector) ?? []), d.record]);
      await Promise.all([...byConnector].map(([name, records]) => this.hand(name, records, now)));
      if (due.length < BATCH || loop.isStopped) {
        if (keepsTimer) return nextDue;
        // The lane's timer is its first worker's: a record written meanwhile (a read report a receipt leaves for
        // later) may fall due before the time that worker last saw.
        if (nextDue !== null) this.loops.get(lane)![0]!.at(nextDue);
        return null;
      }
      // The next batch on the next turn of the event loop: requests and other work waiting meanwhile go first.
      await nextTurn();
    }
  }

  private async hand(name: string, records: ConnectorRecord[], now: number): Promise<void> {
    const connector = this.router.connector(name);
    let kept: ConnectorRecord[] = [];
    if (connector?.due) {
      try {
        kept = await connector.due(records, now);
      } catch (err) {
        // Left leased: they are handed again when the lease runs out.
        this.logger.warn({ err, connector: name }, 'connector could not handle its due records; they will be handed again');
        return;
      }
    }
    await this.service.settleDue(name, records.map((r) => r.key), kept);
  }
}
