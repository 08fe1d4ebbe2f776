// The live part of a number lookup, answered by the operator network (an HLR query, or a lookup provider such as
// Twilio Lookup or Infobip Number Lookup): whether the number exists and is reachable now, and which network serves it
// today. Prefix data cannot know any of it.
import type { NumberLookup } from './enrich.ts';

/** A mobile network: its MCC and MNC, and its name. Either may be unknown. */
export interface NetworkRef {
  mccMnc: string | null;
  name: string | null;
}

export interface LiveStatus {
  /** The network knows the number (false: no such subscriber); null when it does not say. */
  valid: boolean | null;
  /** Attached to the network now (not absent, not barred); null when the network does not say. */
  reachable: boolean | null;
  /** Moved to another operator than the one its range was allocated to; null when unknown. */
  ported: boolean | null;
  /** Roaming on a network abroad; null when unknown. */
  roaming: boolean | null;
  /** The network serving the number today; null when unknown. */
  currentNetwork: NetworkRef | null;
  /** The network the number's range was allocated to, as the live source says; null when unknown. */
  originalNetwork: NetworkRef | null;
  /**
   * True when the live source could not be asked and this is the number plan's answer instead (the connector's
   * `offlineFallback`): nothing in it comes from the network.
   */
  offline?: true;
}

export const UNKNOWN_LIVE_STATUS: LiveStatus = Object.freeze({
  valid: null,
  reachable: null,
  ported: null,
  roaming: null,
  currentNetwork: null,
  originalNetwork: null,
});

/** What the number plan alone says of a number, flagged `offline`: a lookup connector's answer when its provider fails. */
export function numberPlanStatus(number: NumberLookup): LiveStatus {
  const plan = number.network !== null || number.mccMnc !== null ? { mccMnc: number.mccMnc, name: number.network } : null;
  return { valid: number.valid, reachable: null, ported: null, roaming: null, currentNetwork: plan, originalNetwork: plan, offline: true };
}

/**
 * A lookup provider that could not answer (down, timed out, refused the credentials, answered nonsense). `reason`
 * says which, in words fit for the customer (no secret in it).
 */
export class LookupUnavailableError extends Error {
  constructor(
    readonly connector: string,
    readonly reason: string,
  ) {
    super(`lookup connector ${connector}: ${reason}`);
    this.name = 'LookupUnavailableError';
  }
}

/** The live status with the connector that answered it (null: no lookup connector is routed). */
export interface LiveAnswer {
  status: LiveStatus;
  connector: string | null;
}

export interface NumberStatusProvider {
  /**
   * Asks the network about a number already described from the static data (`lookupNumber`). Throws
   * LookupUnavailableError when the connector routed for lookups could not answer.
   */
  liveStatus(number: NumberLookup): Promise<LiveAnswer>;
}
