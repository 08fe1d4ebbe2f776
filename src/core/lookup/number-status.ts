// The live part of a number lookup, answered by the operator network (an HLR query on a real one): whether the
// subscriber is reachable now and which network serves the number today. Prefix data cannot know either.
import type { NumberLookup } from './enrich.ts';

export interface LiveStatus {
  /** Attached to the network now (not absent, not barred); null when the network does not say. */
  reachable: boolean | null;
  /** Moved to another operator than the one its range was allocated to; null when unknown. */
  ported: boolean | null;
  /** The operator serving the number today (Google's naming, as `network`); null when unknown. */
  currentNetwork: string | null;
}

export const UNKNOWN_LIVE_STATUS: LiveStatus = Object.freeze({ reachable: null, ported: null, currentNetwork: null });

export interface NumberStatusProvider {
  /** Asks the network about a number already described from the static data (`lookupNumber`). */
  liveStatus(number: NumberLookup): Promise<LiveStatus>;
}
