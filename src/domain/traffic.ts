/**
 * How much traffic a key, an organisation and a client address may send: requests a second by route group, and
 * how long an address that keeps failing to authenticate is locked out.
 */
import type { Permission } from './tenancy.ts';

/** send: messages sent; lookup: number lookups; read: every other customer request; admin: the operator API. */
export type RouteGroup = 'send' | 'read' | 'lookup' | 'admin';
export const ROUTE_GROUPS: readonly RouteGroup[] = ['send', 'read', 'lookup', 'admin'];

/** Requests a second: for one API key, and for its whole organisation (the operator API: per client address). */
export interface GroupLimits {
  perKey: number;
  perOrganisation: number;
}

export type TrafficLimits = Readonly<Record<RouteGroup, GroupLimits>>;

export const DEFAULT_TRAFFIC_LIMITS: TrafficLimits = {
  send: { perKey: 500, perOrganisation: 1_000 },
  read: { perKey: 100, perOrganisation: 200 },
  lookup: { perKey: 50, perOrganisation: 100 },
  admin: { perKey: 200, perOrganisation: 200 },
};

/** The most requests a second a limit may allow (an organisation's own limits, through the operator API). */
export const MAX_PER_SECOND = 1_000_000;

/** Whether `n` can be a limit: a whole number of requests a second, from 1 to MAX_PER_SECOND. */
export function isPerSecondLimit(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= MAX_PER_SECOND;
}

export function groupOf(permission: Permission): RouteGroup {
  if (permission === 'messages:send') return 'send';
  if (permission === 'numbers:lookup') return 'lookup';
  return 'read';
}

/**
 * `send=500/1000,read=100/200,lookup=50/100,admin=200`: per key / per organisation, a second; one number sets both.
 * Groups left out keep `base`. Throws an Error saying what is wrong.
 */
export function parseTrafficLimits(text: string, base: TrafficLimits = DEFAULT_TRAFFIC_LIMITS): TrafficLimits {
  const out: Record<RouteGroup, GroupLimits> = { ...base };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(send|read|lookup|admin)=(\d{1,9})(?:\/(\d{1,9}))?$/.exec(part);
    if (!m) throw new Error(`"${part}" is not group=perKey[/perOrganisation] (groups: ${ROUTE_GROUPS.join(', ')})`);
    const perKey = Number(m[2]);
    const perOrganisation = m[3] === undefined ? perKey : Number(m[3]);
    if (perKey < 1 || perOrganisation < 1) throw new Error(`"${part}": limits are at least 1 a second`);
    out[m[1] as RouteGroup] = { perKey, perOrganisation };
  }
  return out;
}

/** Lockout of an address after its `strikes`-th burst of failed authentications: 1 min, doubling, at most 1 h. */
export function lockoutMs(strikes: number): number {
  return Math.min(3_600_000, 60_000 * 2 ** Math.max(0, strikes - 1));
}

/** Strikes are forgotten after a day without one. */
export const STRIKES_KEPT_MS = 86_400_000;
