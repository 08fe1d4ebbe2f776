import { candidateOrder, findRoute, orderRoutes, type RoutableMessage } from '../core/domain/routing.ts';
import type { NumberLookup } from '../core/lookup/enrich.ts';
import { type LiveStatus, UNKNOWN_LIVE_STATUS } from '../core/lookup/number-status.ts';
import type { Connector, ConnectorLiveState, RcsCapabilityAnswer, RouteChoice, Router } from '../core/ports.ts';
import type { RouteDefinition } from '../core/routing/service.ts';
import type { ConnectorRegistry } from './registry.ts';
import { groupBy } from '../core/domain/group-by.ts';

/**
 * Picks connectors for messages from the routes in the database: the first route that takes the message (by
 * priority, then the longest prefix), one of its connectors drawn by weight among those UP, then its other
 * connectors, then its failover list. A route whose connectors are all down gives no candidate: the message waits.
 * A connector drawn that runs on other nodes only (STANDBY here) leaves the message to them.
 */
export class ConnectorRouter implements Router {
  private ordered: RouteDefinition[] = [];

  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly random: () => number = Math.random,
  ) {
    registry.onLoaded(() => {
      this.ordered = orderRoutes(registry.routes());
    });
  }

  route(m: RoutableMessage): RouteChoice {
    const route = findRoute(this.ordered, m);
    if (!route) return { route: null, costPerPart: null, names: [], candidates: [], elsewhere: null };
    const state = (id: string) => this.registry.health(id)?.state;
    // A connector running on other nodes takes its share of the draw, so weights hold across the cluster.
    const order = candidateOrder(route, (id) => state(id) === 'UP' || state(id) === 'STANDBY', this.random());
    const names = [...route.connectors.map((c) => c.connectorId), ...route.failover]
      .map((id) => this.registry.nameOf(id))
      .filter((n): n is string => n !== undefined);
    const base = { route: route.name, costPerPart: route.costPerPart, names };
    if (order[0] !== undefined && state(order[0]) === 'STANDBY') return { ...base, candidates: [], elsewhere: this.registry.nameOf(order[0]) ?? null };
    const candidates = order
      .filter((id) => state(id) === 'UP')
      .map((id) => this.registry.byId(id))
      .filter((c): c is Connector => c !== undefined);
    return { ...base, candidates, elsewhere: null };
  }

  connector(name: string): Connector | undefined {
    return this.registry.byName(name);
  }

  /** Whether the connector named so is being restarted (its definition changed): back in a moment. */
  isStarting(name: string): boolean {
    return this.registry.isStarting(name);
  }

  state(name: string): ConnectorLiveState | undefined {
    return this.registry.state(name);
  }

  /** The first connector routed for this kind of request that can answer it. */
  private capable<K extends keyof Connector>(m: RoutableMessage, capability: K): Connector | undefined {
    return this.route(m).candidates.find((c) => typeof c[capability] === 'function');
  }

  /** RCS capability of a number, asked of the connector RCS messages to it would go through. */
  async rcsCapability(msisdn: string): Promise<RcsCapabilityAnswer> {
    const c = this.capable(probe('RCS', msisdn), 'rcsCapability');
    return c ? c.rcsCapability!(msisdn) : { capable: false, features: [] };
  }

  /** Withdraws undelivered messages at the connectors that carry them. */
  async revoke(messages: Array<{ id: string; connector: string | null }>): Promise<void> {
    const byConnector = groupBy(messages.filter((m) => m.connector), (m) => m.connector!, (m) => m.id);
    for (const [name, ids] of byConnector) await this.connector(name)?.revoke?.(ids);
  }

  /** The live part of a lookup, from the connector lookups are routed to (type LOOKUP). */
  async liveStatus(number: NumberLookup): Promise<LiveStatus> {
    const c = this.capable(probe('LOOKUP', number.msisdn, number.isoCountryCode), 'numberStatus');
    return c ? c.numberStatus!(number) : UNKNOWN_LIVE_STATUS;
  }
}

function probe(type: string, recipient: string, country: string | null = null): RoutableMessage {
  return { type, recipient, channelId: '', organisationId: '', flow: '', country, mccMnc: null };
}
