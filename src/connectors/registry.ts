import type { ConnectorDefinition, ConnectorService, RouteDefinition } from '../core/routing/service.ts';
import type { Rate } from '../domain/rates.ts';
import type {
  CarrierEvent,
  Connector,
  ConnectorCounters,
  ConnectorLiveState,
  ConnectorHealth,
  ConnectorLogger,
  ConnectorState,
  OutboundMessage,
  SubmitFence,
  SubmitResult,
} from '../core/ports.ts';
import type { ConnectorFactory, FactoryEnvironment } from './kind.ts';
import { SIMULATOR_KIND } from './simulator/kind.ts';
import { SMPP_KIND } from './smpp/kind.ts';
import { SMSMODE_HTTP_KIND } from './smsmode-http/kind.ts';
import { SIP_KIND } from './sip/kind.ts';
import { TWILIO_LOOKUP_KIND } from './twilio-lookup/kind.ts';
import { INFOBIP_LOOKUP_KIND } from './infobip-lookup/kind.ts';
import { RBM_KIND } from './rbm/kind.ts';

/** One factory per kind of connector: adding an operator connection is a folder and a line here. */
export const KINDS: Readonly<Record<string, ConnectorFactory>> = {
  SIMULATOR: SIMULATOR_KIND,
  SMPP: SMPP_KIND,
  SMSMODE_HTTP: SMSMODE_HTTP_KIND,
  SIP: SIP_KIND,
  TWILIO_LOOKUP: TWILIO_LOOKUP_KIND,
  INFOBIP_LOOKUP: INFOBIP_LOOKUP_KIND,
  RBM: RBM_KIND,
};

interface Live {
  definition: ConnectorDefinition;
  connector: Connector;
  counted: Connector;
  health: ConnectorHealth;
  counters: ConnectorCounters;
  /** Samples of (time, submitted, receipts) for the rates. */
  samples: Array<[number, number, number]>;
}

export interface RegistryLogger extends ConnectorLogger {
  child(bindings: object): ConnectorLogger;
}

function zero(): ConnectorCounters {
  return { submitted: 0, accepted: 0, temporaryErrors: 0, permanentErrors: 0, errorsByCode: {}, receipts: 0, inbound: 0 };
}

/**
 * The running connectors, made from their definitions (rows of the database) by the factory of their kind, and
 * remade when the definitions change: a new or changed definition starts its connector, a removed or disabled one
 * stops it. Each connector reports its health here; the router sends messages only to connectors that are UP. What
 * goes through each connector is counted here, for its live state and the metrics.
 */
export class ConnectorRegistry {
  private readonly live = new Map<string, Live>();
  private routeList: RouteDefinition[] = [];
  private rateList: Rate[] = [];
  /** Names of every defined connector (running or not), by id. */
  private names_ = new Map<string, string>();
  /** Names of enabled connectors being (re)started by the load under way: not live yet, back in a moment. */
  private starting = new Set<string>();
  private loading: Promise<void> = Promise.resolve();
  private readonly changeListeners: Array<() => void> = [];
  private stopped = false;
  private reveal: ((batch: OutboundMessage[]) => Promise<OutboundMessage[]>) | null = null;

  constructor(
    private readonly service: ConnectorService,
    private readonly env: FactoryEnvironment,
    private readonly logger: RegistryLogger,
    private readonly kinds: Readonly<Record<string, ConnectorFactory>> = KINDS,
  ) {}

  /** Builds and starts the connectors; afterwards follows every change of the definitions. */
  async start(): Promise<void> {
    await this.load();
    this.service.onChange(() => void this.load().catch((err) => this.logger.error({ err }, 'reloading connectors failed')));
    this.service.applyWith(() => this.loadRoutes());
  }

  /** Brings the running connectors in line with their definitions (one load at a time). */
  load(): Promise<void> {
    this.loading = this.loading.then(
      () => this.apply(),
      () => this.apply(),
    );
    return this.loading;
  }

