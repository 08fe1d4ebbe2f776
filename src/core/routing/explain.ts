import { numberRange } from '../domain/phone.ts';
import { fail } from '../errors.ts';
import { networkLookup } from '../lookup/enrich.ts';
import { normaliseRecipient } from '../messaging/sms.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { ConnectorLiveState, Router } from '../ports.ts';

export interface RouteQuestion {
  to: string;
  type?: string;
  channelId?: string;
  organisationId?: string;
  flow?: string;
}

export interface RouteAnswer {
  recipient: string;
  country: string | null;
  mccMnc: string | null;
  route: string | null;
  /** Micro-euros per part, when the route says. */
  costPerPart: number | null;
  /** The connectors a message would be tried on now, in order; the first takes it unless it errs. */
  candidates: Array<{ name: string; state: ConnectorLiveState['state'] | 'NOT_RUNNING' }>;
  /** Every connector the route names, up or not. */
  named: string[];
  reason: string;
}

/**
 * Which connector a message would use, and why: the same routing the dispatcher does, for a number, a type and
 * optionally a channel (whose organisation and flow then count).
 */
export async function explainRoute(router: Router, tenancy: TenancyService, q: RouteQuestion): Promise<RouteAnswer> {
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
  const choice = router.route({
    type,
    recipient,
    channelId: q.channelId ?? '',
    organisationId,
    flow,
    country: number.isoCountryCode,
    mccMnc: network?.mccMnc ?? null,
  });
  const candidates = choice.candidates.map((c) => ({ name: c.name, state: router.state(c.name)?.state ?? ('NOT_RUNNING' as const) }));
  const reason =
    choice.route === null
      ? 'no route takes this message: it would end UNDELIVERABLE / NOT_ROUTABLE'
      : choice.elsewhere !== null
        ? `route ${choice.route} takes it; ${choice.elsewhere} runs on other nodes (this one holds none of its binds): this node leaves it to them`
        : candidates.length === 0
        ? `route ${choice.route} takes it, but none of its connectors (${choice.names.join(', ')}) is up: it would wait`
        : `route ${choice.route} takes it; ${candidates[0]!.name} first${candidates.length > 1 ? `, then ${candidates.slice(1).map((c) => c.name).join(', ')} on a temporary error` : ''}`;
  return {
    recipient,
    country: number.isoCountryCode,
    mccMnc: network?.mccMnc ?? null,
    route: choice.route,
    costPerPart: choice.costPerPart,
    candidates,
    named: choice.names,
    reason,
  };
}
