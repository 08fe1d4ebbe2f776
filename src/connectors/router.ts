import { atLoss, candidateOrder, findRoute, orderRoutes, rankedOrder, type RoutableMessage } from '../domain/routing.ts';
import { RateBook } from '../domain/rates.ts';
import { toEuros } from '../domain/money.ts';
import type { NumberLookup } from '../core/lookup/enrich.ts';
import { type LiveAnswer, UNKNOWN_LIVE_STATUS } from '../core/lookup/number-status.ts';
import type { Connector, ConnectorLiveState, RcsCapabilityAnswer, RouteChoice, RoutedMoney, Router } from '../core/ports.ts';
import type { RouteDefinition } from '../core/routing/service.ts';
import type { ConnectorRegistry } from './registry.ts';
import { groupBy } from '../domain/group-by.ts';
import type { RcsBody, RcsBodyProblem } from '../domain/rcs.ts';

/**
 * Picks connectors for messages from the routes in the database: the first route that takes the message (by
 * priority, then the longest prefix), one of its connectors drawn by weight among those UP, then its other
 * connectors, then its failover list. A route whose connectors are all down gives no candidate: the message waits.
 * A connector drawn that runs on other nodes only (STANDBY here) leaves the message to them.
 */
export class ConnectorRouter implements Router {
  private ordered: RouteDefinition[] = [];
  private networksMatter = false;
  private rates = new RateBook([]);
  private quality: { deliveryRate(connector: string, network: string): number | null } | null = null;

  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly random: () => number = Math.random,
  ) {
    registry.onLoaded(() => {
      this.ordered = orderRoutes(registry.routes());
      this.rates = new RateBook(registry.rates());
      this.networksMatter = this.ordered.some((r) => r.match.mccMnc !== undefined || r.lookupBeforeSend);
    });
  }

  /** Where delivery rates come from, for routes by quality and routes with a `minDeliveryRate`. */
  judgeWith(quality: { deliveryRate(connector: string, network: string): number | null }): void {
    this.quality = quality;
  }

  /**
   * What a part costs through a connector: its rate in force at `at` for the message, else the route's
   * `costPerPart`, else null (not known).
   */
  costPerPart(connectorId: string, m: RoutableMessage, at: number, fallback: number | null): number | null {
    return this.rates.rateFor(connectorId, m, at)?.amount ?? fallback;
  }

  route(m: RoutableMessage, money?: RoutedMoney, exclude?: ReadonlySet<string>): RouteChoice {
    const route = findRoute(this.ordered, m);
    if (!route) return { route: null, costPerPart: null, lookupBeforeSend: false, names: [], candidates: [], elsewhere: null };
    const state = (id: string) => this.registry.health(id)?.state;
    const ids = [...new Set([...route.connectors.map((c) => c.connectorId), ...route.failover])];
    const at = money?.at ?? Date.now();
    const costOf = new Map(ids.map((id) => [id, this.costPerPart(id, m, at, route.costPerPart)]));
    const costs = new Map<string, number | null>();
    for (const id of ids) {
      const name = this.registry.nameOf(id);
      if (name !== undefined) costs.set(name, costOf.get(id)!);
    }
    // A message charged nothing (a share of a charge paid by another) is not weighed against a cost.
    const losingIds = new Set(money && !route.allowLoss && money.charged > 0 ? ids.filter((id) => atLoss(costOf.get(id)!, money.parts, money.charged)) : []);
    const names = ids.map((id) => this.registry.nameOf(id)).filter((n): n is string => n !== undefined);
    const excluded = (id: string) => exclude !== undefined && exclude.has(this.registry.nameOf(id) ?? id);
    const losing = ids.filter((id) => losingIds.has(id) && !excluded(id)).map((id) => this.registry.nameOf(id) ?? id);
    const live = (id: string) => !losingIds.has(id) && !excluded(id) && (state(id) === 'UP' || state(id) === 'STANDBY');
    const network = m.mccMnc ?? m.country ?? '';
    const judged = route.strategy === 'quality' || route.minDeliveryRate !== null;
    const rateOf = new Map(judged ? ids.map((id) => [id, this.quality?.deliveryRate(this.registry.nameOf(id) ?? id, network) ?? null]) : []);
    const qualities = new Map<string, number | null>();
    for (const [id, rate] of rateOf) qualities.set(this.registry.nameOf(id) ?? id, rate);
    // Connectors delivering below the route's floor are left out, unless every one left is.
    const min = route.minDeliveryRate;
    const weak = new Set(min === null ? [] : ids.filter((id) => live(id) && rateOf.get(id) !== null && rateOf.get(id)! < min));
    const dropWeak = weak.size > 0 && ids.some((id) => live(id) && !weak.has(id));
    const usable = (id: string) => live(id) && !(dropWeak && weak.has(id));
    // A connector running on other nodes takes its share of the draw, so weights hold across the cluster.
    const order =
      route.strategy === 'cost'
        ? rankedOrder(route, usable, (id) => costOf.get(id)!, true)
        : route.strategy === 'quality'
          ? // A connector not judged yet (too few receipts) counts as delivering all: it gets traffic to be judged on.
            rankedOrder(route, usable, (id) => rateOf.get(id) ?? 1, false)
          : candidateOrder(route, usable, this.random());
    const first = order[0] !== undefined ? costOf.get(order[0])! : route.costPerPart;
    const base = {
      route: route.name,
      costPerPart: first,
      lookupBeforeSend: route.lookupBeforeSend,
      names,
      strategy: route.strategy,
      maxAttempts: route.maxAttempts,
      costs,
      losing,
      ...(judged && { qualities, belowMinimum: dropWeak ? [...weak].map((id) => this.registry.nameOf(id) ?? id) : [] }),
    };
    const left = ids.filter((id) => !excluded(id));
    if (money && left.length > 0 && left.every((id) => losingIds.has(id))) {
      const cheapest = Math.min(...left.map((id) => costOf.get(id)!));
      const refused = `every connector of route ${route.name} would place it at a loss: the cheapest costs ${toEuros(cheapest * money.parts)} EUR for ${money.parts} part(s), ${toEuros(money.charged)} EUR was charged (the route does not set allowLoss)`;
      return { ...base, candidates: [], elsewhere: null, refused };
    }
    if (order[0] !== undefined && state(order[0]) === 'STANDBY') return { ...base, candidates: [], elsewhere: this.registry.nameOf(order[0]) ?? null };
    const candidates = order
      .filter((id) => state(id) === 'UP')
      .map((id) => this.registry.byId(id))
      .filter((c): c is Connector => c !== undefined);
    return { ...base, candidates, elsewhere: null };
  }

  usesNumberNetworks(): boolean {
    return this.networksMatter;
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

  /** What in an RCS body the connector RCS messages to this number would go through cannot carry, or null. */
  rcsBodyProblem(msisdn: string, body: RcsBody): { connector: string; problem: RcsBodyProblem } | null {
    const c = this.capable(probe('RCS', msisdn), 'rcsCapability');
    const problem = c?.rcsBodyProblem?.(body) ?? null;
    return c && problem ? { connector: c.name, problem } : null;
  }

  /** Withdraws undelivered messages at the connectors that carry them. */
  async revoke(messages: Array<{ id: string; connector: string | null }>): Promise<void> {
    const byConnector = groupBy(
      messages.filter((m) => m.connector),
      (m) => m.connector!,
      (m) => m.id,
    );
    for (const [name, ids] of byConnector) await this.connector(name)?.revoke?.(ids);
  }

  /** The live part of a lookup, from the connector lookups are routed to (type LOOKUP). */
  async liveStatus(number: NumberLookup): Promise<LiveAnswer> {
    const c = this.capable(probe('LOOKUP', number.msisdn, number.isoCountryCode, number.mccMnc), 'numberStatus');
    return c ? { status: await c.numberStatus!(number), connector: c.name } : { status: UNKNOWN_LIVE_STATUS, connector: null };
  }
}

function probe(type: string, recipient: string, country: string | null = null, mccMnc: string | null = null): RoutableMessage {
  return { type, recipient, channelId: '', organisationId: '', flow: '', country, mccMnc };
}
