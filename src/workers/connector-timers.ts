import { isStorageError } from '../core/errors.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { HIGH_LANE, type Lane, LOW_LANE } from '../domain/fair-queue.ts';
import type { ConnectorRecord, Router } from '../core/ports.ts';
import type { ConnectorService, RecordHandoff } from '../core/routing/service.ts';
import { Loop } from './loop.ts';
import { groupBy } from '../domain/group-by.ts';

/**
 * Records handed over a pass. Small enough that a pass (a simulated network's receipts applied, polls answered) takes
 * a few milliseconds: a backlog is worked through a batch at a time, with requests answered in between.
 */
const BATCH = 200;
/** Records handed over as they are written, being dealt with at once, at most (per lane). */
const MAX_HANDED = 2 * BATCH;

/**
 * Hands connectors the records whose time came (a receipt a simulated network owes, a status to poll for): claimed
 * with a lease, so across nodes each record is handled once, then settled with what the connector keeps for later.
 * A loop per lane, each with its own next due time: a record of the high lane (an OTP's receipt) is taken as soon as
 * it falls due, never behind a pass through a campaign's backlog. Woken for a lane when records fall due in it, at
 * its next record's time, and (both lanes) by the node's safety poll. Records written due now on this node, while
 * their lane has room and nothing older waiting, are handed over as they are stored (RecordHandoff): no claim.
 */
export class ConnectorTimers implements RecordHandoff {
  private readonly loops: ReadonlyMap<Lane, Loop>;
  /** Records reserved or handed over and not settled yet, per lane. */
  private readonly handed = new Map<Lane, number>();
  /** Lanes whose last claim filled its batch: records may be due there that were not taken yet. */
  private readonly behind = new Set<Lane>([HIGH_LANE, LOW_LANE]);
  private readonly handing = new Set<Promise<void>>();

  constructor(
    private readonly service: ConnectorService,
    private readonly router: Router,
    private readonly logger: Logger,
    private readonly leaseMs = 60_000,
  ) {
    this.loops = new Map(
      [HIGH_LANE, LOW_LANE].map((lane) => [
        lane,
        new Loop(
          () => this.pass(lane),
          null,
          (err) => logger.error({ err, lane }, 'connector timers failed; retrying'),
        ),
      ]),
    );
  }

  start(): void {
    for (const loop of this.loops.values()) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.loops.values()].map((l) => l.stop()));
    await Promise.all([...this.handing]);
  }

  reserve(lane: Lane, now: number): number | null {
    const loop = this.loops.get(lane);
    if (!loop || loop.isStopped || this.behind.has(lane)) return null;
    const count = this.handed.get(lane) ?? 0;
    if (count >= MAX_HANDED) return null;
    this.handed.set(lane, count + 1);
    return now + this.leaseMs;
  }

  release(lane: Lane, count: number): void {
    this.handed.set(lane, (this.handed.get(lane) ?? 0) - count);
  }

  take(connector: string, lane: Lane, records: ConnectorRecord[]): void {
    // Stopped meanwhile: they stay leased, and are claimed (here or elsewhere) once the lease runs out.
    if (this.loops.get(lane)?.isStopped) {
      this.release(lane, records.length);
      return;
    }
    const p = this.hand(connector, records, Date.now())
      .catch((err: unknown) => {
        if (!isStorageError(err)) this.logger.error({ err, connector }, 'connector records handed over failed; they will be claimed when their lease runs out');
      })
      .finally(() => {
        this.release(lane, records.length);
        this.handing.delete(p);
      });
    this.handing.add(p);
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
      if (due.length < BATCH) this.behind.delete(lane);
      else this.behind.add(lane);
      const byConnector = groupBy(
        due,
        (d) => d.connector,
        (d) => d.record,
      );
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
    await this.service.settleDue(
      name,
      records.map((r) => r.key),
      kept,
    );
  }
}
