// Number lookup: what libphonenumber says about a number, plus the operator its range was allocated to (Google's
// carrier prefix data) and that operator's MCC/MNC (mcc-mnc-list). Prefix data cannot know about number
// portability: `network` is the original operator of the range, not necessarily the subscriber's current one.
import { countryName, describeNumber, normaliseMsisdn, type NumberRange, numberRange } from '../../domain/phone.ts';
import type { PhoneFormats, PhoneType } from '../../domain/phone.ts';
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
const networkLookups = new Cache<string, Promise<NetworkLookup | null>>({ capacity: LOOKUP_CACHE_SIZE });
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

/**
 * The delivery-report `status.lookup` object, or null when the number's country is unknown: the lookup's country,
 * network and MCC/MNC, from the number's range alone (no formats). `range`: the number's `numberRange`, when the
 * caller has it already (parsing is most of the cost, and a send parses its recipient once).
 */
export function networkLookup(msisdn: string, range?: NumberRange): Promise<NetworkLookup | null> {
  const normalised = normaliseMsisdn(msisdn);
  const key = normalised.ok ? normalised.msisdn : String(msisdn);
  let lookup = networkLookups.get(key);
  if (!lookup) {
    lookup = networkOf(key, key === msisdn ? range : undefined);
    networkLookups.set(key, lookup);
    lookup.catch(() => networkLookups.delete(key));
  }
  return lookup;
}

async function networkOf(msisdn: string, known?: NumberRange): Promise<NetworkLookup | null> {
  const range = known ?? numberRange(msisdn);
  if (range.isoCountryCode === null) return null;
  const country = countryName(range.isoCountryCode);
  const { network, operator } = await carrierOf(msisdn, range, country);
  return { mccMnc: operator ? operator.mcc + operator.mnc : null, country, network };
}

/** As libphonenumber's own carrier mapper: only valid mobile (or pager) numbers have a carrier. */
async function carrierOf(msisdn: string, range: NumberRange, country: string | null): Promise<{ network: string | null; operator: OperatorRecord | null }> {
  if (!range.valid || range.countryPrefix === null || (range.type !== 'MOBILE' && range.type !== 'PAGER')) return { network: null, operator: null };
  const network = await originalCarrier(range.countryPrefix, msisdn.slice(range.countryPrefix.length));
  const operator = network !== null && range.isoCountryCode !== null && country !== null ? await operatorFor(range.isoCountryCode, network, country) : null;
  return { network, operator };
}

/**
 * Loads the operator list now rather than in the first lookup (about 20 ms). Each calling code's prefix table
 * still loads on its first use (5–30 ms).
 */
export async function preloadLookupData(): Promise<void> {
  await operators();
}

/** The MCC+MNC of the operator called `network` in country `iso` (mcc-mnc-list), or null when the list has none. */
export async function networkMccMnc(iso: string, network: string): Promise<string | null> {
  const country = countryName(iso);
  if (!country) return null;
  const operator = await operatorFor(iso, network, country);
  return operator ? operator.mcc + operator.mnc : null;
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

  // Fixed and special-rate ranges in the carrier table would otherwise borrow a mobile range's name.
  const { network, operator } = await carrierOf(msisdn, description, country);

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