  /**
   * A load, settled once its routes and rates are in force — not once every connector it changes has stopped and
   * started again (a bind, a first probe of the operator's API: seconds, when the operator is slow to answer).
   */
  private loadRoutes(): Promise<void> {
    let inForce!: () => void;
    const routed = new Promise<void>((resolve) => (inForce = resolve));
    this.loading = this.loading.then(
      () => this.apply(inForce),
      () => this.apply(inForce),
    );
    return Promise.race([routed, this.loading]);
  }

  private async apply(inForce?: () => void): Promise<void> {
    if (this.stopped) return;
    const { connectors, routes, rates } = await this.service.definitions();
    const wanted = new Map(connectors.filter((c) => c.enabled).map((c) => [c.id, c]));
    this.names_ = new Map(connectors.map((c) => [c.id, c.name]));
    const changed = (id: string, next: ConnectorDefinition | undefined) => !next || JSON.stringify(next) !== JSON.stringify(this.live.get(id)?.definition);
    this.starting = new Set([...wanted.values()].filter((d) => !this.live.has(d.id) || changed(d.id, d)).map((d) => d.name));
    // The routes first: one naming a connector that is (re)starting waits for it ("back in a moment"), as it would
    // while this load starts it.
    this.routeList = routes.filter((r) => r.enabled);
    this.rateList = rates;
    for (const l of this.changeListeners) l();
    inForce?.();
    for (const [id, l] of this.live) {
      const next = wanted.get(id);
      if (changed(id, next)) {
        this.live.delete(id);
        await l.connector.stop().catch((err) => this.logger.error({ err, connector: l.definition.name }, 'connector did not stop cleanly'));
      }
    }
    for (const d of wanted.values()) {
      if (this.live.has(d.id)) continue;
      const kind = this.kinds[d.kind];
      if (!kind) {
        this.logger.error({ connector: d.name, kind: d.kind }, 'no factory for this kind of connector; it stays stopped');
        continue;
      }
      let connector: Connector;
      try {
        connector = kind.create(d, this.env);
      } catch (err) {
        this.logger.error({ err, connector: d.name }, 'connector could not be made from its definition; it stays stopped');
        continue;
      }
      const entry: Live = {
        definition: d,
        connector,
        counted: connector,
        health: { state: 'CONNECTING', since: Date.now(), lastError: null },
        counters: zero(),
        samples: [],
      };
      entry.counted = this.counting(connector, entry);
      this.live.set(d.id, entry);
      this.starting.delete(d.name);
      const log = this.logger.child({ connector: d.name });
      const ctx = this.service.context(d.name, log, (state, lastError) => this.report(entry, state, lastError));
      const emit = ctx.emit;
      ctx.emit = async (events: CarrierEvent[]) => {
        await emit(events);
        for (const e of events) {
          if (e.kind === 'receipt') entry.counters.receipts++;
          else entry.counters.inbound++;
        }
      };
      try {
        await connector.start(ctx);
      } catch (err) {
        this.report(entry, 'DOWN', (err as Error).message);
        this.logger.error({ err, connector: d.name }, 'connector did not start');
      }
    }
    this.starting.clear();
    this.routeList = routes.filter((r) => r.enabled);
    this.rateList = rates;
    for (const l of this.changeListeners) l();
  }

