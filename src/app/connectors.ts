import type { Logger } from 'pino';
import { ConfigError, type TernConfig } from '../config/index.ts';
import { ConnectorRegistry } from '../connectors/registry.ts';
import { ConnectorRouter } from '../connectors/router.ts';
import { CoreError } from '../core/errors.ts';
import { Rerouting } from '../core/routing/reroute.ts';
import type { Core } from './core.ts';

export type Connectors = Awaited<ReturnType<typeof buildConnectors>>;

/**
 * The running connectors: built from their definitions in the database (the configuration file's applied first),
 * in the registry, routed to by the router. Connectors placing calls read the recording from the voice service;
 * a one-time password's text is put back for them only.
 */
export async function buildConnectors(config: TernConfig, core: Core, logger: Logger) {
  const { voice, otp, connectors, metrics } = core;
  const registry = new ConnectorRegistry(
    connectors,
    { simulator: config.simulator, voiceAudio: (id) => voice.callAudio(id) },
    logger.child({ component: 'connectors' }),
  );
  const router = new ConnectorRouter(registry);
  registry.revealWith((batch) => otp.reveal(batch));
  // A failed delivery goes to the next connector of its route, where the route allows it.
  core.carrierEvents.rerouteWith(new Rerouting(core.store, core.messaging, router).reroute);
  router.judgeWith(core.deliveryQuality);
  metrics.watchConnectors(async () => {
    const waiting = await connectors.oldestWaiting();
    const now = Date.now();
    return registry.names().flatMap((name) => {
      const s = router.state(name);
      if (!s) return [];
      const since = waiting.get(name);
      return [
        {
          name,
          state: s.state,
          binds: s.binds,
          inFlight: s.inFlight,
          unknownOutcomes: s.unknownOutcomes,
          repeatsRecognised: s.repeatsRecognised,
          counters: s.counters,
          oldestQueuedSeconds: since === undefined ? null : Math.max(0, (now - since) / 1000),
        },
      ];
    });
  });
  if (config.connectors || config.routes) {
    try {
      await core.connectorAdmin.applyConfiguration(config.connectors, config.routes);
    } catch (err) {
      await core.store.close();
      if (err instanceof CoreError) throw new ConfigError('TERN_CONFIG', err.detail);
      throw err;
    }
  }
  return { registry, router };
}
