/** Routing rules: which messages a route takes, in which order routes are tried, how weights split traffic. */

/** The fields of a message routing looks at. */
export interface RoutableMessage {
  type: string;
  /** Digits, international form. */
  recipient: string;
  channelId: string;
  organisationId: string;
  flow: string;
  /** ISO 3166 alpha-2 of the recipient, when known. */
  country: string | null;
  /** MCC+MNC of the recipient's network, when known. */
  mccMnc: string | null;
}

/** What a route takes; an absent field matches everything. */
export interface RouteMatch {
  /** Destination prefix (digits, international form). */
  prefix?: string;
  country?: string;
  mccMnc?: string;
  /** SMS, RCS, VOICE, or LOOKUP (number status queries). */
  type?: string;
  flow?: string;
  organisationId?: string;
  channelId?: string;
}

export interface WeightedConnector {
  connectorId: string;
  weight: number;
}

export interface RouteRule {
  id: string;
  name: string;
  /** Lower first. */
  priority: number;
  match: RouteMatch;
  connectors: WeightedConnector[];
  /** Tried in this order when none of `connectors` can take the message. */
  failover: string[];
}

export function routeMatches(match: RouteMatch, m: RoutableMessage): boolean {
  if (match.prefix !== undefined && !m.recipient.startsWith(match.prefix)) return false;
  if (match.country !== undefined && m.country !== match.country) return false;
  if (match.mccMnc !== undefined && m.mccMnc !== match.mccMnc) return false;
  if (match.type !== undefined && m.type !== match.type) return false;
  if (match.flow !== undefined && m.flow !== match.flow) return false;
  if (match.organisationId !== undefined && m.organisationId !== match.organisationId) return false;
  if (match.channelId !== undefined && m.channelId !== match.channelId) return false;
  return true;
}

/** The order routes are tried in: priority, then the longest prefix, then the most specific match. */
export function orderRoutes<R extends RouteRule>(routes: readonly R[]): R[] {
  const specificity = (r: RouteRule) => Object.values(r.match).filter((v) => v !== undefined).length;
  return [...routes].sort(
    (a, b) =>
      a.priority - b.priority || (b.match.prefix?.length ?? 0) - (a.match.prefix?.length ?? 0) || specificity(b) - specificity(a) || a.id.localeCompare(b.id),
  );
}

/** The first route that takes the message, or null. */
export function findRoute<R extends RouteRule>(ordered: readonly R[], m: RoutableMessage): R | null {
  for (const r of ordered) if (routeMatches(r.match, m)) return r;
  return null;
}

/**
 * The connectors to try for one message, in order: one of `available` drawn by weight (`random` in [0, 1)), then the
 * route's other available connectors by weight, then its available failover connectors in their order. Connectors
 * not available (down, throttled, unknown) are left out.
 */
export function candidateOrder(route: RouteRule, available: (connectorId: string) => boolean, random: number): string[] {
  const pool = route.connectors.filter((c) => c.weight > 0 && available(c.connectorId));
  const out: string[] = [];
  const total = pool.reduce((s, c) => s + c.weight, 0);
  if (total > 0) {
    let point = random * total;
    let first = pool[pool.length - 1]!;
    for (const c of pool) {
      if (point < c.weight) {
        first = c;
        break;
      }
      point -= c.weight;
    }
    out.push(first.connectorId);
    for (const c of [...pool].sort((a, b) => b.weight - a.weight)) if (c !== first) out.push(c.connectorId);
  }
  for (const id of route.failover) if (!out.includes(id) && available(id)) out.push(id);
  return out;
}

/** How a route chooses among its connectors: drawn by weight, the cheapest first, or the best delivering first. */
export type RouteStrategy = 'weight' | 'cost' | 'quality';
export const ROUTE_STRATEGIES: readonly RouteStrategy[] = ['weight', 'cost', 'quality'];

export function toStrategy(s: string): RouteStrategy {
  return (ROUTE_STRATEGIES as readonly string[]).includes(s) ? (s as RouteStrategy) : 'weight';
}

/**
 * The connectors to try for one message, best first by `score` (the lower the better when `lowerFirst`: a cost; else
 * the higher: a delivery rate): the route's available connectors with a score in its order, those without one after
 * them, equal scores by weight (the higher first, then as the route lists them), then the available failover
 * connectors in their order. Connectors of weight 0 are off, as in the draw.
 */
export function rankedOrder(
  route: RouteRule,
  available: (connectorId: string) => boolean,
  score: (connectorId: string) => number | null,
  lowerFirst: boolean,
): string[] {
  const pool = route.connectors.filter((c) => c.weight > 0 && available(c.connectorId)).map((c, i) => ({ c, i, s: score(c.connectorId) }));
  pool.sort((a, b) => {
    if (a.s !== null && b.s !== null && a.s !== b.s) return lowerFirst ? a.s - b.s : b.s - a.s;
    if ((a.s === null) !== (b.s === null)) return a.s === null ? 1 : -1;
    return b.c.weight - a.c.weight || a.i - b.i;
  });
  const out = pool.map((p) => p.c.connectorId);
  for (const id of route.failover) if (!out.includes(id) && available(id)) out.push(id);
  return out;
}

/** Whether placing a message charged `charged` (micro-euros) at `costPerPart` for `parts` parts loses money. */
export function atLoss(costPerPart: number | null, parts: number, charged: number): boolean {
  return costPerPart !== null && costPerPart * parts > charged;
}