  /** The connector as the router hands it out: its submits counted, every other method its own. */
  private counting(connector: Connector, entry: Live): Connector {
    const c = connector;
    const submit = async (batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]> => {
      const results = await c.submit(this.reveal ? await this.reveal(batch) : batch, fence);
      const n = entry.counters;
      n.submitted += batch.length;
      for (const r of results) {
        if (r.ok) n.accepted++;
        else {
          if (r.temporary) n.temporaryErrors++;
          else n.permanentErrors++;
          n.errorsByCode[r.code] = (n.errorsByCode[r.code] ?? 0) + 1;
        }
      }
      return results;
    };
    return {
      name: c.name,
      kind: c.kind,
      ...(c.receiptsNameMessage !== undefined && { receiptsNameMessage: c.receiptsNameMessage }),
      start: (ctx) => c.start(ctx),
      stop: () => c.stop(),
      submit,
      ...(c.due && { due: c.due.bind(c) }),
      ...(c.routes && { routes: c.routes.bind(c) }),
      ...(c.stats && { stats: c.stats.bind(c) }),
      ...(c.rcsCapability && { rcsCapability: c.rcsCapability.bind(c) }),
      ...(c.rcsBodyProblem && { rcsBodyProblem: c.rcsBodyProblem.bind(c) }),
      ...(c.revoke && { revoke: c.revoke.bind(c) }),
      ...(c.numberStatus && { numberStatus: c.numberStatus.bind(c) }),
    };
  }

  private report(entry: Live, state: ConnectorState, lastError: string | null): void {
    if (entry.health.state === state && entry.health.lastError === lastError) return;
    const wasUp = entry.health.state === 'UP';
    entry.health = { state, since: Date.now(), lastError: lastError ?? (state === 'UP' ? null : entry.health.lastError) };
    this.logger.info({ connector: entry.definition.name, state, lastError }, 'connector state');
    if (state === 'UP' && !wasUp && this.live.get(entry.definition.id) === entry) {
      const name = entry.definition.name;
      void this.service.releaseWaiting(name).catch((err) => this.logger.warn({ err, connector: name }, 'could not release the messages waiting for it'));
    }
  }

  /**
   * Declared once by the composition root: the text of messages shown masked (one-time passwords) is put back as they
   * are handed to a connector, and nowhere else.
   */
  revealWith(reveal: (batch: OutboundMessage[]) => Promise<OutboundMessage[]>): void {
    this.reveal = reveal;
  }

  /** Called after each load (the router recomputes its order). */
  onLoaded(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  routes(): readonly RouteDefinition[] {
    return this.routeList;
  }

  /** Every connector's rates, as last loaded. */
  rates(): readonly Rate[] {
    return this.rateList;
  }

  byId(id: string): Connector | undefined {
    return this.live.get(id)?.counted;
  }

  byName(name: string): Connector | undefined {
    for (const l of this.live.values()) if (l.definition.name === name) return l.counted;
    return undefined;
  }

  /** Whether the connector named so is being (re)started: not live this instant, but live again in a moment. */
  isStarting(name: string): boolean {
    return this.starting.has(name);
  }

  nameOf(id: string): string | undefined {
    return this.live.get(id)?.definition.name ?? this.names_.get(id);
  }

  health(id: string): ConnectorHealth | undefined {
    return this.live.get(id)?.health;
  }

  /** A running connector's live state on this node, by name. */
  state(name: string, now = Date.now()): ConnectorLiveState | undefined {
    const l = [...this.live.values()].find((x) => x.definition.name === name);
    if (!l) return undefined;
    l.samples.push([now, l.counters.accepted, l.counters.receipts]);
    while (l.samples.length > 2 && now - l.samples[0]![0] > 60_000) l.samples.shift();
    const [t0, s0, r0] = l.samples[0]!;
    const seconds = Math.max(1, (now - t0) / 1000);
    const stats = l.connector.stats?.() ?? {};
    return {
      state: l.health.state,
      since: l.health.since,
      lastError: l.health.lastError,
      binds: stats.binds ?? null,
      inFlight: stats.inFlight ?? null,
      unknownOutcomes: stats.unknownOutcomes ?? 0,
      repeatsRecognised: stats.repeatsRecognised ?? 0,
      counters: { ...l.counters, errorsByCode: { ...l.counters.errorsByCode } },
      submitsPerSecond: now === t0 ? 0 : Math.round(((l.counters.accepted - s0) / seconds) * 10) / 10,
      receiptsPerSecond: now === t0 ? 0 : Math.round(((l.counters.receipts - r0) / seconds) * 10) / 10,
    };
  }

  names(): string[] {
    return [...this.live.values()].map((l) => l.definition.name);
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
