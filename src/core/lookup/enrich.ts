// Number lookup: what libphonenumber says about a number, plus the operator its range was allocated to (Google's
// carrier prefix data) and that operator's MCC/MNC (mcc-mnc-list). Prefix data cannot know about number
// portability: `network` is the original operator of the range, not necessarily the subscriber's current one.
import { countryName, describeNumber, normaliseMsisdn } from '../domain/phone.ts';
import type { PhoneFormats, PhoneType } from '../domain/phone.ts';
import { originalCarrier } from './carrier-prefixes.ts';
import { Cache } from '../cache.ts';
import { buildOperatorIndex, findOperator } from './operator-match.ts';
import type { OperatorIndex, OperatorRecord } from './operator-match.ts';

export interface NumberLookup {
  msisdn: string;
  valid: boolean;
  possible: boolean;
  type: PhoneType | null;
  /** English country name, e.g. "France". */
  country: string | null;
  isoCountryCode: string | null;
  /** Country calling code as digits, e.g. "33". */
  countryPrefix: string | null;
  formats: PhoneFormats | null;
  /** Operator the number range was allocated to, as Google's data names it ("Orange France", "Vodafone"). */
  network: string | null;
  mcc: string | null;
  mnc: string | null;
  mccMnc: string | null;
}

/** The `status.lookup` object of a delivery report: `{ mccMnc: "20820", country: "France", network: "Bouygues" }`. */
export interface NetworkLookup {
  mccMnc: string | null;
  country: string | null;
  network: string | null;
}

export const LOOKUP_CACHE_SIZE = 10_000;

const lookups = new Cache<string, Promise<NumberLookup>>({ capacity: LOOKUP_CACHE_SIZE });
let operatorIndex: Promise<OperatorIndex> | undefined;
// Keyed by country and network name: bounded by the names in Google's data (a few thousand), so no eviction.
const operatorsByName = new Map<string, OperatorRecord | null>();

function operators(): Promise<OperatorIndex> {
  operatorIndex ??= import('mcc-mnc-list').then(
    (list) => buildOperatorIndex(list.all() as OperatorRecord[]),
    (error: unknown) => {
      operatorIndex = undefined;
      throw error;
    },
  );
  return operatorIndex;
}

/**
 * Looks a number up. Accepts the international forms `normaliseMsisdn` accepts (`33612345678`, `+33 6 12…`,
 * `0033…`); anything else comes back `valid: false` with nulls. Results are cached (LRU) and frozen.
 */
export function lookupNumber(msisdn: string): Promise<NumberLookup> {
  const normalised = normaliseMsisdn(msisdn);
  const key = normalised.ok ? normalised.msisdn : String(msisdn);
  let lookup = lookups.get(key);
  if (!lookup) {
    lookup = enrich(key);
    lookups.set(key, lookup);
    lookup.catch(() => lookups.delete(key));
  }
  return lookup;
}

/** The delivery-report `status.lookup` object, or null when the number's country is unknown. */
export async function networkLookup(msisdn: string): Promise<NetworkLookup | null> {
  const { country, network, mccMnc } = await lookupNumber(msisdn);
  if (country === null) return null;
  return { mccMnc, country, network };
}

/**
 * Loads the operator list now rather than in the first lookup (about 20 ms). Each calling code's prefix table
 * still loads on its first use (5–30 ms).
 */
export async function preloadLookupData(): Promise<void> {
  await operators();
}

async function operatorFor(iso: string, network: string, country: string): Promise<OperatorRecord | null> {
  const key = `${iso}\u0000${network}`;
  let operator = operatorsByName.get(key);
  if (operator === undefined) {
    operator = findOperator(await operators(), iso, network, country);
    operatorsByName.set(key, operator);
  }
  return operator;
}

async function enrich(msisdn: string): Promise<NumberLookup> {
  const description = describeNumber(msisdn);
  const { isoCountryCode, countryPrefix } = description;
  const country = isoCountryCode === null ? null : countryName(isoCountryCode);

  let network: string | null = null;
  let operator: OperatorRecord | null = null;
  // As libphonenumber's own carrier mapper: only valid mobile (or pager) numbers have a carrier; fixed and
  // special-rate ranges in the same table would otherwise borrow a mobile range's name.
  if (description.valid && countryPrefix !== null && (description.type === 'MOBILE' || description.type === 'PAGER')) {
    network = await originalCarrier(countryPrefix, msisdn.slice(countryPrefix.length));
    if (network !== null && isoCountryCode !== null && country !== null) {
      operator = await operatorFor(isoCountryCode, network, country);
    }
  }

  return Object.freeze({
    msisdn,
    valid: description.valid,
    possible: description.possible,
    type: description.type,
    country,
    isoCountryCode,
    countryPrefix,
    formats: description.formats === null ? null : Object.freeze({ ...description.formats }),
    network,
    mcc: operator?.mcc ?? null,
    mnc: operator?.mnc ?? null,
    mccMnc: operator ? operator.mcc + operator.mnc : null,
  });
}
