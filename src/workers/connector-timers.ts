import type { Logger } from 'pino';
import type { ConnectorRecord, Router } from '../core/ports.ts';
import type { ConnectorService } from '../core/routing/service.ts';
import { Loop } from './loop.ts';

const BATCH = 1000;

/**
 * Hands connectors the records whose time came (a receipt a simulated network owes, a status to poll for): claimed
 * with a lease, so across nodes each record is handled once, then settled with what the connector keeps for later.
 * Woken when records are written (their signal), at the next record's time, and by the node's safety poll (null
 * `safetyPollMs`: no poll of its own).
 */
export function connectorTimersLoop(service: ConnectorService, router: Router, logger: Logger, leaseMs = 60_000, safetyPollMs: number | null = null): Loop {
  const loop: Loop = new Loop(
    async () => {
      for (;;) {
        const now = Date.now();
        // Records a connector keeps for later are written with their new time, which wakes this loop again.
        const { due, nextDue } = await service.claimDue(now, BATCH, leaseMs);
        const byConnector = new Map<string, ConnectorRecord[]>();
        for (const d of due) byConnector.set(d.connector, [...(byConnector.get(d.connector) ?? []), d.record]);
        await Promise.all(
          [...byConnector].map(async ([name, records]) => {
            const connector = router.connector(name);
            let kept: ConnectorRecord[] = [];
            if (connector?.due) {
              try {
                kept = await connector.due(records, now);
              } catch (err) {
                // Left leased: they are handed again when the lease runs out.
                logger.warn({ err, connector: name }, 'connector could not handle its due records; they will be handed again');
                return;
              }
            }
            await service.settleDue(name, records.map((r) => r.key), kept);
          }),
        );
        if (due.length < BATCH || loop.isStopped) return nextDue;
      }
    },
    safetyPollMs,
    (err) => logger.error({ err }, 'connector timers failed; retrying'),
  );
  return loop;
}
