import type { ConnectorDefinition, ConnectorService, RouteDefinition } from '../core/routing/service.ts';
import type { Connector, ConnectorHealth, ConnectorLogger, ConnectorState } from '../core/ports.ts';
import { Simulator, type SimulatorSettings, simulatorSettings } from './simulator/connector.ts';

/** What factories may need beyond a connector's own definition. */
export interface FactoryEnvironment {
  /** The server's simulator settings (TERN_SIMULATOR_*), under a simulator's own. */
  simulator: Omit<SimulatorSettings, 'readDelayMs'>;
}

export type ConnectorFactory = (definition: ConnectorDefinition, env: FactoryEnvironment) => Connector;

/** One factory per kind of connector: adding an operator connection is a folder and a line here. */
export const FACTORIES: Readonly<Record<string, ConnectorFactory>> = {
  SIMULATOR: (d, env) => new Simulator(d.name, simulatorSettings(d.settings, env.simulator)),
};

interface Live {
  definition: ConnectorDefinition;
  connector: Connector;
  health: ConnectorHealth;
}

export interface RegistryLogger extends ConnectorLogger {
  child(bindings: object): ConnectorLogger;
}

/**
 * The running connectors, made from their definitions (rows of the database) by the factory of their kind, and
 * remade when the definitions change: a new or changed definition starts its connector, a removed or disabled one
 * stops it. Each connector reports its health here; the router sends messages only to connectors that are UP.
 */
export class ConnectorRegistry {
  private readonly live = new Map<string, Live>();
  private routeList: RouteDefinition[] = [];
  private loading: Promise<void> = Promise.resolve();
  private readonly changeListeners: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly service: ConnectorService,
    private readonly env: FactoryEnvironment,
    private readonly logger: RegistryLogger,
    private readonly factories: Readonly<Record<string, ConnectorFactory>> = FACTORIES,
  ) {}

  /** Builds and starts the connectors; afterwards follows every change of the definitions. */
  async start(): Promise<void> {
    await this.load();
    this.service.onChange(() => void this.load().catch((err) => this.logger.error({ err }, 'reloading connectors failed')));
  }

  /** Brings the running connectors in line with their definitions (one load at a time). */
  load(): Promise<void> {
    this.loading = this.loading.then(() => this.apply(), () => this.apply());
    return this.loading;
  }

  private async apply(): Promise<void> {
    if (this.stopped) return;
    const { connectors, routes } = await this.service.definitions();
    const wanted = new Map(connectors.filter((c) => c.enabled).map((c) => [c.id, c]));
    for (const [id, l] of this.live) {
      const next = wanted.get(id);
      if (!next || JSON.stringify(next) !== JSON.stringify(l.definition)) {
        this.live.delete(id);
        await l.connector.stop().catch((err) => this.logger.error({ err, connector: l.definition.name }, 'connector did not stop cleanly'));
      }
    }
    for (const d of wanted.values()) {
      if (this.live.has(d.id)) continue;
      const factory = this.factories[d.kind];
      if (!factory) {
        this.logger.error({ connector: d.name, kind: d.kind }, 'no factory for this kind of connector; it stays stopped');
        continue;
      }
      const connector = factory(d, this.env);
      const entry: Live = { definition: d, connector, health: { state: 'CONNECTING', since: Date.now(), lastError: null } };
      this.live.set(d.id, entry);
      const log = this.logger.child({ connector: d.name });
      await connector.start(this.service.context(d.name, log, (state, lastError) => this.report(entry, state, lastError)));
    }
    this.routeList = routes.filter((r) => r.enabled);
    for (const l of this.changeListeners) l();
  }

  private report(entry: Live, state: ConnectorState, lastError: string | null): void {
    if (entry.health.state === state && entry.health.lastError === lastError) return;
    entry.health = { state, since: Date.now(), lastError };
    this.logger.info({ connector: entry.definition.name, state, lastError }, 'connector state');
  }

  /** Called after each load (the router recomputes its order). */
  onLoaded(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  routes(): readonly RouteDefinition[] {
    return this.routeList;
  }

  byId(id: string): Connector | undefined {
    return this.live.get(id)?.connector;
  }

  byName(name: string): Connector | undefined {
    for (const l of this.live.values()) if (l.definition.name === name) return l.connector;
    return undefined;
  }

  health(id: string): ConnectorHealth | undefined {
    return this.live.get(id)?.health;
  }

  all(): Array<{ definition: ConnectorDefinition; connector: Connector; health: ConnectorHealth }> {
    return [...this.live.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loading.catch(() => undefined);
    for (const l of this.live.values()) {
      await l.connector.stop().catch((err) => this.logger.error({ err, connector: l.definition.name }, 'connector did not stop cleanly'));
    }
    this.live.clear();
  }
}
