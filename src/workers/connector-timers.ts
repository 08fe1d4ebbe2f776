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
 * A loop per lane, each with its own next due time: a record of the high lane (an OTP's receipt) is taken as soon as
 * it falls due, never behind a pass through a campaign's backlog. Woken for a lane when records fall due in it, at
 * its next record's time, and (both lanes) by the node's safety poll.
 */
export class ConnectorTimers {
  private readonly loops: ReadonlyMap<Lane, Loop>;

  constructor(
    private readonly service: ConnectorService,
    private readonly router: Router,
    private readonly logger: Logger,
    private readonly leaseMs = 60_000,
  ) {
    this.loops = new Map(
      [HIGH_LANE, LOW_LANE].map((lane) => [
        lane,
        new Loop(() => this.pass(lane), null, (err) => logger.error({ err, lane }, 'connector timers failed; retrying')),
      ]),
    );
  }

  start(): void {
    for (const loop of this.loops.values()) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.loops.values()].map((l) => l.stop()));
  }

  /** Records fell due in these lanes (all of them: something may be due anywhere). */
  wake(lanes: Iterable<Lane> = this.loops.keys()): void {
    for (const lane of lanes) this.loops.get(lane)?.wake();
  }

  private async pass(lane: Lane): Promise<number | null> {
    const loop = this.loops.get(lane)!;
    for (;;) {
      const now = Date.now();
      // Records a connector keeps for later are written with their new time, which wakes their lane again.
      const { due, nextDue } = await this.service.claimDue(now, BATCH, this.leaseMs, lane);
      const byConnector = new Map<string, ConnectorRecord[]>();
      for (const d of due) byConnector.set(d.connector, [...(byConnector.get(d.connector) ?? []), d.record]);
      await Promise.all([...byConnector].map(([name, records]) => this.hand(name, records, now)));
      if (due.length < BATCH || loop.isStopped) return nextDue;
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
