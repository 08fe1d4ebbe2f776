import { hourOf } from '../../domain/delivery.ts';
import type { Store } from '../../store/db.ts';
import { qualityTotals, type QualityTotal } from '../../store/attempts.ts';

/** Final receipts a connector needs to a network in the window before its delivery rate counts for routing. */
export const MIN_RECEIPTS = 10;
/** The window routing judges connectors on: this hour and the one before. */
export const ROUTING_WINDOW_HOURS = 1;
/** How long this node routes on the counters it read before reading them again (they are the cluster's). */
const FRESH_MS = 10_000;

export interface QualityFigures {
  connector: string;
  network: string;
  delivered: number;
  failed: number;
  /** delivered / (delivered + failed), or null with no final receipt. */
  deliveryRate: number | null;
  /** Mean time from placement to DELIVERED, ms, or null. */
  meanTimeToDeliveredMs: number | null;
}

function figures(t: QualityTotal): QualityFigures {
  const finals = t.delivered + t.failed;
  return {
    connector: t.connector,
    network: t.network,
    delivered: t.delivered,
    failed: t.failed,
    deliveryRate: finals === 0 ? null : t.delivered / finals,
    meanTimeToDeliveredMs: t.delivered === 0 ? null : Math.round(t.deliveredMs / t.delivered),
  };
}

/**
 * Route quality: per connector and destination network, the delivery rate and the time to DELIVERED, from the
 * hourly counters receipts add to (never from messages). Routing reads this node's copy of the last hours', read
 * again from the database when it is more than a few seconds old, so every node judges on the cluster's receipts.
 */
export class DeliveryQuality {
  private routing = new Map<string, QualityFigures>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;

  constructor(private readonly store: Store) {}

  /** Figures per connector and network over the last `hours` hours (the current one included). */
  async over(hours: number, now = Date.now()): Promise<QualityFigures[]> {
    return (await qualityTotals(this.store.db, hourOf(now) - hours * 3_600_000)).map(figures);
  }

  /** Reads the routing window's figures again now. */
  async refresh(now = Date.now()): Promise<void> {
    const list = await this.over(ROUTING_WINDOW_HOURS, now);
    this.routing = new Map(list.map((f) => [`${f.connector}|${f.network}`, f]));
    this.loadedAt = now;
  }

  /**
   * A connector's delivery rate to a network for routing, once it has enough receipts there; null when not known.
   * Reads the counters again in the background when this node's copy is old.
   */
  deliveryRate(connector: string, network: string, now = Date.now()): number | null {
    if (now - this.loadedAt > FRESH_MS && this.loading === null) {
      this.loading = this.refresh(now)
        .catch(() => undefined)
        .finally(() => {
          this.loading = null;
        });
    }
    const f = this.routing.get(`${connector}|${network}`);
    return f && f.delivered + f.failed >= MIN_RECEIPTS ? f.deliveryRate : null;
  }

  /** The routing window's figures as this node last read them (for /metrics). */
  current(): QualityFigures[] {
    return [...this.routing.values()];
  }
}
