import { retryableFailure } from '../../domain/delivery.ts';
import type { Store } from '../../store/db.ts';
import { connectorsTried } from '../../store/attempts.ts';
import type { FailedDelivery } from '../messaging/carrier-events.ts';
import type { MessagingService } from '../messaging/service.ts';
import type { Router } from '../ports.ts';

/**
 * Re-routing on a failed delivery: an SMS an operator reports UNDELIVERED for a reason another operator may not have
 * (its own or its network's error, not an unknown or absent number) is placed again at once through the next
 * connector of its route that it has not been placed with, while the route's `maxAttempts` allows. It stays ENROUTE
 * meanwhile, and is charged once: a placement again costs what its connector charges and charges the customer nothing.
 */
export class Rerouting {
  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly router: Router,
  ) {}

  readonly reroute = async (failed: FailedDelivery[], now: number): Promise<Set<string>> => {
    // A late report on an earlier placement (the message has moved on) decides nothing; one that came before its
    // placement was recorded (no connector on the message yet) is about the placement under way.
    const eligible = failed.filter(
      (f) => f.row.type === 'SMS' && f.row.status === 'ENROUTE' && (f.row.connector === null || f.row.connector === f.connector) && retryableFailure(f.detail),
    );
    if (eligible.length === 0) return new Set();
    const tried = await connectorsTried(
      this.store.db,
      eligible.map((f) => f.row.id),
    );
    const again: string[] = [];
    for (const { row, connector } of eligible) {
      const used = new Set(tried.get(row.id));
      used.add(connector);
      const channel = await this.messaging.channel(row.channel_id);
      const choice = this.router.route(
        {
          type: row.type,
          recipient: row.recipient,
          channelId: row.channel_id,
          organisationId: row.organisation_id,
          flow: channel.flow,
          country: row.country,
          mccMnc: row.mcc_mnc,
        },
        { parts: row.part_count, charged: row.charged, at: now },
        used,
      );
      if (choice.route === null || choice.refused) continue;
      if (Math.max(used.size, row.attempts) >= (choice.maxAttempts ?? 1)) continue;
      // Another connector of the route must be there to take it (up here, or on another node).
      if (choice.candidates.length === 0 && choice.elsewhere === null) continue;
      again.push(row.id);
    }
    if (again.length > 0) await this.messaging.placeAgain(again, now);
    return new Set(again);
  };
}
