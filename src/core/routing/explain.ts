import { numberRange } from '../../domain/phone.ts';
import { fail } from '../errors.ts';
import { networkLookup } from '../lookup/enrich.ts';
import { normaliseRecipient } from '../messaging/prepare.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { ConnectorLiveState, Router } from '../ports.ts';

export interface RouteQuestion {
  to: string;
  type?: string;
  channelId?: string;
  organisationId?: string;
  flow?: string;
  /** Parts of the message (1 by default). */
  parts?: number;
  /** What the message is charged per part (micro-euros); by default the price list's price for its type and country. */
  pricePerPart?: number;
}

export interface RouteAnswer {
  recipient: string;
  country: string | null;
  mccMnc: string | null;
  route: string | null;
  /** Micro-euros per part through the first connector, when known. */
  costPerPart: number | null;
  strategy: string | null;
  /** What the message would be charged (micro-euros), for `parts` parts, when priced. */
  charged: number | null;
  parts: number;
  /** The connectors a message would be tried on now, in order; the first takes it unless it errs. */
  candidates: Array<{ name: string; state: ConnectorLiveState['state'] | 'NOT_RUNNING'; costPerPart: number | null; deliveryRate: number | null }>;
  /** Connectors left out because they deliver below the route's `minDeliveryRate`. */
  belowMinimum: Array<{ name: string; deliveryRate: number | null }>;
  /** The route's connectors left out because the message would be placed at a loss through them. */
  atLoss: Array<{ name: string; costPerPart: number | null }>;
  /** Why the route would refuse the message (every connector at a loss), or null. */
  refused: string | null;
  /** Every connector the route names, up or not. */
  named: string[];
  reason: string;
}

/**
 * Which connector a message would use, and why: the same routing the dispatcher does, for a number, a type and
 * optionally a channel (whose organisation and flow then count).
 */
export async function explainRoute(
  router: Router,
  tenancy: TenancyService,
  q: RouteQuestion,
  lookups?: { knownNetworks(msisdns: readonly string[]): Promise<Map<string, { currentMccMnc: string | null }>> },
  priceOf?: (type: string, country: string | null) => number | null,
): Promise<RouteAnswer> {
  const recipient = normaliseRecipient(q.to, 'to');
  const type = q.type ?? 'SMS';
  let organisationId = q.organisationId ?? '';
  let flow = q.flow ?? '';
  if (q.channelId) {
    const channel = await tenancy.getChannel(q.channelId);
    organisationId = channel.organisationId;
    flow = q.flow ?? channel.flow;
  }
  const number = numberRange(recipient);
  const network = number.valid ? await networkLookup(recipient, number) : null;
  if (!number.valid && type !== 'LOOKUP') fail('INVALID_PHONE_NUMBER', 'is not a valid phone number: such a message ends UNDELIVERABLE before routing', 'to');
  // As the dispatcher does: the network a live lookup found the number on, when one is kept, else its range's.
  const found =
    type !== 'LOOKUP' && lookups && router.usesNumberNetworks?.() ? ((await lookups.knownNetworks([recipient])).get(recipient)?.currentMccMnc ?? null) : null;
  const mccMnc = found ?? network?.mccMnc ?? null;
  const parts = q.parts ?? 1;
  const unit = q.pricePerPart ?? priceOf?.(type, number.isoCountryCode) ?? null;
  const charged = unit === null ? null : unit * parts;
  const choice = router.route(
    {
      type,
      recipient,
      channelId: q.channelId ?? '',
      organisationId,
      flow,
      country: number.isoCountryCode,
      mccMnc,
    },
    charged === null ? undefined : { parts, charged, at: Date.now() },
  );
  const costOf = (name: string) => choice.costs?.get(name) ?? null;
  const candidates = choice.candidates.map((c) => ({
    name: c.name,
    state: router.state(c.name)?.state ?? ('NOT_RUNNING' as const),
    costPerPart: costOf(c.name),
    deliveryRate: choice.qualities?.get(c.name) ?? null,
  }));
  const belowMinimum = (choice.belowMinimum ?? []).map((name) => ({ name, deliveryRate: choice.qualities?.get(name) ?? null }));
  const pct = (rate: number | null) => (rate === null ? 'not known yet' : `${Math.round(rate * 1000) / 10} % delivered`);
  const euros = (micros: number | null) => (micros === null ? 'unknown' : `${micros / 1_000_000} EUR`);
  const atLoss = (choice.losing ?? []).map((name) => ({ name, costPerPart: costOf(name) }));
  const why =
    choice.strategy === 'cost' && candidates.length > 0
      ? ` (cheapest up: ${euros(candidates[0]!.costPerPart)} a part)`
      : choice.strategy === 'quality' && candidates.length > 0
        ? ` (best delivering: ${pct(candidates[0]!.deliveryRate)})`
        : choice.strategy === 'weight' && candidates.length > 1
          ? ' (drawn by weight)'
          : '';
  const weakNote =
    belowMinimum.length > 0 ? `; left out below the route's minDeliveryRate: ${belowMinimum.map((b) => `${b.name} (${pct(b.deliveryRate)})`).join(', ')}` : '';
  const lossNote =
    atLoss.length > 0 && !choice.refused ? `; left out at a loss: ${atLoss.map((l) => `${l.name} (${euros(l.costPerPart)} a part)`).join(', ')}` : '';
  const reason =
    choice.route === null
      ? 'no route takes this message: it would end UNDELIVERABLE / NOT_ROUTABLE'
      : choice.refused
        ? `route ${choice.route} refuses it: ${choice.refused}; it would end UNDELIVERABLE / ROUTE_AT_LOSS`
        : choice.elsewhere !== null
          ? `route ${choice.route} takes it; ${choice.elsewhere} runs on other nodes (this one holds none of its binds): this node leaves it to them`
          : candidates.length === 0
            ? `route ${choice.route} takes it, but none of its connectors (${choice.names.join(', ')}) is up: it would wait`
            : `route ${choice.route} takes it (strategy ${choice.strategy ?? 'weight'}); ${candidates[0]!.name} first${why}${
                candidates.length > 1
                  ? `, then ${candidates
                      .slice(1)
                      .map((c) => c.name)
                      .join(', ')} on a temporary error`
                  : ''
              }`;
  const lookedUp =
    found !== null && found !== network?.mccMnc
      ? ` (routed by ${found}, the network a lookup found the number on, not its range's ${network?.mccMnc ?? 'unknown'} one)`
      : '';
  const ahead = choice.lookupBeforeSend ? '; a live lookup comes first (lookupBeforeSend)' : '';
  return {
    recipient,
    country: number.isoCountryCode,
    mccMnc,
    route: choice.route,
    costPerPart: candidates[0]?.costPerPart ?? choice.costPerPart,
    strategy: choice.strategy ?? null,
    charged,
    parts,
    candidates,
    atLoss,
    refused: choice.refused ?? null,
    named: choice.names,
    belowMinimum,
    reason: reason + lossNote + weakNote + lookedUp + ahead,
  };
}
